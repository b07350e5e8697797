import { col, defineTable, type Migration } from '@gateway/sdk';

export const organisations = defineTable('organisations', {
  id: col.id(),
  name: col.string(255),
  slug: col.string(255).unique(),
  created_at: col.timestamp().default(Date.now),
});

export const workspaces = defineTable(
  'workspaces',
  {
    id: col.id(),
    organisation_id: col.ref(),
    name: col.string(255),
    slug: col.string(255),
    status: col.enum(['active', 'archived']).default('active'),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'slug'], unique: true }] },
);

/** People of an organisation, with their organisation role. */
export const users = defineTable(
  'users',
  {
    id: col.id(),
    organisation_id: col.ref(),
    email: col.string(320),
    name: col.string(255).nullable(),
    role: col.enum(['owner', 'admin', 'member']).default('member'),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'email'], unique: true }] },
);

/** A user's role in a workspace. */
export const workspaceMembers = defineTable(
  'workspace_members',
  {
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    user_id: col.ref(),
    role: col.enum(['admin', 'manager', 'member']).default('member'),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['workspace_id', 'user_id'], unique: true }, { columns: ['user_id'] }] },
);

export const identityMigrations: Migration[] = [
  { id: 'identity/0001-organisations-workspaces', tables: [organisations, workspaces] },
  { id: 'identity/0002-users-members', tables: [users, workspaceMembers] },
];
