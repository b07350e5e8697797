/**
 * The callers of the RBAC matrix: one key per role and key type, in the order of the matrix's columns.
 *
 * Workspace A holds an admin, a manager and a member (organisation members); workspace B a member. The owner and
 * the organisation admin have workspace-user keys in A (an owner or admin is admin of every workspace).
 */
export const PRINCIPALS = [
  'owner', // workspace-user key `*` of the organisation owner (key in A)
  'orgAdmin', // workspace-user key `*` of an organisation admin (key in A)
  'orgService', // organisation-service key `*`
  'orgNoScope', // organisation-service key with no scope at all: every route must refuse it (403)
  'serviceA', // workspace-service key `*` of A
  'serviceB', // workspace-service key `*` of B
  'adminA', // workspace-user key `*` of an organisation member who is admin of A
  'managerA', // … manager of A
  'memberA', // … member of A
  'memberB', // … member of B (no role in A)
] as const;

export type PrincipalName = (typeof PRINCIPALS)[number];

/** The short column headers of the matrix (same order as PRINCIPALS). */
export const COLUMNS: Readonly<Record<PrincipalName, string>> = {
  owner: 'own',
  orgAdmin: 'adm',
  orgService: 'osv',
  orgNoScope: 'ons',
  serviceA: 'wsA',
  serviceB: 'wsB',
  adminA: 'aAd',
  managerA: 'aMg',
  memberA: 'aMb',
  memberB: 'bMb',
};

/** The people behind the workspace-user keys, with their roles. */
export const PEOPLE = {
  owner: { role: 'owner', workspace: 'A', workspaceRole: null },
  orgAdmin: { role: 'admin', workspace: 'A', workspaceRole: null },
  adminA: { role: 'member', workspace: 'A', workspaceRole: 'admin' },
  managerA: { role: 'member', workspace: 'A', workspaceRole: 'manager' },
  memberA: { role: 'member', workspace: 'A', workspaceRole: 'member' },
  memberB: { role: 'member', workspace: 'B', workspaceRole: 'member' },
} as const satisfies Partial<Record<PrincipalName, { role: string; workspace: 'A' | 'B'; workspaceRole: string | null }>>;

export type PersonName = keyof typeof PEOPLE;

export function isPerson(who: PrincipalName): who is PersonName {
  return who in PEOPLE;
}
