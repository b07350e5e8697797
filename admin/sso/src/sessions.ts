/**
 * Sessions of signed-in users (service `sessionVerifier`): the cookie holds `gws_<random>`, the database its SHA-256.
 * A session the administration API accepts acts as its user's workspace-user key with every scope: the user's roles
 * decide (the same RBAC as their keys). Refused with a 401 saying why: unknown, revoked (logout or an admin), or older
 * than the organisation's `session_settings.max_session_ttl` (sign in again).
 */
import { createHash, randomBytes } from 'node:crypto';
import { users, workspaceMembers, workspaces } from '@gateway/admin-identity';
import { type SessionSettingsService, sessionExpired } from '@gateway/admin-settings';
import { ALL_SCOPES, and, asc, type Caller, type Database, eq, Errors, isNull, type KeyVerifier } from '@gateway/sdk';
import { ssoSessions } from './tables.ts';

export const SESSION_PREFIX = 'gws_';
export const SESSION_COOKIE = 'gw_session';

const hash = (secret: string) => createHash('sha256').update(secret).digest('hex');

export interface NewSession {
  readonly id: string;
  readonly secret: string;
}

export class SessionStore implements KeyVerifier {
  constructor(
    private readonly database: Database,
    private readonly sessionSettings: () => SessionSettingsService | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  async create(organisationId: string, userId: string): Promise<NewSession> {
    const secret = `${SESSION_PREFIX}${randomBytes(32).toString('base64url')}`;
    const id = crypto.randomUUID();
    await this.database.insert(ssoSessions, { id, organisation_id: organisationId, user_id: userId, token_hash: hash(secret), created_at: this.now() });
    return { id, secret };
  }

  /** Ends a session by its secret (logout); false when there was none to end. */
  async revokeSecret(secret: string): Promise<boolean> {
    if (!secret.startsWith(SESSION_PREFIX)) return false;
    return (await this.database.update(ssoSessions, { revoked_at: this.now() }, (c) => and(eq(c.token_hash, hash(secret)), isNull(c.revoked_at)))) > 0;
  }

  /** Ends a session by id (an administrator's revocation); false when the organisation has no such open session. */
  async revoke(organisationId: string, id: string): Promise<boolean> {
    return (await this.database.update(ssoSessions, { revoked_at: this.now() }, (c) => and(eq(c.organisation_id, organisationId), eq(c.id, id), isNull(c.revoked_at)))) > 0;
  }

  /** The caller of a session cookie's secret; rejects with a 401 saying why it is refused. */
  async verify(secret: string): Promise<Caller> {
    if (!secret.startsWith(SESSION_PREFIX) || secret.length > 128) throw Errors.unauthorized('Invalid session: sign in again');
    const [session] = await this.database.select(ssoSessions, { where: (c) => eq(c.token_hash, hash(secret)), limit: 1, fresh: true });
    if (!session) throw Errors.unauthorized('Invalid session: sign in again');
    if (session.revoked_at !== null) throw Errors.unauthorized('The session was ended (logged out or revoked): sign in again');
    const settings = await this.sessionSettings()?.get(session.organisation_id);
    if (settings && sessionExpired(session.created_at, settings, this.now()))
      throw Errors.unauthorized(`The session is older than the organisation's max_session_ttl of ${settings.max_session_ttl} s: sign in again`);
    const [user] = await this.database.select(users, { where: (c) => and(eq(c.organisation_id, session.organisation_id), eq(c.id, session.user_id)), limit: 1, fresh: true });
    if (!user) throw Errors.unauthorized('The user of this session no longer exists');
    return Object.freeze({
      apiKeyId: `session:${session.id.slice(0, 28)}`,
      organisationId: session.organisation_id,
      workspaceId: await this.homeWorkspace(session.organisation_id, user.id),
      scopes: Object.freeze([ALL_SCOPES]),
      keyType: 'workspace-user',
      userId: user.id,
    });
  }

  /** The workspace a session acts in where a route needs one: the user's first membership, else the organisation's first. */
  private async homeWorkspace(organisationId: string, userId: string): Promise<string> {
    const [member] = await this.database.select(workspaceMembers, { where: (c) => eq(c.user_id, userId), orderBy: (c) => [asc(c.created_at)], limit: 1 });
    if (member) return member.workspace_id;
    const [first] = await this.database.select(workspaces, { where: (c) => eq(c.organisation_id, organisationId), orderBy: (c) => [asc(c.created_at), asc(c.id)], limit: 1 });
    return first?.id ?? '';
  }
}

/** The session secret of a Cookie header, if any. */
export function sessionCookie(cookie: string | null | undefined): string | undefined {
  if (!cookie) return undefined;
  for (const part of cookie.split(';')) {
    const eqAt = part.indexOf('=');
    if (eqAt > 0 && part.slice(0, eqAt).trim() === SESSION_COOKIE) return part.slice(eqAt + 1).trim() || undefined;
  }
  return undefined;
}
