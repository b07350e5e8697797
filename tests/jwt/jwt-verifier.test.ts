// The JWT verifier (admin/jwt-auth) with keys generated here and a JWKS served on loopback, fetched through the real
// outbound guard: every refusal's message, key rotation (an unknown key id fetches the JWKS again, at most once per
// cooldown), a static public key, and the guard refusing an untrusted JWKS host.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { JwtVerifier, readJwtSettings, tokenKeyId, type WorkspaceDirectory } from '@gateway/admin-jwt-auth';
import { HostGuard } from '@gateway/pipeline';
import { GatewayError } from '@gateway/sdk';
import { exportJWK, exportSPKI, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

const ISSUER = 'https://idp.test';
const AUDIENCE = 'gateway';
const WORKSPACE = 'ws-jwt-1';
const NOW = Date.UTC(2030, 0, 1); // a fixed clock: expiry is tested without waiting
const SEC = Math.floor(NOW / 1000);

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
const directory: WorkspaceDirectory = {
  find: async (id) =>
    id === WORKSPACE ? { organisationId: 'org-1', archived: false } : id === 'ws-archived' ? { organisationId: 'org-1', archived: true } : undefined,
};

let es: KeyPair;
let rs: KeyPair;
let other: KeyPair;
let rotated: KeyPair;
let ps: KeyPair;
let published: JWK[] = [];
let fetches = 0;
let server: ReturnType<typeof Bun.serve>;
const guard = new HostGuard(['127.0.0.1']);

const publicJwk = async (pair: KeyPair, kid: string, alg: string): Promise<JWK> => ({ ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' });

beforeAll(async () => {
  es = await generateKeyPair('ES256', { extractable: true });
  rs = await generateKeyPair('RS256', { extractable: true });
  other = await generateKeyPair('ES256', { extractable: true });
  rotated = await generateKeyPair('ES256', { extractable: true });
  ps = await generateKeyPair('PS256', { extractable: true });
  published = [await publicJwk(es, 'k-es', 'ES256'), await publicJwk(rs, 'k-rs', 'RS256')];
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      if (new URL(req.url).pathname === '/broken') return new Response('nope', { status: 500 });
      fetches++;
      return Response.json({ keys: published });
    },
  });
});
afterAll(() => server?.stop(true));

const jwksUrl = (path = '/jwks') => `http://127.0.0.1:${server.port}${path}`;

function settings(extra: Record<string, string> = {}) {
  const s = readJwtSettings({
    JWT_JWKS_URL: jwksUrl(),
    JWT_ISSUER: ISSUER,
    JWT_AUDIENCE: AUDIENCE,
    JWT_ALGORITHMS: 'ES256,RS256',
    JWT_CLOCK_TOLERANCE_SECONDS: '0',
    ...extra,
  });
  if (!s) throw new Error('settings expected');
  return s;
}

const verifierFor = (extra: Record<string, string> = {}, g: HostGuard = guard) => JwtVerifier.create(settings(extra), directory, { guard: g, now: () => NOW });

async function sign(claims: JWTPayload, opts: { key?: KeyPair; kid?: string | null; alg?: string } = {}): Promise<string> {
  const alg = opts.alg ?? 'ES256';
  const header: { alg: string; kid?: string } = { alg };
  if (opts.kid !== null) header.kid = opts.kid ?? 'k-es';
  return new SignJWT({ workspace_id: WORKSPACE, scope: 'completions.write', ...claims })
    .setProtectedHeader(header)
    .setIssuer(claims.iss ?? ISSUER)
    .setAudience(claims.aud ?? AUDIENCE)
    .setSubject(claims.sub ?? 'user-7')
    .setIssuedAt(SEC - 10)
    .setExpirationTime(claims.exp ?? SEC + 600)
    .sign((opts.key ?? es).privateKey);
}

