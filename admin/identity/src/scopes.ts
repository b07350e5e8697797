/** The scopes of the identity routes (`*` on a key grants them all). */
export const SCOPES = [
  'workspaces.read',
  'workspaces.write',
  'workspaces.delete',
  'users.read',
  'users.write',
  'workspace_users.read',
  'workspace_users.write',
] as const;
export type IdentityScope = (typeof SCOPES)[number];
