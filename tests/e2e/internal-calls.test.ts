// Service `gatewayCalls`: what plugins call through the gateway's own pipeline. A call resolves its config as
// x-gateway-config would, reaches the provider as a client's call does, answers OpenAI-shaped, and never rejects: a
// config that cannot be routed or a body the endpoint refuses is an error body in INTERFACE.md's shape.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { type Caller, type GatewayCalls, Services } from '@gateway/sdk';
import { startInProcessGateway } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

let gateway: Gateway;
let mock: OpenAIMock;
let calls: GatewayCalls;
const caller: Caller = { apiKeyId: 'k', organisationId: 'org', workspaceId: 'ws', scopes: [], keyType: 'workspace-service', userId: null };

beforeAll(async () => {
  mock = await startOpenAIMock({ apiKey: 'sk-internal' });
  gateway = await startInProcessGateway();
  calls = gateway.service(Services.gatewayCalls);
});
afterAll(async () => {
  await gateway.close();
  await mock.stop();
});

describe('gatewayCalls', () => {
  test('an embeddings call reaches the provider with the config\'s credentials and answers an embedding list', async () => {
    const config = calls.resolveConfig(JSON.stringify({ provider: 'openai', api_key: 'sk-internal', custom_host: mock.url }), caller);
    const res = await calls.call({ endpoint: 'embed', body: { model: 'text-embedding-3-small', input: ['hello'] }, config, caller, spanName: 'test.span' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { object: string; data: { embedding: number[] }[] };
    expect(body.object).toBe('list');
    expect(body.data[0]?.embedding.length).toBeGreaterThan(0);
    const seen = mock.requests.at(-1);
    expect(seen?.path).toBe('/v1/embeddings');
    expect(seen?.headers.authorization).toBe('Bearer sk-internal');
  });

  test('resolveConfig refuses what x-gateway-config refuses', () => {
    expect(() => calls.resolveConfig('{"provider": 42}', caller)).toThrow();
    expect(() => calls.resolveConfig('{not json', caller)).toThrow();
  });

  test('never rejects: an unknown provider and a refused body are error bodies', async () => {
    const unknown = await calls.call({ endpoint: 'embed', body: { model: 'm', input: ['x'] }, config: { provider: 'no-such-provider' }, caller });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain('no-such-provider');
    const config = { provider: 'openai', api_key: 'sk-internal', custom_host: mock.url };
    const refused = await calls.call({ endpoint: 'embed', body: { model: 'text-embedding-3-small' }, config, caller });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { param?: string } }).error).toBeDefined();
  });
});
