// End to end: hooks and guardrails through the real server and the openai SDK, on SQLite and on MariaDB. The gateway
// process is the real server (tests/e2e/fixtures/hooks-gateway.ts: createGateway and Bun.serve as main.ts runs them)
// with one more project root whose guardrail plugin brings small test checks (plugins/hooks/src/testing.ts), found by
// the loader like any third-party plugin. The provider is the local OpenAI mock.
//
// Input deny (provider never called), output deny, a failure without deny (hook_results in the answer), transformed
// input reaching the provider, async hooks not delaying the answer, streams with output guardrails (hook_results
// event; deny as an error frame), invalid parameters and unknown checks refused at config validation, and the
// hook_results (feedback included, async results included) in request_logs after SIGTERM. GUARDRAILS_ENABLED=OFF
// runs the unmodified main.ts (tests/helpers/gateway-process.ts): hooks are ignored.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI, { APIError } from 'openai';
import { createE2EDatabase, E2E_DIALECTS, type E2EDatabase, freePort, jsonColumn, type Row } from '../helpers/e2e-database.ts';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const T = 30_000;
const SERVER = 'tests/e2e/fixtures/hooks-gateway.ts';

interface HookResult {
  id: string;
  verdict: boolean;
  deny: boolean;
  async: boolean;
  checks: { id: string; verdict: boolean; data: unknown; error: string | null; execution_time: number }[];
  feedback: { value?: number; weight?: number; metadata?: Record<string, unknown> } | null;
  execution_time: number;
}

/** The real server with the fixture's extra plugin root (the hook engine's test checks). */
const startHooksGateway = (env: Record<string, string>): Promise<GatewayProcess> => startGatewayProcess(env, SERVER);

