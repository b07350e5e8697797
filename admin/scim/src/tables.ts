/**
 * What SCIM keeps beside the identity tables: a provisioned user's SCIM attributes (userName as sent, externalId,
 * active), groups (with the workspace and role a mapping gives them) and their members.
 */
import { WORKSPACE_ROLES } from '@gateway/admin-identity';
import { col, defineTable, type Migration } from '@gateway/sdk';

/** One row per provisioned user; `id` is the identity `users.id`. */
export const scimUsers = defineTable(
  'scim_users',
  {
    id: col.id(),
    organisation_id: col.ref(),
    user_name: col.string(320),
    external_id: col.string(255).nullable(),
    given_name: col.string(255).nullable(),
    family_name: col.string(255).nullable(),
    active: col.bool().default(true),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'external_id'] }, { columns: ['organisation_id', 'user_name'] }] },
);

export const scimGroups = defineTable(
  'scim_groups',
  {
    id: col.id(),
    organisation_id: col.ref(),
    display_name: col.string(255),
    external_id: col.string(255).nullable(),
    /** Set by POST /scim/workspaces: members of the group are members of this workspace with `role`. */
    workspace_id: col.ref().nullable(),
    role: col.enum(WORKSPACE_ROLES).nullable(),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'display_name'], unique: true }, { columns: ['organisation_id', 'external_id'] }] },
);

export const scimGroupMembers = defineTable(
  'scim_group_members',
  {
    id: col.id(),
    organisation_id: col.ref(),
    group_id: col.ref(),
    user_id: col.ref(),
  },
  { indexes: [{ columns: ['group_id', 'user_id'], unique: true }, { columns: ['user_id'] }] },
);

export const scimMigrations: Migration[] = [{ id: 'scim/0001-users-groups', tables: [scimUsers, scimGroups, scimGroupMembers] }];
