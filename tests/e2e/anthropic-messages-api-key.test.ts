/**
 * Issue #25, "day one": the gateway key in `x-api-key`, Anthropic's header, as Claude Code sends its ANTHROPIC_API_KEY
 * when it is given nothing but a base URL and a key, here through the real Anthropic SDK. On SQLite (the in-process
 * gateway), against stored providers: the local Anthropic server (native, routed by `@slug/model`) and the local
 * OpenAI server (the workspace's default config, translated). The key is never sent upstream. Precedence: `x-gateway-api-key`, then
 * `Authorization`, then `x-api-key`; beside either of the first two, `x-api-key` keeps its old meaning (a client
 * header that config `forward_headers` may send to the provider). docs/clients.md.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import Anthropic from '@anthropic-ai/sdk';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { type AnthropicTestServer, startAnthropicServer } from '../providers/anthropic/server.ts';

const T = 20_000;
const STORED_ANTHROPIC_KEY = 'sk-ant-stored-day-one';
const STORED_OPENAI_KEY = 'sk-openai-stored-day-one';
/** What the local Anthropic server accepts; the SDK's own default version is newer than it knows. */
const VERSION = { 'anthropic-version': '2023-06-01' };

let gateway: Gateway;
let server: ReturnType<typeof Bun.serve>;
let claude: AnthropicTestServer;
let openai: OpenAIMock;
let origin: string;
/** A workspace key with completions.write only: what a user would paste into Claude Code. */
let gatewayKey: string;

