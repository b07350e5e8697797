import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type CryptoKey, SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { HttpDeps } from '../http.ts';
import { input } from '../testing.ts';
import { createJwt } from './jwt.ts';

let server: ReturnType<typeof Bun.serve>;
let base: string;
let jwksFetches = 0;
let signing: CryptoKey;
let stranger: CryptoKey;
const deps: HttpDeps = { fetch: (i, init) => fetch(i, init) };
const check = createJwt(deps);

beforeAll(async () => {
  const known = await generateKeyPair('RS256', { extractable: true });
  const unknown = await generateKeyPair('RS256', { extractable: true });
  signing = known.privateKey;
  stranger = unknown.privateKey;
  const jwk = { ...(await exportJWK(known.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === '/jwks.json') {
        jwksFetches++;
        return Response.json({ keys: [jwk] });
      }
      if (path === '/broken') return new Response('nope', { status: 500 });
      return new Response('not found', { status: 404 });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(() => server.stop(true));

async function token(opts: { key?: CryptoKey; kid?: string; aud?: string; iss?: string; exp?: number | string } = {}) {
  return new SignJWT({ scope: 'chat' })
    .setProtectedHeader({ alg: 'RS256', kid: opts.kid ?? 'k1' })
    .setSubject('user-1')
    .setIssuer(opts.iss ?? 'https://issuer.test')
    .setAudience(opts.aud ?? 'gateway')
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? '1h')
    .sign(opts.key ?? signing);
}

const withHeader = (value: string, name = 'authorization') => input('hi', { headers: new Headers({ [name]: value }) });
const params = () => ({ jwksUri: `${base}/jwks.json`, audience: 'gateway', issuer: 'https://issuer.test' });

describe('default.jwt', () => {
  test('a valid token passes; the key set is fetched once and cached', async () => {
    const before = jwksFetches;
    const r = await check.run(withHeader(`Bearer ${await token()}`), params());
    expect(r.verdict).toBe(true);
    expect(r.data).toMatchObject({ alg: 'RS256', kid: 'k1', subject: 'user-1', issuer: 'https://issuer.test' });
    expect((await check.run(withHeader(await token()), params())).verdict).toBe(true); // no Bearer prefix
    expect(jwksFetches - before).toBe(1);
  });

  test('an expired token fails', async () => {
    const r = await check.run(withHeader(`Bearer ${await token({ exp: Math.floor(Date.now() / 1000) - 60 })}`), params());
    expect(r.verdict).toBe(false);
    expect(r.data).toMatchObject({ code: 'ERR_JWT_EXPIRED' });
  });

  test('a wrong audience or issuer fails', async () => {
    const aud = await check.run(withHeader(`Bearer ${await token({ aud: 'someone-else' })}`), params());
    expect(aud.verdict).toBe(false);
    expect(aud.data).toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' });
    expect((aud.data as { explanation: string }).explanation).toContain('aud');
    const iss = await check.run(withHeader(`Bearer ${await token({ iss: 'https://evil.test' })}`), params());
    expect(iss.verdict).toBe(false);
  });

  test('an unknown kid, or a token signed by another key, fails', async () => {
    const unknownKid = await check.run(withHeader(`Bearer ${await token({ kid: 'k9', key: stranger })}`), params());
    expect(unknownKid.verdict).toBe(false);
    expect(unknownKid.data).toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    const forged = await check.run(withHeader(`Bearer ${await token({ key: stranger })}`), params());
    expect(forged.verdict).toBe(false);
    expect(forged.data).toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  });

  test('a missing header or garbage fails; headerKey picks the header', async () => {
    expect((await check.run(input('hi'), params())).data).toMatchObject({ code: 'missing_header' });
    expect((await check.run(withHeader('Bearer not-a-jwt'), params())).verdict).toBe(false);
    const custom = await check.run(withHeader(await token(), 'x-user-token'), { ...params(), headerKey: 'X-User-Token' });
    expect(custom.verdict).toBe(true);
  });

  test('algorithms restricts alg', async () => {
    const r = await check.run(withHeader(await token()), { ...params(), algorithms: ['ES256'] });
    expect(r.verdict).toBe(false);
    expect(r.data).toMatchObject({ code: 'ERR_JOSE_ALG_NOT_ALLOWED' });
  });

  test('a key set that cannot be fetched, or a refused host, is a failed verdict with the error', async () => {
    const t = await token();
    const broken = await check.run(withHeader(t), { jwksUri: `${base}/broken` });
    expect(broken.verdict).toBe(false);
    expect(broken.data).toMatchObject({ error: { message: expect.stringContaining('could not get the key set') } });
    const guarded = createJwt({ ...deps, guardUrl: () => Promise.reject(new Error('private address')) });
    const refused = await guarded.run(withHeader(t), { jwksUri: `${base}/jwks.json` });
    expect(refused.verdict).toBe(false);
    expect(refused.data).toMatchObject({ error: { kind: 'forbidden', message: expect.stringContaining('private address') } });
  });

  test('bad parameters', () => {
    expect(check.validate({})).toEqual(['jwksUri: is required']);
    expect(check.validate({ jwksUri: 'file:///etc/keys.json' })).toEqual(['jwksUri: must be an http or https URL']);
    expect(check.validate({ jwksUri: `${base}/jwks.json`, algorithms: ['HS256'] })[0]).toStartWith('algorithms.0: must be one of RS256');
    expect(check.validate({ jwksUri: `${base}/jwks.json`, cacheMaxAge: -1 })).toEqual(['cacheMaxAge: must be >= 0']);
    expect(check.validate({ jwksUri: `${base}/jwks.json`, audience: [] })[0]).toStartWith('audience:');
  });
});