describe.each(E2E_DIALECTS)('hooks and guardrails end to end (%s)', (dialect) => {
  let db: E2EDatabase;
  let mock: OpenAIMock;
  let gw: GatewayProcess;
  const providerKey = `sk-e2e-hooks-${crypto.randomUUID()}`;
  const run = crypto.randomUUID().slice(0, 8);
  const trace = (name: string) => `hooks-${run}-${name}`;
  let rows: Row[] = [];

  beforeAll(async () => {
    db = await createE2EDatabase(dialect);
    mock = await startOpenAIMock({ apiKey: null });
    gw = await startHooksGateway({ DATABASE_URL: db.url, PORT: String(await freePort()) });
  }, 45_000);
  afterAll(async () => {
    await gw?.stop();
    await mock?.stop();
    await db?.drop();
  }, 30_000);

  /** An SDK client whose calls carry this config (provider: the mock) and trace id. */
  const client = (config: Record<string, unknown>, name: string) =>
    new OpenAI({
      baseURL: `${gw.url}/v1`,
      apiKey: providerKey,
      maxRetries: 0,
      timeout: 15_000,
      defaultHeaders: {
        'x-gateway-api-key': gw.adminKey,
        'x-gateway-trace-id': trace(name),
        'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: providerKey, custom_host: mock.url, ...config }),
      },
    });
  const ask = (config: Record<string, unknown>, name: string, content: string) =>
    client(config, name).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as APIError);

  /** Runs `fn` and returns how many requests reached the provider meanwhile. */
  async function providerCalls(fn: () => Promise<void>): Promise<number> {
    const before = mock.requests.length;
    await fn();
    await Bun.sleep(10);
    return mock.requests.length - before;
  }

  test('the test checks are loaded from the extra project root as a guardrail plugin', () => {
    expect(gw.output()).toContain('gateway-e2e-test-checks');
    expect(gw.output()).toContain('test.contains');
    expect(gw.output()).toContain('@gateway/plugin-hooks');
  });

  test('deny on input: 400 guardrail_denied with hook_results; the provider is never called', async () => {
    const config = { input_guardrails: [{ id: 'no-secrets', deny: true, 'test.contains': { word: 'password' } }] };
    const made = await providerCalls(async () => {
      const err = await failure(ask(config, 'deny-in', 'my password is hunter2'));
      expect(err).toBeInstanceOf(APIError);
      expect(err?.status).toBe(400);
      expect(err?.type).toBe('guardrail_denied');
      // The SDK keeps only `error`; the whole body, hook_results beside it, through plain HTTP:
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': gw.adminKey,
          'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: providerKey, custom_host: mock.url, ...config }),
        },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'password please' }] }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { type: string }; hook_results: HookResult[] };
      expect(body.error.type).toBe('guardrail_denied');
      expect(body.hook_results).toMatchObject([{ id: 'no-secrets', verdict: false, deny: true, checks: [{ id: 'test.contains', verdict: false, error: null }] }]);
    });
    expect(made).toBe(0);
  }, T);

  test('deny on output: the answer is replaced by 400 guardrail_denied', async () => {
    const config = { output_guardrails: [{ id: 'no-echo', 'test.contains': { word: 'You said' }, on_fail: { deny: true } }] };
    const made = await providerCalls(async () => {
      const err = await failure(ask(config, 'deny-out', 'hello'));
      expect(err?.status).toBe(400);
      expect(err?.type).toBe('guardrail_denied');
      expect(err?.message).toContain('no-echo');
    });
    expect(made).toBe(1);
  }, T);

  test('a failure without deny: the answer as it is, with hook_results in its JSON body', async () => {
    const config = {
      input_guardrails: [{ id: 'flag', 'test.contains': { word: 'flagged' }, on_fail: { feedback: { value: -1, weight: 1 } } }],
      output_guardrails: [{ id: 'fine', 'test.pass': {} }],
    };
    const completion = await ask(config, 'warn', 'a flagged question');
    expect(completion.choices[0]?.message.content).toBe('You said: a flagged question');
    const hookResults = (completion as unknown as { hook_results: HookResult[] }).hook_results;
    expect(hookResults.map((r) => [r.id, r.verdict, r.deny])).toEqual([
      ['flag', false, false],
      ['fine', true, false],
    ]);
  }, T);

  test('transformed input is what reaches the provider', async () => {
    const config = { before_request_hooks: [{ id: 'redact', checks: [{ id: 'test.replace', parameters: { from: '4111-1111', to: '[card]' } }] }] };
    const completion = await ask(config, 'transform', 'my card is 4111-1111');
    expect(completion.choices[0]?.message.content).toBe('You said: my card is [card]');
    expect(JSON.stringify(mock.requests.at(-1)?.json)).not.toContain('4111-1111');
    expect((mock.requests.at(-1)?.json as { messages: { content: string }[] }).messages[0]?.content).toBe('my card is [card]');
  }, T);

  test('async hooks do not delay the answer (the slow check is still running when it arrives)', async () => {
    const config = {
      after_request_hooks: [
        { id: 'slow-audit', async: true, checks: [{ id: 'test.slow', parameters: { ms: 4_000 } }], on_success: { feedback: { value: 1, weight: 0.5, metadata: { by: 'audit' } } } },
      ],
    };
    const started = performance.now();
    const completion = await ask(config, 'async', 'quick please');
    expect(performance.now() - started).toBeLessThan(3_000); // not the 4 s the check takes
    expect(completion.choices[0]?.message.content).toBe('You said: quick please');
    expect((completion as unknown as { hook_results?: unknown }).hook_results).toBeUndefined();
  }, T);

  test('streaming with output guardrails: chunks as they come, then a hook_results chunk before [DONE]', async () => {
    mock.enqueue({ kind: 'default', chunkDelayMs: 200 });
    const config = { output_guardrails: [{ id: 'no-stream', 'test.contains': { word: 'stream' }, on_fail: { feedback: { value: 0 } } }] };
    const stream = await client(config, 'stream').chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'stream this' }] });
    const started = performance.now();
    let firstAt: number | undefined;
    let text = '';
    const extra: unknown[] = [];
    for await (const chunk of stream) {
      firstAt ??= performance.now() - started;
      text += chunk.choices[0]?.delta?.content ?? '';
      if ((chunk as unknown as { hook_results?: unknown }).hook_results) extra.push((chunk as unknown as { hook_results: unknown }).hook_results);
    }
    const total = performance.now() - started;
    expect(text).toBe('You said: stream this');
    expect(firstAt).toBeLessThan(total - 300); // the first chunk came long before the end (the rest: 200 ms a chunk)
    expect(extra).toHaveLength(1);
    expect((extra[0] as HookResult[])[0]).toMatchObject({ id: 'no-stream', verdict: false, deny: false, feedback: { value: 0 } });
  }, T);

  test('streaming with a denying output guardrail: the content, then an error instead of [DONE]', async () => {
    const config = { output_guardrails: [{ id: 'no-stream', deny: true, 'test.contains': { word: 'stream' } }] };
    const stream = await client(config, 'stream-deny').chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'stream again' }] });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    })().then(() => undefined, (e: unknown) => e as APIError);
    expect(text).toBe('You said: stream again');
    expect(err).toBeInstanceOf(APIError);
    expect(err?.type).toBe('guardrail_denied');
  }, T);

  test('invalid check parameters or an unknown check: 400 invalid_config at config validation, provider never called', async () => {
    const made = await providerCalls(async () => {
      const bad = await failure(ask({ input_guardrails: [{ 'test.contains': { word: 42 } }] }, 'bad-params', 'hi'));
      expect(bad?.status).toBe(400);
      expect(bad?.type).toBe('invalid_config');
      expect(bad?.message).toContain('input_guardrails[0]["test.contains"].word: must be a non-empty string');
      const unknown = await failure(ask({ after_request_hooks: [{ id: 'h', checks: [{ id: 'test.nothing', parameters: {} }] }] }, 'unknown-check', 'hi'));
      expect(unknown?.status).toBe(400);
      expect(unknown?.type).toBe('invalid_config');
      expect(unknown?.message).toContain('after_request_hooks[0].checks[0].id: unknown guardrail check "test.nothing"');
    });
    expect(made).toBe(0);
  }, T);

  test('SIGTERM with an async hook still running: the process waits for it, exits 0, and request_logs hold every hook result', async () => {
    // One more async hook in flight when SIGTERM arrives.
    const config = { input_guardrails: [{ id: 'late', async: true, 'test.slow': { ms: 800, verdict: false }, on_fail: { feedback: { value: -2, weight: 3 } } }] };
    await ask(config, 'late', 'almost closing');
    expect(await gw.stop()).toBe(0);
    rows = await db.query('SELECT * FROM request_logs');
    const row = (name: string): Row & { hooks: HookResult[] | null } => {
      const r = rows.find((x) => x.trace_id === trace(name));
      if (!r) throw new Error(`no request_logs row for ${trace(name)}`);
      return { ...r, hooks: jsonColumn<HookResult[]>(r.hook_results) };
    };

    const denyIn = row('deny-in');
    expect(Number(denyIn.status)).toBe(400);
    expect(denyIn.error_code).toBe('guardrail_denied');
    expect(denyIn.hooks).toMatchObject([{ id: 'no-secrets', verdict: false, deny: true }]);
    expect(row('deny-out').hooks?.[0]).toMatchObject({ id: 'no-echo', deny: true });

    // Feedback of on_fail / on_success, as configured.
    const warn = row('warn');
    expect(warn.hooks?.map((h) => [h.id, h.feedback])).toEqual([
      ['flag', { value: -1, weight: 1 }],
      ['fine', null],
    ]);
    expect(JSON.parse(String(row('transform').request_body)).messages[0].content).toBe('my card is [card]');
    // Async results reach the log after the answer.
    expect(row('async').hooks).toMatchObject([{ id: 'slow-audit', async: true, verdict: true, deny: false, feedback: { value: 1, weight: 0.5, metadata: { by: 'audit' } } }]);
    expect(row('async').hooks?.[0]?.execution_time).toBeGreaterThanOrEqual(3_900);
    expect(row('stream').hooks?.[0]).toMatchObject({ id: 'no-stream', verdict: false, feedback: { value: 0 } });
    expect(row('stream-deny').hooks?.[0]).toMatchObject({ id: 'no-stream', deny: true });
    expect(row('late').hooks).toMatchObject([{ id: 'late', async: true, verdict: false, feedback: { value: -2, weight: 3 } }]);
    // Requests refused at config validation ran no hook.
    expect(row('bad-params').hooks).toBeNull();
    expect(row('bad-params').error_code).toBe('invalid_config');
  }, T);
});

