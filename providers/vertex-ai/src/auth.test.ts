import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { GatewayError } from '@gateway/sdk';
import { decodeProtectedHeader, exportPKCS8, generateKeyPair, jwtVerify } from 'jose';
import { accessToken, CLOUD_PLATFORM_SCOPE, DEFAULT_TOKEN_URI, JWT_BEARER_GRANT, parseServiceAccount, type ServiceAccount, signAssertion } from './auth.ts';

let publicKey: CryptoKey;
let pem: string;
beforeAll(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true });
  publicKey = pair.publicKey;
  pem = await exportPKCS8(pair.privateKey);
});

function thrown(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('did not throw');
}

describe('parseServiceAccount', () => {
  test('reads the key JSON (object or string); token_uri defaults to Google’s', () => {
    const sa = parseServiceAccount({ client_email: 'a@p.iam.gserviceaccount.com', private_key: pem, private_key_id: 'k1', project_id: 'p', type: 'service_account' });
    expect(sa).toEqual({ client_email: 'a@p.iam.gserviceaccount.com', private_key: pem, private_key_id: 'k1', project_id: 'p', token_uri: DEFAULT_TOKEN_URI });
    expect(parseServiceAccount(JSON.stringify({ client_email: 'a@b', private_key: pem, token_uri: 'https://oauth2.googleapis.com/token' })).token_uri).toBe(
      'https://oauth2.googleapis.com/token',
    );
  });

  test('refuses what is not a usable service account, and token endpoints that are not https (loopback http allowed)', () => {
    expect(thrown(() => parseServiceAccount('nope')).status).toBe(400);
    expect(thrown(() => parseServiceAccount({ private_key: pem })).message).toContain('client_email');
    expect(thrown(() => parseServiceAccount({ client_email: 'a@b', private_key: 'secret' })).message).toContain('private_key');
    expect(thrown(() => parseServiceAccount({ client_email: 'a@b', private_key: pem, token_uri: 'http://169.254.169.254/token' })).message).toContain('https');
    expect(thrown(() => parseServiceAccount({ client_email: 'a@b', private_key: pem, token_uri: 'file:///etc/passwd' })).status).toBe(400);
    expect(parseServiceAccount({ client_email: 'a@b', private_key: pem, token_uri: 'http://127.0.0.1:9/token' }).token_uri).toBe('http://127.0.0.1:9/token');
    expect(parseServiceAccount({ client_email: 'a@b', private_key: pem, token_uri: 'http://localhost:9/token' }).token_uri).toBe('http://localhost:9/token');
  });
});

test('the assertion: RS256, kid, iss, aud, scope, one hour', async () => {
  const sa: ServiceAccount = { client_email: 'svc@proj.iam.gserviceaccount.com', private_key: pem, private_key_id: 'kid-7', token_uri: 'https://oauth2.googleapis.com/token' };
  const now = Math.floor(Date.now() / 1000);
  const jwt = await signAssertion(sa, now);
  expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'kid-7' });
  const { payload } = await jwtVerify(jwt, publicKey, { issuer: sa.client_email, audience: sa.token_uri, algorithms: ['RS256'] });
  expect(payload.scope).toBe(CLOUD_PLATFORM_SCOPE);
  expect(payload.iat).toBe(now);
  expect(payload.exp).toBe(now + 3600);
});

test('an unreadable private key is a 400', async () => {
  const sa: ServiceAccount = { client_email: 'x@y', private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', token_uri: 'https://oauth2.googleapis.com/token' };
  const error = await signAssertion(sa, 0).catch((e: unknown) => e);
  expect(error instanceof GatewayError && error.status === 400).toBe(true);
});

describe('accessToken against a token endpoint', () => {
  let server: ReturnType<typeof Bun.serve>;
  let calls = 0;
  let mode: 'ok' | 'refuse' | 'fail' | 'empty' = 'ok';
  beforeAll(() => {
    server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        calls++;
        const form = new URLSearchParams(await request.text());
        if (form.get('grant_type') !== JWT_BEARER_GRANT) return Response.json({ error: 'unsupported_grant_type' }, { status: 400 });
        await new Promise((r) => setTimeout(r, 20));
        if (mode === 'refuse') return Response.json({ error: 'invalid_grant', error_description: 'Invalid JWT Signature.' }, { status: 400 });
        if (mode === 'fail') return new Response('oops', { status: 503 });
        if (mode === 'empty') return Response.json({ token_type: 'Bearer' });
        return Response.json({ access_token: `tok-${calls}`, expires_in: 3600, token_type: 'Bearer' });
      },
    });
  });
  afterAll(() => server.stop(true));
  const account = (email: string): ServiceAccount => ({ client_email: email, private_key: pem, token_uri: `http://127.0.0.1:${server.port}/token` });

  test('one exchange for concurrent callers, then the cached token', async () => {
    calls = 0;
    mode = 'ok';
    const sa = account('cache@test');
    const tokens = await Promise.all([accessToken(sa), accessToken(sa), accessToken(sa)]);
    expect(new Set(tokens).size).toBe(1);
    expect(await accessToken(sa)).toBe(tokens[0] as string);
    expect(calls).toBe(1);
    // another account (or another key for the same e-mail) never shares it
    const other = await accessToken({ ...sa, private_key_id: 'another' });
    expect(other).not.toBe(tokens[0] as string);
    expect(calls).toBe(2);
  });

  test('a refused grant is a 401 carrying the OAuth error; a failing endpoint a retryable 502', async () => {
    mode = 'refuse';
    const refused = await accessToken(account('refused@test')).catch((e: unknown) => e);
    expect(refused instanceof GatewayError).toBe(true);
    expect((refused as GatewayError).status).toBe(401);
    expect((refused as GatewayError).message).toContain('invalid_grant: Invalid JWT Signature.');
    mode = 'fail';
    const failed = (await accessToken(account('failed@test')).catch((e: unknown) => e)) as GatewayError;
    expect(failed.status).toBe(502);
    expect(failed.retryable).toBe(true);
    mode = 'empty';
    expect(((await accessToken(account('empty@test')).catch((e: unknown) => e)) as GatewayError).status).toBe(502);
    // failures are not cached
    mode = 'ok';
    expect(await accessToken(account('refused@test'))).toStartWith('tok-');
  });

  test('an unreachable endpoint is a 502', async () => {
    const error = (await accessToken({ client_email: 'gone@test', private_key: pem, token_uri: 'http://127.0.0.1:1/token' }).catch((e: unknown) => e)) as GatewayError;
    expect(error.status).toBe(502);
    expect(error.message).toContain('token endpoint');
  });
});
