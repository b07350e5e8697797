/** Field rules shared by the routes: e-mail addresses and roles (case-insensitive), each failure a 400 naming the field. */
import { Errors } from '@gateway/sdk';
import { ORGANISATION_ROLES, type OrganisationRole, WORKSPACE_ROLES, type WorkspaceRole } from './tables.ts';

// Deliberately plain: one @, no spaces, a dot in the domain. Deliverability is the mail server's business.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A valid address, trimmed and lower-cased (how it is stored and compared). */
export function parseEmail(raw: string, param: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > 320 || !EMAIL.test(email)) throw Errors.badRequest(`${param} must be a valid e-mail address`, param);
  return email;
}

function parseRole<const T extends readonly string[]>(values: T, raw: string, param: string): T[number] {
  const role = raw.trim().toLowerCase();
  const found = values.find((v) => v === role);
  if (found === undefined) throw Errors.badRequest(`${param} must be one of ${values.join(', ')}`, param);
  return found;
}

export const parseOrganisationRole = (raw: string, param: string): OrganisationRole => parseRole(ORGANISATION_ROLES, raw, param);
export const parseWorkspaceRole = (raw: string, param: string): WorkspaceRole => parseRole(WORKSPACE_ROLES, raw, param);

/** Rank of a workspace or organisation role, for "the higher of two". */
const RANK: Record<OrganisationRole | WorkspaceRole, number> = { member: 0, manager: 1, admin: 2, owner: 3 };
export function higherRole<T extends OrganisationRole | WorkspaceRole>(a: T, b: T): T {
  return RANK[b] > RANK[a] ? b : a;
}
