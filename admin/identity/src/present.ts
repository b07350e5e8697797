/** Stored rows as the API shows them: ISO times, no token hashes. */
import { iso } from '@gateway/admin-kit';
import type { Row } from '@gateway/sdk';
import type { UserRow, WorkspaceRow } from './find.ts';
import type { OrganisationRole, userInvites, WorkspaceRole } from './tables.ts';

export interface WorkspaceView {
  object: 'workspace';
  id: string;
  slug: string;
  name: string;
  description: string | null;
  status: WorkspaceRow['status'];
  defaults: WorkspaceRow['defaults'];
  created_at: string | null;
  updated_at: string | null;
  archived_at: string | null;
  last_reset_at: string | null;
}

export function workspaceView(w: WorkspaceRow): WorkspaceView {
  return {
    object: 'workspace',
    id: w.id,
    slug: w.slug,
    name: w.name,
    description: w.description,
    status: w.status,
    defaults: w.defaults ?? {},
    created_at: iso(w.created_at),
    updated_at: iso(w.updated_at),
    archived_at: iso(w.archived_at),
    last_reset_at: iso(w.last_reset_at),
  };
}

/** A membership as seen from the user's side. */
export interface UserWorkspaceView {
  id: string;
  slug: string;
  name: string;
  status: WorkspaceRow['status'];
  role: WorkspaceRole;
}

export interface UserView {
  object: 'user';
  id: string;
  email: string;
  name: string | null;
  role: OrganisationRole;
  created_at: string | null;
  updated_at: string | null;
  workspaces: UserWorkspaceView[];
}

export function userView(u: UserRow, memberships: UserWorkspaceView[]): UserView {
  return {
    object: 'user',
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    created_at: iso(u.created_at),
    updated_at: iso(u.updated_at),
    workspaces: memberships,
  };
}

/** A member as seen from the workspace's side. */
export interface MemberView {
  object: 'workspace_user';
  id: string;
  user_id: string;
  email: string;
  name: string | null;
  role: WorkspaceRole;
  organisation_role: OrganisationRole;
  created_at: string | null;
  updated_at: string | null;
}

export function memberView(u: UserRow, m: { role: WorkspaceRole; created_at: number; updated_at: number | null }): MemberView {
  return {
    object: 'workspace_user',
    id: u.id,
    user_id: u.id,
    email: u.email,
    name: u.name,
    role: m.role,
    organisation_role: u.role,
    created_at: iso(m.created_at),
    updated_at: iso(m.updated_at),
  };
}

export type InviteRow = Row<typeof userInvites>;
export type InviteStatus = 'pending' | 'accepted' | 'expired';

export function inviteStatus(i: InviteRow, now = Date.now()): InviteStatus {
  return i.status === 'accepted' ? 'accepted' : i.expires_at <= now ? 'expired' : 'pending';
}

export interface InviteView {
  object: 'invite';
  id: string;
  email: string;
  role: OrganisationRole;
  workspaces: { id: string; role: WorkspaceRole }[];
  status: InviteStatus;
  expires_at: string | null;
  created_at: string | null;
  accepted_at: string | null;
  user_id: string | null;
}

/** Never the token hash. */
export function inviteView(i: InviteRow, now = Date.now()): InviteView {
  return {
    object: 'invite',
    id: i.id,
    email: i.email,
    role: i.role,
    workspaces: i.workspaces.map((w) => ({ id: w.workspace_id, role: w.role })),
    status: inviteStatus(i, now),
    expires_at: iso(i.expires_at),
    created_at: iso(i.created_at),
    accepted_at: iso(i.accepted_at),
    user_id: i.accepted_user_id,
  };
}
