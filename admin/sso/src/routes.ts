/**
 * The SSO routes (docs/admin/sso.md). Public, authenticated by what they carry: GET /sso/login (an e-mail address: its
 * domain picks the organisation), GET /sso/callback (the provider's redirect), POST /sso/logout (the session cookie);
 * GET /sso/status says whether this deployment signs in with SSO at all (the web console offers it only then).
 * Administration: GET and PUT /sso/oidc (the organisation's provider), DELETE /sso/sessions/:sessionId (revocation).
 */
import { users } from '@gateway/admin-identity';
import type { SecretBox } from '@gateway/admin-kit';
import { domainFor, emailDomains } from '@gateway/admin-settings';
import { type AdminRoute, and, type Database, eq, Errors, lt, type PublicAdminRoute } from '@gateway/sdk';
import { client, type OidcClients, pkce, type ProviderRecord } from './oidc.ts';
import { SESSION_COOKIE, sessionCookie, type SessionStore } from './sessions.ts';
import type { SsoSettings } from './settings.ts';
import { ssoLogins, ssoProviders } from './tables.ts';

export const SSO_SCOPES = ['sso.read', 'sso.write'] as const;

/** A login must come back within this long. */
const LOGIN_TTL_MS = 10 * 60_000;

export interface SsoDeps {
  readonly database: Database;
  readonly settings: SsoSettings;
  readonly sessions: SessionStore;
  readonly clients: OidcClients;
  readonly box: () => SecretBox;
}

const sealedAt = (id: string) => ({ table: 'sso_providers', id, field: 'client_secret' });

/** The one organisation whose e-mail domains cover `email`; 403 when none does (or several do). */
async function organisationOf(database: Database, email: string): Promise<string> {
  const rows = await database.select(emailDomains, {});
  const byOrg = new Map<string, typeof rows>();
  for (const row of rows) byOrg.set(row.organisation_id, [...(byOrg.get(row.organisation_id) ?? []), row]);
  const matches = [...byOrg].filter(([, domains]) => domainFor(domains, email)).map(([org]) => org);
  if (matches.length !== 1) throw Errors.forbidden(`No organisation signs in users of ${email.slice(email.lastIndexOf('@') + 1) || 'that address'} with SSO`);
  return matches[0] as string;
}

async function providerOf(deps: SsoDeps, organisationId: string): Promise<ProviderRecord> {
  const [row] = await deps.database.select(ssoProviders, { where: (c) => eq(c.organisation_id, organisationId), limit: 1, fresh: true });
  if (!row) throw Errors.forbidden('The organisation has no OpenID provider configured (PUT /v1/sso/oidc)');
  return { id: row.id, issuer: row.issuer, clientId: row.client_id, clientSecret: deps.box().open(row.client_secret, sealedAt(row.id)), updatedAt: row.updated_at };
}

function requireCallback(deps: SsoDeps): string {
  if (!deps.settings.callbackUrl) throw Errors.forbidden('SSO is not set up on this deployment: SSO_CALLBACK_URL is not set');
  return deps.settings.callbackUrl;
}

function cookie(deps: SsoDeps, value: string, maxAge?: number): string {
  return [
    `${SESSION_COOKIE}=${value}`,
    'Path=/v1',
    'HttpOnly',
    'SameSite=Lax',
    ...(deps.settings.secureCookie ? ['Secure'] : []),
    ...(maxAge === undefined ? [] : [`Max-Age=${maxAge}`]),
  ].join('; ');
}

