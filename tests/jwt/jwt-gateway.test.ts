// JWT authentication of gateway calls end to end (docs/jwt.md): an in-process gateway with JWT_JWKS_URL at a JWKS on
// loopback, a workspace of its database, the OpenAI SDK and plain fetch. The token goes in x-gateway-api-key or as
// Authorization: Bearer; refusals are INTERFACE.md error bodies; the administration API takes no JWT; without JWT
// settings a JWT is refused saying so.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import OpenAI, { AuthenticationError } from 'openai';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const ISSUER = 'https://idp.example';
const AUDIENCE = 'ai-gateway';

let gateway: Gateway;
let plain: Gateway;
let mock: OpenAIMock;
let jwks: ReturnType<typeof Bun.serve>;
let keys: Awaited<ReturnType<typeof generateKeyPair>>;
let workspaceId: string;

async function token(claims: JWTPayload = {}): Promise<string> {
  return new SignJWT({ workspace_id: workspaceId, scope: 'completions.write', ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'main' })
    .setIssuer(ISSUER)
    .setAudience(claims.aud ?? AUDIENCE)
    .setSubject('alice@example.com')
    .setIssuedAt()
    .setExpirationTime(claims.exp ?? '10m')
    .sign(keys.privateKey);
}

const call = (gw: Gateway, headers: Record<string, string>) =>
  gw.handle(
    new Request('http://gateway.local/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    }),
  );

/** A config carrying the provider key, so that Authorization is free for the token. */
const configHeader = () => JSON.stringify({ provider: 'openai', api_key: 'sk-upstream', custom_host: mock.url });

beforeAll(async () => {
  keys = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'main', alg: 'ES256' };
  jwks = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => Response.json({ keys: [jwk] }) });
  mock = await startOpenAIMock({ apiKey: null });
  gateway = await startInProcessGateway({
    JWT_JWKS_URL: `http://127.0.0.1:${jwks.port}/.well-known/jwks.json`,
    JWT_ISSUER: ISSUER,
    JWT_AUDIENCE: AUDIENCE,
    JWT_ALGORITHMS: 'ES256',
  });
  plain = await startInProcessGateway();
  const res = await gateway.handle(new Request('http://gateway.local/v1/workspaces', { headers: { 'x-gateway-api-key': TEST_ADMIN_KEY } }));
  const list = (await res.json()) as { data: { id: string }[] };
  workspaceId = list.data[0]?.id as string;
  expect(workspaceId).toBeString();
});
afterAll(async () => {
  await gateway?.close();
  await plain?.close();
  await mock?.stop();
  jwks?.stop(true);
});

describe('JWT on the data plane', () => {
  test('a token in x-gateway-api-key or as Authorization: Bearer reaches the provider; the provider never sees it', async () => {
    const jwt = await token();
    const variants: Record<string, string>[] = [
      { 'x-gateway-api-key': jwt, 'x-gateway-config': configHeader() },
      { authorization: `Bearer ${jwt}`, 'x-gateway-config': configHeader() },
    ];
    for (const headers of variants) {
      const before = mock.requests.length;
      const res = await call(gateway, headers);
      expect(res.status).toBe(200);
      const sent = mock.requests.slice(before).at(-1);
      expect(sent?.headers.authorization).toBe('Bearer sk-upstream');
    }
    // The OpenAI SDK with nothing but a base URL and the token as its key (sent as Authorization: Bearer).
    const sdk = (apiKey: string) =>
      new OpenAI({
        baseURL: 'http://gateway.local/v1',
        apiKey,
        maxRetries: 0,
        fetch: (input, init) => gateway.handle(new Request(input as string, init as RequestInit)),
        defaultHeaders: { 'x-gateway-config': configHeader() },
      });
    const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hi' }] };
    const answer = await sdk(jwt).chat.completions.create(ask);
    expect(answer.choices[0]?.message.role).toBe('assistant');
    const expired = await token({ exp: Math.floor(Date.now() / 1000) - 3600 });
    const refused = await sdk(expired)
      .chat.completions.create(ask)
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect((refused as AuthenticationError).message).toMatch(/Invalid JWT: the token expired at/);
  });

  test('refusals are 401 bodies of INTERFACE.md with a reason; a token without the call scope is a 403 naming it', async () => {
    const cases: [JWTPayload, string][] = [
      [{ exp: Math.floor(Date.now() / 1000) - 3600 }, 'Invalid JWT: the token expired at'],
      [{ aud: 'another-service' }, 'Invalid JWT: wrong audience "another-service": expected "ai-gateway"'],
      [{ workspace_id: 'no-such-workspace' }, 'Invalid JWT: the workspace "no-such-workspace" of the "workspace_id" claim does not exist'],
    ];
    const before = mock.requests.length;
    for (const [claims, message] of cases) {
      const res = await call(gateway, { authorization: `Bearer ${await token(claims)}`, 'x-gateway-config': configHeader() });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      const body = (await res.json()) as { error: { message: string; type: string; code: string; param: null } };
      expect(body.error).toEqual({ message: expect.stringContaining(message), type: 'authentication_error', code: 'invalid_token', param: null });
    }
    const embeddingsOnly = await call(gateway, { 'x-gateway-api-key': await token({ scope: 'embeddings.write' }), 'x-gateway-config': configHeader() });
    expect(embeddingsOnly.status).toBe(403);
    expect(((await embeddingsOnly.json()) as { error: { message: string } }).error.message).toMatch(/completions\.write/);
    expect(mock.requests.length).toBe(before);
  });

  test('API keys keep working beside JWTs: only a JWT-shaped value goes to the JWT verifier', async () => {
    expect((await call(gateway, { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': configHeader() })).status).toBe(200);
    expect((await call(gateway, { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'x-gateway-config': configHeader() })).status).toBe(200);
    const unknown = await call(gateway, { 'x-gateway-api-key': 'gw-unknown-key-0000000000000000', 'x-gateway-config': configHeader() });
    expect(unknown.status).toBe(401);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
  });

  test('the administration API does not take a JWT', async () => {
    const res = await gateway.handle(new Request('http://gateway.local/v1/workspaces', { headers: { 'x-gateway-api-key': await token({ scope: 'workspaces.read' }) } }));
    expect(res.status).toBe(401);
  });

  test('without JWT settings a JWT is refused saying that this gateway takes none', async () => {
    const res = await call(plain, { 'x-gateway-api-key': await token() });
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: { message: string; code: string } };
    expect(body.error.message).toMatch(/does not accept JWTs \(JWT_JWKS_URL or JWT_PUBLIC_KEY is not set\)/);
  });
});