async function admin(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await gateway.handle(
    new Request(`http://gateway.test/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const json = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * The SDK sending the key as `x-api-key`, Anthropic's documented header: what Claude Code sends for ANTHROPIC_API_KEY
 * and what Anthropic's SDKs have sent for `apiKey`. The SDK installed here (1.14.0) puts its `apiKey` option in
 * `Authorization: Bearer` instead (client.js, apiKeyAuth), which the gateway took before this change; so the header
 * is set as such a client sets it, and the `apiKey` option itself is tested once below.
 */
const bare = (key: string, baseURL = origin) =>
  new Anthropic({ baseURL, apiKey: null, authToken: null, maxRetries: 0, defaultHeaders: { 'x-api-key': key, ...VERSION } });

/** Every header value a provider server received, to show a key reached none of them. */
const upstreamHeaders = (requests: { headers: Record<string, string> }[]) => JSON.stringify(requests.map((r) => r.headers));

beforeAll(async () => {
  gateway = await startInProcessGateway();
  server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => gateway.handle(request) });
  origin = `http://127.0.0.1:${server.port}`;
  claude = startAnthropicServer();
  openai = await startOpenAIMock({ apiKey: STORED_OPENAI_KEY });
  const workspaces = (await admin('GET', '/workspaces')).data as { id: string; slug: string }[];
  const workspace = workspaces.find((w) => w.slug === 'default')?.id;
  await admin('POST', '/integrations', {
    name: 'Claude stored',
    slug: 'claude-stored',
    ai_provider_id: 'anthropic',
    key: STORED_ANTHROPIC_KEY,
    configurations: { custom_host: claude.baseUrl },
    workspaces: [{ id: workspace, enabled: true }],
  });
  await admin('PUT', '/integrations/claude-stored/integration-models', { models: [{ slug: 'claude-haiku-4-5' }] });
  await admin('POST', '/integrations', {
    name: 'OpenAI stored',
    slug: 'openai-stored',
    ai_provider_id: 'openai',
    key: STORED_OPENAI_KEY,
    configurations: { custom_host: openai.url },
    workspaces: [{ id: workspace, enabled: true }],
  });
  await admin('POST', '/configs', { name: 'Day one default', is_default: true, workspace_id: workspace, config: { provider: '@openai-stored' } });
  const made = await admin('POST', '/api-keys', { name: 'claude code', type: 'workspace-service', workspace_id: workspace, scopes: ['completions.write'] });
  gatewayKey = String(made.key);
});
afterAll(async () => {
  server?.stop(true);
  await claude?.stop();
  await openai?.stop();
  await gateway?.close();
});

describe('the gateway key as x-api-key (the Anthropic SDK given only a base URL and a key)', () => {
  test('@slug/model to a stored Anthropic provider: whole, streamed and count_tokens, with the stored key upstream', async () => {
    const client = bare(gatewayKey);
    const before = claude.requests.length;
    const message = await client.messages.create({ model: '@claude-stored/claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'Hello there' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'You said: Hello there' }] as never);
    expect(claude.requests[before]?.path).toBe('/v1/messages');
    expect(JSON.parse(claude.requests[before]?.body ?? '')).toMatchObject({ model: 'claude-haiku-4-5' });

    const streamed = await client.messages
      .stream({ model: '@claude-stored/claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'Stream it' }] })
      .finalMessage();
    expect(streamed.content).toEqual([{ type: 'text', text: 'You said: Stream it' }] as never);

    const counted = await client.messages.countTokens({ model: '@claude-stored/claude-haiku-4-5', messages: [{ role: 'user', content: 'Hello there friend' }] });
    expect(counted).toEqual({ input_tokens: 3 });

    // With the base URL ending in /v1 as well (the form the openai SDK wants).
    await bare(gatewayKey, `${origin}/v1`).messages.create({ model: '@claude-stored/claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'v1' }] });

    const sent = claude.requests.slice(before);
    expect(sent.length).toBe(4);
    for (const request of sent) expect(request.headers['x-api-key']).toBe(STORED_ANTHROPIC_KEY);
    expect(upstreamHeaders(sent)).not.toContain(gatewayKey);
  }, T);

  test("the workspace's default config (translated to the stored OpenAI provider); GET /v1/models by the same key", async () => {
    const before = openai.requests.length;
    const message = await bare(gatewayKey).messages.create({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'By default' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'You said: By default' }] as never);
    const sent = openai.requests.slice(before);
    expect(sent.map((r) => r.path)).toEqual(['/v1/chat/completions']);
    expect(sent[0]?.headers.authorization).toBe(`Bearer ${STORED_OPENAI_KEY}`);
    expect(upstreamHeaders(sent)).not.toContain(gatewayKey);

    // Every route, not only /v1/messages: the SDK sends the same header on each call it makes.
    const models = await fetch(`${origin}/v1/models`, { headers: { 'x-api-key': gatewayKey } });
    expect(models.status).toBe(200);
    const ids = ((await models.json()) as { data: { id: string }[] }).data.map((m) => m.id);
    expect(ids).toContain('@claude-stored/claude-haiku-4-5');
    // The administration API too, as with Authorization: Bearer.
    expect((await fetch(`${origin}/v1/workspaces`, { headers: { 'x-api-key': TEST_ADMIN_KEY } })).status).toBe(200);
  }, T);

  test("the SDK's own apiKey option, whichever of the two headers this version puts it in", async () => {
    const client = new Anthropic({ baseURL: origin, apiKey: gatewayKey, authToken: null, maxRetries: 0, defaultHeaders: VERSION });
    const before = claude.requests.length;
    const message = await client.messages.create({ model: '@claude-stored/claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'apiKey' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'You said: apiKey' }] as never);
    const sent = claude.requests.slice(before);
    expect(sent.map((r) => r.headers['x-api-key'])).toEqual([STORED_ANTHROPIC_KEY]);
    expect(upstreamHeaders(sent)).not.toContain(gatewayKey);
  }, T);

  test('an unknown x-api-key is refused as an unknown x-gateway-api-key is: the same 401, nothing sent upstream', async () => {
    const before = claude.requests.length + openai.requests.length;
    const params = { model: '@claude-stored/claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user' as const, content: 'x' }] };
    const refused = await bare('sk-ant-not-a-gateway-key').messages.create(params).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.AuthenticationError);
    const byHeader = await fetch(`${origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': 'sk-ant-not-a-gateway-key', ...VERSION },
      body: JSON.stringify(params),
    });
    expect(byHeader.status).toBe(401);
    expect(await byHeader.json()).toEqual((refused as InstanceType<typeof Anthropic.AuthenticationError>).error as never);
    expect(claude.requests.length + openai.requests.length).toBe(before);
  }, T);
});

describe('precedence: x-gateway-api-key, then Authorization, then x-api-key', () => {
  const call = (headers: Record<string, string>) =>
    fetch(`${origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...VERSION, ...headers },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'Who pays?' }] }),
    });
  /** A target without a key of its own that forwards the client's x-api-key, the one way a client's reaches a provider. */
  const config = () => JSON.stringify({ provider: 'anthropic', custom_host: claude.baseUrl, forward_headers: ['x-api-key'] });

  test('beside x-gateway-api-key, x-api-key is the provider key it was: forward_headers sends it unchanged', async () => {
    const before = claude.requests.length;
    const response = await call({ 'x-gateway-api-key': gatewayKey, 'x-gateway-config': config(), 'x-api-key': 'sk-ant-client-own' });
    expect(response.status).toBe(200);
    expect(claude.requests.slice(before).map((r) => r.headers['x-api-key'])).toEqual(['sk-ant-client-own']);
  }, T);

  test('beside Authorization: Bearer <gateway key>, x-api-key is not the gateway key (an unknown value in it does not matter)', async () => {
    const before = claude.requests.length;
    const response = await call({ authorization: `Bearer ${gatewayKey}`, 'x-gateway-config': config(), 'x-api-key': 'sk-ant-client-own' });
    expect(response.status).toBe(200);
    const sent = claude.requests.slice(before);
    expect(sent.map((r) => r.headers['x-api-key'])).toEqual(['sk-ant-client-own']);
    expect(upstreamHeaders(sent)).not.toContain(gatewayKey);
  }, T);

  test('alone, x-api-key is the gateway key: forward_headers does not send it, so the keyless target gets no key', async () => {
    const before = claude.requests.length;
    const response = await call({ 'x-gateway-config': config(), 'x-api-key': gatewayKey });
    // The local Anthropic server refuses a call without x-api-key: the gateway relays its 401.
    expect(response.status).toBe(401);
    const sent = claude.requests.slice(before);
    expect(sent.length).toBe(1);
    expect(sent[0]?.headers['x-api-key']).toBeUndefined();
    expect(upstreamHeaders(sent)).not.toContain(gatewayKey);
  }, T);

  test('an Authorization header that is not a gateway key is not passed over for x-api-key: 401', async () => {
    const response = await call({ authorization: 'Bearer sk-not-a-gateway-key', 'x-api-key': gatewayKey });
    expect(response.status).toBe(401);
  }, T);
});