/** The refusal `fn` rejects with (a GatewayError), for its status, code and message. */
async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(error)}`);
  return error;
}

describe('JWT verifier', () => {
  test('a valid token gives the caller of its claims; a repeat is answered from memory', async () => {
    const v = await verifierFor();
    const token = await sign({ scope: 'completions.write embeddings.write' });
    const caller = await v.verify(token);
    expect(caller).toEqual({
      apiKeyId: tokenKeyId(ISSUER, 'user-7'),
      organisationId: 'org-1',
      workspaceId: WORKSPACE,
      scopes: ['completions.write', 'embeddings.write'],
      keyType: 'workspace-user',
      userId: 'user-7',
    });
    expect(v.peek(token)).toBe(caller);
    expect(await v.verify(token)).toBe(caller);
    expect(v.stats).toEqual({ verified: 1, cacheHits: 2, refused: 0 });
    // RS256 is allowed too; scopes as an array; a token without its user claim acts as a workspace service.
    const rsToken = await sign({ scope: undefined, scp: ['proxy.write'] }, { key: rs, kid: 'k-rs', alg: 'RS256' });
    const rsVerifier = await verifierFor({ JWT_SCOPES_CLAIM: 'scp', JWT_USER_CLAIM: 'uid' });
    const service = await rsVerifier.verify(rsToken);
    expect(service.scopes).toEqual(['proxy.write']);
    expect(service.keyType).toBe('workspace-service');
    expect(service.userId).toBeNull();
  });

  test('every refusal is a 401 invalid_token saying what is wrong', async () => {
    const v = await verifierFor();
    const cases: [Promise<string>, RegExp][] = [
      [sign({ exp: SEC - 60 }), /^Invalid JWT: the token expired at 2029-12-31T23:59:00\.000Z$/],
      [sign({ aud: 'someone-else' }), /^Invalid JWT: wrong audience "someone-else": expected "gateway"$/],
      [sign({ iss: 'https://evil.test' }), /^Invalid JWT: wrong issuer "https:\/\/evil\.test": expected "https:\/\/idp\.test"$/],
      [sign({ nbf: SEC + 3600 }), /^Invalid JWT: the token is not valid before 2030-01-01T01:00:00\.000Z$/],
      [sign({}, { key: other }), /^Invalid JWT: bad signature$/],
      [sign({}, { kid: 'k-nobody' }), /^Invalid JWT: unknown key id "k-nobody"$/],
      [sign({}, { key: ps, kid: 'k-rs', alg: 'PS256' }), /^Invalid JWT: algorithm "PS256" is not allowed: allowed are ES256, RS256$/],
      [sign({ workspace_id: undefined }), /^Invalid JWT: the token has no "workspace_id" claim/],
      [sign({ workspace_id: 'ws-nowhere' }), /^Invalid JWT: the workspace "ws-nowhere" of the "workspace_id" claim does not exist$/],
      [sign({ workspace_id: 'ws-archived' }), /^Invalid JWT: the workspace "ws-archived" of the "workspace_id" claim is archived$/],
      [Promise.resolve('eyJhbGciOiJFUzI1NiJ9.e30.c2ln'), /^Invalid JWT: /],
      [Promise.resolve('eyJub3QganNvbg.e30.c2ln'), /^Invalid JWT: malformed token: its header is not base64url-encoded JSON$/],
    ];
    for (const [token, message] of cases) {
      const error = await refusal(v.verify(await token));
      expect({ status: error.status, code: error.code, type: error.type }).toEqual({ status: 401, code: 'invalid_token', type: 'authentication_error' });
      expect(error.message).toMatch(message);
    }
    // A token without exp is refused: a decoupled data plane never accepts a token forever.
    const noExp = await new SignJWT({ workspace_id: WORKSPACE })
      .setProtectedHeader({ alg: 'ES256', kid: 'k-es' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .sign(es.privateKey);
    expect((await refusal(v.verify(noExp))).message).toBe('Invalid JWT: the token has no "exp" claim');
    expect(v.stats.verified).toBe(0);
  });

  test('key rotation: a new key id fetches the JWKS again once; within the cooldown an unknown key id fetches nothing', async () => {
    // Cooldown 0: every unknown key id may fetch once.
    published = [await publicJwk(es, 'k-es', 'ES256')];
    const v = await verifierFor({ JWT_JWKS_COOLDOWN_MS: '0' });
    const start = fetches;
    await v.verify(await sign({}));
    expect(fetches).toBe(start + 1);
    // The issuer rotates: the new key is published and tokens name it.
    published = [await publicJwk(rotated, 'k-new', 'ES256'), await publicJwk(es, 'k-es', 'ES256')];
    const caller = await v.verify(await sign({}, { key: rotated, kid: 'k-new' }));
    expect(caller.workspaceId).toBe(WORKSPACE);
    expect(fetches).toBe(start + 2);
    // A key id the JWKS does not hold costs exactly one more fetch, then the refusal names it.
    expect((await refusal(v.verify(await sign({}, { kid: 'k-ghost' })))).message).toBe('Invalid JWT: unknown key id "k-ghost"');
    expect(fetches).toBe(start + 3);

    // A long cooldown: the JWKS was just fetched, so an unknown key id is refused without fetching again.
    published = [await publicJwk(es, 'k-es', 'ES256')];
    const slow = await verifierFor({ JWT_JWKS_COOLDOWN_MS: '600000' });
    await slow.verify(await sign({}));
    const after = fetches;
    published = [await publicJwk(rotated, 'k-new', 'ES256'), await publicJwk(es, 'k-es', 'ES256')];
    for (let i = 0; i < 5; i++)
      expect((await refusal(slow.verify(await sign({ jti: String(i) }, { key: rotated, kid: 'k-new' })))).message).toBe('Invalid JWT: unknown key id "k-new"');
    expect(fetches).toBe(after);
  });

  test('a static public key (PEM or JWK) verifies without any JWKS', async () => {
    const pem = await exportSPKI(es.publicKey);
    const start = fetches;
    for (const key of [pem, JSON.stringify(await publicJwk(es, 'k-es', 'ES256'))]) {
      const s = readJwtSettings({ JWT_PUBLIC_KEY: key, JWT_ISSUER: ISSUER, JWT_AUDIENCE: `other,${AUDIENCE}`, JWT_ALGORITHMS: 'ES256' });
      if (!s) throw new Error('settings expected');
      const v = await JwtVerifier.create(s, directory, { now: () => NOW });
      expect((await v.verify(await sign({}))).userId).toBe('user-7');
      expect((await refusal(v.verify(await sign({}, { key: other })))).message).toBe('Invalid JWT: bad signature');
    }
    expect(fetches).toBe(start);
  });

  test('the JWKS URL goes through the outbound guard: an untrusted private host is refused as 503 jwks_unavailable', async () => {
    const v = await verifierFor({}, new HostGuard([]));
    const start = fetches;
    const error = await refusal(v.verify(await sign({})));
    expect({ status: error.status, code: error.code }).toEqual({ status: 503, code: 'jwks_unavailable' });
    expect(error.message).toMatch(/JWKS could not be fetched.*private or metadata address/);
    expect(fetches).toBe(start);
    const broken = await verifierFor({ JWT_JWKS_URL: jwksUrl('/broken') });
    const down = await refusal(broken.verify(await sign({})));
    expect({ status: down.status, code: down.code, retryable: down.retryable }).toEqual({ status: 503, code: 'jwks_unavailable', retryable: true });
  });

  test('settings: issuer and audience required, symmetric and unknown algorithms refused', () => {
    expect(readJwtSettings({})).toBeUndefined();
    const bad = (env: Record<string, string>) => {
      try {
        readJwtSettings({ JWT_JWKS_URL: 'https://idp.test/jwks', JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE, ...env });
      } catch (e) {
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(bad({ JWT_ISSUER: '' })).toMatch(/^JWT_ISSUER is required/);
    expect(bad({ JWT_AUDIENCE: ' ' })).toMatch(/^JWT_AUDIENCE is required/);
    expect(bad({ JWT_ALGORITHMS: 'HS256' })).toMatch(/^JWT_ALGORITHMS names "HS256"/);
    expect(bad({ JWT_ALGORITHMS: 'none' })).toMatch(/^JWT_ALGORITHMS names "none"/);
    expect(bad({ JWT_PUBLIC_KEY: 'x' })).toMatch(/are both set/);
    expect(bad({ JWT_JWKS_URL: 'ftp://idp.test/jwks' })).toMatch(/must be an http\(s\) URL/);
    expect(bad({})).toBe('accepted');
  });
});