describe('GUARDRAILS_ENABLED=OFF (the unmodified main.ts)', () => {
  let mock: OpenAIMock;
  let gw: GatewayProcess;
  beforeAll(async () => {
    mock = await startOpenAIMock({ apiKey: null });
    gw = await startGatewayProcess({ GUARDRAILS_ENABLED: 'OFF', PORT: String(await freePort()) });
  }, 45_000);
  afterAll(async () => {
    await gw?.stop();
    await mock?.stop();
  }, 30_000);

  test('hooks and guardrails in configs are ignored: no validation of checks, no deny, no transform', async () => {
    const client = new OpenAI({
      baseURL: `${gw.url}/v1`,
      apiKey: 'sk-off',
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': gw.adminKey,
        'x-gateway-config': JSON.stringify({
          provider: 'openai',
          api_key: 'sk-off',
          custom_host: mock.url,
          input_guardrails: [{ deny: true, 'no.such.check': {} }, 'a-saved-guardrail'],
          before_request_hooks: [{ id: 'h', checks: [{ id: 'test.replace', parameters: { from: 'secret', to: 'x' } }], on_fail: { deny: true } }],
          output_guardrails: [{ deny: true, 'default.whatever': { anything: 1 } }],
        }),
      },
    });
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'my secret' }] });
    expect(completion.choices[0]?.message.content).toBe('You said: my secret');
    expect((completion as unknown as { hook_results?: unknown }).hook_results).toBeUndefined();
    expect((mock.requests.at(-1)?.json as { messages: { content: string }[] }).messages[0]?.content).toBe('my secret');
    expect(gw.output()).toContain('GUARDRAILS_ENABLED=OFF');
  }, T);
});