async function login(deps: SsoDeps, query: URLSearchParams): Promise<Response> {
  const callback = requireCallback(deps);
  const email = query.get('email')?.trim().toLowerCase() ?? '';
  if (!email.includes('@') || email.length > 320) throw Errors.badRequest('Give the e-mail address to sign in with: ?email=', 'email');
  const organisationId = await organisationOf(deps.database, email);
  const config = await deps.clients.config(await providerOf(deps, organisationId));
  const verifier = pkce.verifier();
  const nonce = pkce.nonce();
  const state = crypto.randomUUID();
  const now = Date.now();
  await deps.database.delete(ssoLogins, (c) => lt(c.created_at, now - LOGIN_TTL_MS));
  await deps.database.insert(ssoLogins, { id: state, organisation_id: organisationId, code_verifier: verifier, nonce, created_at: now });
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: callback,
    scope: deps.settings.scopes,
    code_challenge: await pkce.challenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    login_hint: email,
  });
  return new Response(null, { status: 302, headers: { location: url.href } });
}

async function callback(deps: SsoDeps, query: URLSearchParams): Promise<Response> {
  const callbackUrl = requireCallback(deps);
  const state = query.get('state') ?? '';
  if (query.get('error')) throw Errors.unauthorized(`The identity provider refused the sign-in: ${query.get('error')}${query.get('error_description') ? ` (${query.get('error_description')})` : ''}`);
  const [pending] = state ? await deps.database.select(ssoLogins, { where: (c) => eq(c.id, state), limit: 1, fresh: true }) : [];
  if (!pending || pending.created_at < Date.now() - LOGIN_TTL_MS) throw Errors.unauthorized('Unknown or expired sign-in (state): start again at /v1/sso/login');
  // Single use: a replayed callback finds nothing.
  await deps.database.delete(ssoLogins, (c) => eq(c.id, state));
  const config = await deps.clients.config(await providerOf(deps, pending.organisation_id));
  let claims: Record<string, unknown>;
  try {
    const tokens = await client.authorizationCodeGrant(config, new URL(`${callbackUrl}?${query.toString()}`), {
      pkceCodeVerifier: pending.code_verifier,
      expectedState: state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    claims = { ...(tokens.claims() ?? {}) };
    if (typeof claims.email !== 'string') claims = { ...claims, ...(await client.fetchUserInfo(config, tokens.access_token, String(claims.sub))) };
  } catch (error) {
    throw Errors.unauthorized(`The sign-in could not be completed: ${error instanceof Error ? error.message : String(error)}`);
  }
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  if (!email) throw Errors.unauthorized('The identity provider gave no e-mail address');
  if (claims.email_verified === false) throw Errors.forbidden('The e-mail address is not verified by the identity provider');
  // The address must belong to the organisation the sign-in started for (a provider may serve several domains).
  if ((await organisationOf(deps.database, email)) !== pending.organisation_id) throw Errors.forbidden(`${email} does not belong to this organisation`);
  let [user] = await deps.database.select(users, { where: (c) => and(eq(c.organisation_id, pending.organisation_id), eq(c.email, email)), limit: 1, fresh: true });
  if (!user) {
    if (!deps.settings.createUsers) throw Errors.forbidden(`${email} is not a user of the organisation (SSO_CREATE_USERS=OFF): ask an administrator for an invitation`);
    const id = crypto.randomUUID();
    const name = typeof claims.name === 'string' ? claims.name.slice(0, 255) : null;
    await deps.database.insert(users, { id, organisation_id: pending.organisation_id, email, name, role: 'member', created_at: Date.now() });
    [user] = await deps.database.select(users, { where: (c) => eq(c.id, id), limit: 1, fresh: true });
  }
  if (!user) throw Errors.internal('The user just created is not there');
  const session = await deps.sessions.create(pending.organisation_id, user.id);
  const headers: Record<string, string> = { 'set-cookie': cookie(deps, session.secret), 'cache-control': 'no-store' };
  if (deps.settings.afterLoginUrl) return new Response(null, { status: 302, headers: { ...headers, location: deps.settings.afterLoginUrl } });
  return Response.json({ object: 'sso_session', id: session.id, user_id: user.id, email: user.email, organisation_id: pending.organisation_id }, { headers });
}

async function logout(deps: SsoDeps, headers: Headers): Promise<Response> {
  const secret = sessionCookie(headers.get('cookie'));
  const ended = secret ? await deps.sessions.revokeSecret(secret) : false;
  return Response.json({ object: 'sso_logout', ended }, { headers: { 'set-cookie': cookie(deps, '', 0) } });
}

function validProvider(body: unknown): { issuer: string; client_id: string; client_secret: string } {
  const b = (body ?? {}) as Record<string, unknown>;
  for (const field of ['issuer', 'client_id', 'client_secret'])
    if (typeof b[field] !== 'string' || (b[field] as string).trim() === '') throw Errors.badRequest(`${field} is required`, field);
  const unknown = Object.keys(b).find((k) => !['issuer', 'client_id', 'client_secret'].includes(k));
  if (unknown) throw Errors.badRequest(`Unknown field ${unknown}`, unknown);
  try {
    const url = new URL(b.issuer as string);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme');
  } catch {
    throw Errors.badRequest('issuer must be an http(s) URL', 'issuer');
  }
  return { issuer: (b.issuer as string).trim(), client_id: (b.client_id as string).trim(), client_secret: b.client_secret as string };
}

export function ssoRoutes(deps: SsoDeps): AdminRoute[] {
  const pub = (method: PublicAdminRoute['method'], path: string, handle: PublicAdminRoute['handle']): PublicAdminRoute => ({ public: true, method, path, handle });
  return [
    pub('GET', '/sso/login', (req) => login(deps, req.query)),
    pub('GET', '/sso/callback', (req) => callback(deps, req.query)),
    pub('POST', '/sso/logout', (req) => logout(deps, req.headers)),
    // Deployment-wide only: whether an address's organisation has a provider is known once the address is given.
    pub('GET', '/sso/status', () => Response.json({ object: 'sso_status', enabled: deps.settings.callbackUrl !== undefined })),
    {
      method: 'GET',
      path: '/sso/oidc',
      scope: 'sso.read',
      role: 'admin',
      async handle(req) {
        const [row] = await deps.database.select(ssoProviders, { where: (c) => eq(c.organisation_id, req.caller.organisationId), limit: 1, fresh: true });
        if (!row) throw Errors.notFound('No OpenID provider is configured');
        return Response.json({ object: 'sso_oidc_provider', issuer: row.issuer, client_id: row.client_id, client_secret_set: true, updated_at: new Date(row.updated_at).toISOString() });
      },
    },
    {
      method: 'PUT',
      path: '/sso/oidc',
      scope: 'sso.write',
      role: 'admin',
      async handle(req) {
        const body = validProvider(req.body);
        const organisationId = req.caller.organisationId;
        const [existing] = await deps.database.select(ssoProviders, { where: (c) => eq(c.organisation_id, organisationId), limit: 1, fresh: true });
        const id = existing?.id ?? crypto.randomUUID();
        const sealed = deps.box().seal(body.client_secret, sealedAt(id));
        const now = Math.max(Date.now(), (existing?.updated_at ?? 0) + 1);
        if (existing) await deps.database.update(ssoProviders, { issuer: body.issuer, client_id: body.client_id, client_secret: sealed, updated_at: now }, (c) => eq(c.id, id));
        else await deps.database.insert(ssoProviders, { id, organisation_id: organisationId, issuer: body.issuer, client_id: body.client_id, client_secret: sealed, created_at: now, updated_at: now });
        req.audit = { resource: 'sso_oidc_provider', resourceId: id, after: { issuer: body.issuer, client_id: body.client_id } };
        return Response.json({ object: 'sso_oidc_provider', issuer: body.issuer, client_id: body.client_id, client_secret_set: true }, { status: existing ? 200 : 201 });
      },
    },
    {
      method: 'DELETE',
      path: '/sso/sessions/:sessionId',
      scope: 'sso.write',
      role: 'admin',
      async handle(req) {
        if (!(await deps.sessions.revoke(req.caller.organisationId, req.params.sessionId as string))) throw Errors.notFound('No such open session');
        req.audit = { resource: 'sso_session', resourceId: req.params.sessionId };
        return new Response(null, { status: 204 });
      },
    },
  ];
}
