import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Errors, type GuardrailCheck, type GuardrailCheckContext, type JsonObject, type PluginApi, type ServiceToken } from '@gateway/sdk';
import plugin, { createDefaultChecks } from './index.ts';
import { answer, deepFreeze, input, output, testRequest } from './testing.ts';

const EXPECTED_IDS = [
  'regexMatch', 'sentenceCount', 'wordCount', 'characterCount', 'jsonSchema', 'jsonKeys', 'contains', 'validUrls',
  'containsCode', 'allUppercase', 'alluppercase', 'allLowercase', 'alllowercase', 'endsWith', 'modelWhitelist',
  'modelRules', 'allowedRequestTypes', 'notNull', 'jwt', 'requiredMetadataKeys', 'requiredMetadataKeyPairs', 'webhook',
  'log', 'addPrefix', 'regexReplace', 'piiRedact', 'inlineImageUrls',
].map((n) => `default.${n}`);

function fakeApi(services: Record<string, unknown> = {}) {
  const registered: GuardrailCheck[] = [];
  const api = {
    name: '@gateway/plugin-guardrails-default',
    env: {},
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    optional: (token: ServiceToken<unknown>) => services[token.id],
    guardrail: (check: GuardrailCheck) => void registered.push(check),
  } as unknown as PluginApi;
  return { api, registered };
}

let server: ReturnType<typeof Bun.serve>;
let base: string;
beforeAll(() => {
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ verdict: true }) });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server.stop(true));

describe('the plugin', () => {
  test('registers every check once, each with validate', async () => {
    const { api, registered } = fakeApi();
    await plugin.setup(api);
    expect(registered.map((c) => c.id)).toEqual(EXPECTED_IDS);
    for (const check of registered) {
      expect(typeof check.validate).toBe('function');
      const violations = check.validate?.({ surely_unknown: true }) ?? [];
      expect(violations.some((v) => v.startsWith('surely_unknown: is not a known parameter'))).toBe(true);
      expect(Array.isArray(check.validate?.('not an object'))).toBe(true);
    }
  });

  test('the package.json declares the plugin', async () => {
    const manifest = await Bun.file(new URL('../package.json', import.meta.url)).json();
    expect(manifest.name).toBe('@gateway/plugin-guardrails-default');
    expect(manifest.gateway).toEqual({ api: 1, entry: './src/index.ts' });
  });

  test('outbound calls go through the hostGuard service (its fetch) when one is provided', async () => {
    const checked: string[] = [];
    const hostGuard = {
      check: () => undefined,
      fetch: (url: string, init?: RequestInit) => {
        checked.push(url);
        return url.includes('blocked') ? Promise.reject(Errors.forbiddenHost('127.0.0.1')) : fetch(url, init);
      },
    };
    const { api, registered } = fakeApi({ hostGuard });
    await plugin.setup(api);
    const webhook = registered.find((c) => c.id === 'default.webhook')!;
    expect((await webhook.run(input('x'), { webhookURL: `${base}/ok` })).verdict).toBe(true);
    expect((await webhook.run(input('x'), { webhookURL: `${base}/blocked` })).data).toMatchObject({ error: { kind: 'forbidden' } });
    expect(checked).toEqual([`${base}/ok`, `${base}/blocked`]);
  });
});

/** Parameters that make each check do real work. */
function parametersFor(id: string): JsonObject {
  const p: Record<string, JsonObject> = {
    'default.regexMatch': { rule: 'a' },
    'default.jsonSchema': { schema: { type: 'object' } },
    'default.jsonKeys': { keys: ['a'] },
    'default.contains': { words: ['a'] },
    'default.containsCode': { format: 'Python' },
    'default.endsWith': { suffix: '.' },
    'default.modelWhitelist': { models: ['gpt-4o'] },
    'default.modelRules': { rules: { defaults: ['gpt-4o'] } },
    'default.jwt': { jwksUri: `${base}/jwks` },
    'default.requiredMetadataKeys': { metadataKeys: ['team'] },
    'default.requiredMetadataKeyPairs': { metadataPairs: { team: 'a' } },
    'default.webhook': { webhookURL: `${base}/hook` },
    'default.log': { logURL: `${base}/log` },
    'default.addPrefix': { prefix: '> ' },
    'default.regexReplace': { rule: 'a', replacement: 'b' },
    'default.inlineImageUrls': { maxSizeBytes: 10 },
  };
  return p[id] ?? {};
}

describe('every check', () => {
  const checks = createDefaultChecks();
  const request = () =>
    testRequest({
      metadata: { team: 'a' },
      body: {
        model: 'gpt-4o',
        messages: [
          { role: 'system', content: 'sys a@b.io' },
          { role: 'user', content: [{ type: 'text', text: 'a question 4111 1111 1111 1111?' }, { type: 'image_url', image_url: { url: `${base}/i.png` } }] },
        ],
      },
    });
  const contexts = (): [string, GuardrailCheckContext][] => [
    ['input', { request: request(), phase: 'input' }],
    ['output', { request: request(), phase: 'output', responseBody: deepFreeze(answer('an answer a@b.io. ```py\nx\n```')) }],
    ['no text', input({ messages: [] })],
    ['no answer', { request: testRequest(), phase: 'output' }],
    ['embeddings', input({ model: 'e', input: ['a', 'b'] }, { endpoint: 'embed' })],
    ['completion', input({ model: 'c', prompt: 'a' }, { endpoint: 'complete' })],
  ];

  for (const check of checks) {
    test(`${check.id}: never changes its inputs, answers every kind of body`, async () => {
      for (const [name, ctx] of contexts()) {
        const before = JSON.stringify([ctx.request.body, ctx.responseBody]);
        const result = await check.run(ctx, parametersFor(check.id)); // never throws
        expect(typeof result.verdict).toBe('boolean');
        expect(() => JSON.stringify(result.data)).not.toThrow();
        if (result.transformed) expect(result.transformed).not.toBe(ctx.phase === 'input' ? ctx.request.body : ctx.responseBody);
        expect(JSON.stringify([ctx.request.body, ctx.responseBody]), `${check.id} on ${name}`).toBe(before);
      }
    });
  }

  test('invalid parameters at run time: a failed verdict, never a throw', async () => {
    for (const check of checks) {
      const r = await check.run(input('x'), { surely_unknown: 1 });
      expect(r.verdict, check.id).toBe(false);
      expect(r.data, check.id).toMatchObject({ error: { kind: 'invalid_parameters' } });
    }
  });

  test('the output phase of a transformer returns an answer, the input phase a request', async () => {
    const check = checks.find((c) => c.id === 'default.piiRedact')!;
    const out = await check.run(output('mail a@b.io'), {});
    expect(out.transformed?.object).toBe('chat.completion');
    const inp = await check.run(input('mail a@b.io'), {});
    expect(inp.transformed?.messages).toBeDefined();
  });
});
