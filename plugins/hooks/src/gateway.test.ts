// The hook engine through the whole gateway, in-process: the test checks are registered in the gateway's guardrail
// registry (as a guardrail plugin would), the provider is a local Bun.serve speaking OpenAI JSON and SSE. Input deny
// (provider never called), transformed input reaching the provider, output deny, hook_results in answers, async hooks
// not delaying the answer, streams, config validation of checks, the request log's hook_results column.
// GUARDRAILS_ENABLED=OFF last (its own gateway). The cost of the engine: scripts/bench/hooks.ts.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type JsonObject, Services } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { requestLogs, RequestLogServices } from '@gateway/plugin-request-log';
import { providerHeaders, startInProcessGateway } from '../../../tests/helpers/in-process.ts';
import { chatAnswer, chatBody, sseChunks, testChecks } from './testing.ts';
import type { HookResult } from './types.ts';

interface Upstream {
  url: string;
  received: JsonObject[];
  /** While set, a stream whose message says `slow` holds everything after its first chunk until this settles. */
  gate?: Promise<void>;
  stop(): void;
}

/** OpenAI chat: echoes the last message (`You said: …`), streamed when asked, slowly when the message says `slow`. */
function startUpstream(): Upstream {
  const received: JsonObject[] = [];
  const upstream: Upstream = { url: '', received, stop: () => {} };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const body = (await req.json()) as JsonObject;
      received.push(body);
      const messages = body.messages as JsonObject[];
      const text = `You said: ${String(messages.at(-1)?.content)}`;
      if (body.stream !== true) return Response.json({ ...chatAnswer(text), model: body.model });
      const chunks = sseChunks(text);
      const enc = new TextEncoder();
      let i = 0;
      return new Response(
        new ReadableStream<Uint8Array>({
          async pull(c) {
            if (i >= chunks.length) return c.close();
            if (i > 0 && text.includes('slow')) {
              await upstream.gate;
              await Bun.sleep(30);
            }
            c.enqueue(enc.encode(chunks[i++] as string));
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      );
    },
  });
  upstream.url = `http://127.0.0.1:${server.port}/v1`;
  upstream.stop = () => void server.stop(true);
  return upstream;
}

/** The promise's value, or a failure naming what did not happen within `ms` (a guard against hanging, not a timing). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, Bun.sleep(ms).then(() => Promise.reject(new Error(`${what}: nothing after ${ms} ms`)))]);
}

let upstream: Upstream;
let gw: Gateway;
const calls = { count: {} as Record<string, number>, seen: [] as { id: string; phase: string; text: string }[] };

beforeAll(async () => {
  upstream = startUpstream();
  gw = await startInProcessGateway({ GUARDRAILS_ENABLED: 'ON' });
  for (const check of testChecks(calls)) gw.plugins.registry.guardrails.set(check.id, check);
});
afterAll(async () => {
  await gw?.close();
  upstream?.stop();
});

function call(config: Record<string, unknown> | undefined, body: JsonObject = chatBody(), extra: Record<string, string> = {}): Promise<Response> {
  const headers = providerHeaders(upstream.url, extra);
  if (config) headers['x-gateway-config'] = JSON.stringify({ provider: 'openai', api_key: 'sk-test', custom_host: upstream.url, ...config });
  return gw.handle(new Request('http://gateway.local/v1/chat/completions', { method: 'POST', headers, body: JSON.stringify(body) }));
}

/** Runs `fn` and returns how many provider calls it made. */
async function providerCalls(fn: () => Promise<void>): Promise<number> {
  const before = upstream.received.length;
  await fn();
  return upstream.received.length - before;
}

async function logRow(traceId: string) {
  const queue = gw.service(RequestLogServices.queue);
  const database = gw.service(Services.database);
  for (let i = 0; i < 250; i++) {
    await queue.flush();
    const row = await database.findOne(requestLogs, 'trace_id', traceId, { fresh: true });
    if (row) return row;
    await Bun.sleep(20);
  }
  throw new Error(`no request_logs row for ${traceId}`);
}

describe('hooks through the gateway', () => {
  test('the engine is loaded: plugin listed, two stages registered', () => {
    expect(gw.plugins.loaded.map((p) => p.name)).toContain('@gateway/plugin-hooks');
    const stages = gw.plugins.registry.stages.map((s) => `${s.phase}:${s.name}`);
    expect(stages).toContain('request:hooks:input');
    expect(stages).toContain('response:hooks:output');
  });

  test('deny on input: 400 guardrail_denied with hook_results; the provider is never called', async () => {
    const config = { input_guardrails: [{ id: 'no-secrets', deny: true, 'test.contains': { word: 'secret' } }] };
    const made = await providerCalls(async () => {
      const res = await call(config, chatBody('my secret is 42'), { 'x-gateway-trace-id': 'hooks-deny-in' });
      expect(res.status).toBe(400);
      expect(res.headers.get('x-gateway-trace-id')).toBe('hooks-deny-in');
      const body = (await res.json()) as { error: { type: string; code: string }; hook_results: HookResult[] };
      expect(body.error).toMatchObject({ type: 'guardrail_denied', code: 'guardrail_denied' });
      expect(body.hook_results).toMatchObject([{ id: 'no-secrets', verdict: false, deny: true, async: false, checks: [{ id: 'test.contains', verdict: false, data: { found: true }, error: null }] }]);
    });
    expect(made).toBe(0);
    const row = await logRow('hooks-deny-in');
    expect(row).toMatchObject({ status: 400, error_code: 'guardrail_denied' });
    expect((row.hook_results as HookResult[])[0]).toMatchObject({ id: 'no-secrets', deny: true });
  });

  test('transformed input is what reaches the provider (and the log)', async () => {
    const config = { before_request_hooks: [{ id: 'redact', type: 'mutator', checks: [{ id: 'test.replace', parameters: { from: '555-1234', to: '[phone]' } }] }] };
    const res = await call(config, chatBody('call 555-1234'), { 'x-gateway-trace-id': 'hooks-transform' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe('You said: call [phone]');
    expect(upstream.received.at(-1)).toEqual(chatBody('call [phone]'));
    const row = await logRow('hooks-transform');
    expect(JSON.parse(row.request_body as string)).toEqual(chatBody('call [phone]'));
  });

  test('a failing guardrail without deny: the answer as it is, plus hook_results in the body', async () => {
    const config = { input_guardrails: [{ id: 'warn', 'test.fail': {} }], output_guardrails: [{ id: 'out-ok', 'test.pass': {} }] };
    const res = await call(config);
    expect(res.status).toBe(200);
    const body = (await res.json()) as JsonObject & { hook_results: HookResult[] };
    expect(body.choices).toEqual(chatAnswer('You said: hello there').choices as never);
    expect(body.hook_results.map((r) => [r.id, r.verdict])).toEqual([
      ['warn', false],
      ['out-ok', true],
    ]);
  });

  test('deny on output: the answer is replaced by 400 guardrail_denied', async () => {
    const config = { output_guardrails: [{ id: 'no-echo', deny: true, 'test.contains': { word: 'You said' } }] };
    const made = await providerCalls(async () => {
      const res = await call(config, chatBody(), { 'x-gateway-trace-id': 'hooks-deny-out' });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { type: string; message: string }; hook_results: HookResult[] };
      expect(body.error.type).toBe('guardrail_denied');
      expect(body.error.message).toContain('answer was denied');
      expect(body.hook_results[0]).toMatchObject({ id: 'no-echo', verdict: false, deny: true });
    });
    expect(made).toBe(1);
    expect(await logRow('hooks-deny-out')).toMatchObject({ status: 400, error_code: 'guardrail_denied', provider: 'openai' });
  });

  test('async hooks do not delay the answer; their results and feedback still reach the log', async () => {
    const config = {
      input_guardrails: [{ id: 'slow-audit', async: true, 'test.slow': { ms: 1_000 }, on_success: { feedback: { value: 5, weight: 1, metadata: { by: 'audit' } } } }],
      after_request_hooks: [{ id: 'after', async: true, checks: [{ id: 'test.slow', parameters: { ms: 1_000, verdict: false } }], on_fail: { feedback: { value: -5, weight: 2 } } }],
    };
    const done = calls.count['test.slow:done'] ?? 0;
    const res = await call(config, chatBody(), { 'x-gateway-trace-id': 'hooks-async' });
    const body = (await res.json()) as JsonObject;
    expect(res.status).toBe(200);
    expect(body.hook_results).toBeUndefined();
    expect(calls.count['test.slow:done'] ?? 0).toBe(done); // neither slow check had finished
    const row = await logRow('hooks-async');
    const results = row.hook_results as HookResult[];
    expect(results.map((r) => [r.id, r.async, r.verdict, r.feedback])).toEqual([
      ['slow-audit', true, true, { value: 5, weight: 1, metadata: { by: 'audit' } }],
      ['after', true, false, { value: -5, weight: 2 }],
    ]);
  });

  test('streaming with output guardrails: forwarded as it arrives; a failure adds a hook_results event before [DONE]', async () => {
    const config = { output_guardrails: [{ id: 'no-slow', 'test.contains': { word: 'slow' } }] };
    const held = Promise.withResolvers<void>();
    upstream.gate = held.promise;
    const res = await call(config, { ...chatBody('go slow please'), stream: true }, { 'x-gateway-trace-id': 'hooks-stream' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    // The upstream holds the rest of its stream until the first chunk has reached the client.
    const first = await within(reader.read(), 10_000, 'the first chunk before the rest exists');
    held.resolve();
    upstream.gate = undefined;
    let text = new TextDecoder().decode(first.value);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const frames = text.split('\n\n').filter(Boolean).map((f) => f.slice(6));
    expect(frames.at(-1)).toBe('[DONE]');
    const event = JSON.parse(frames.at(-2) as string);
    expect(event).toMatchObject({ object: 'chat.completion.chunk', choices: [] });
    expect(event.hook_results[0]).toMatchObject({ id: 'no-slow', verdict: false, deny: false });
    expect(calls.seen.at(-1)).toEqual({ id: 'test.contains', phase: 'output', text: 'You said: go slow please' });
    const row = await logRow('hooks-stream');
    expect((row.hook_results as HookResult[])[0]?.id).toBe('no-slow');
  });

  test('streaming with a denying output guardrail: an error frame instead of [DONE]', async () => {
    const config = { output_guardrails: [{ id: 'no-slow', deny: true, 'test.contains': { word: 'slow' } }] };
    const res = await call(config, { ...chatBody('slow one'), stream: true });
    const text = await res.text();
    expect(text).not.toContain('[DONE]');
    const last = JSON.parse(text.trim().split('\n\n').at(-1)!.slice(6));
    expect(last.error.type).toBe('guardrail_denied');
    expect(last.hook_results[0]).toMatchObject({ id: 'no-slow', deny: true });
  });

  test('invalid check parameters and unknown check ids: 400 invalid_config at config validation, provider never called', async () => {
    const made = await providerCalls(async () => {
      const bad = await call({ input_guardrails: [{ 'test.contains': { word: '' } }] });
      expect(bad.status).toBe(400);
      const badBody = (await bad.json()) as { error: { type: string; message: string } };
      expect(badBody.error.type).toBe('invalid_config');
      expect(badBody.error.message).toContain('input_guardrails[0]["test.contains"].word: must be a non-empty string');

      const unknown = await call({ before_request_hooks: [{ id: 'h', checks: [{ id: 'test.missing', parameters: {} }] }] });
      expect(unknown.status).toBe(400);
      const unknownBody = (await unknown.json()) as { error: { type: string; message: string } };
      expect(unknownBody.error.type).toBe('invalid_config');
      expect(unknownBody.error.message).toContain('before_request_hooks[0].checks[0].id: unknown guardrail check "test.missing"');
    });
    expect(made).toBe(0);
  });
});

describe('GUARDRAILS_ENABLED=OFF', () => {
  test('no stages registered; hooks in configs are ignored (even unknown checks and deny); the provider gets the body unchanged', async () => {
    const off = await startInProcessGateway({ GUARDRAILS_ENABLED: 'OFF' });
    try {
      expect(off.plugins.loaded.map((p) => p.name)).toContain('@gateway/plugin-hooks');
      const stages = off.plugins.registry.stages.map((s) => s.name);
      expect(stages).not.toContain('hooks:input');
      expect(stages).not.toContain('hooks:output');
      const config = {
        provider: 'openai',
        api_key: 'sk-test',
        custom_host: upstream.url,
        input_guardrails: [{ deny: true, 'test.fail': {}, 'nobody.knows': {} }, 'some-saved-guardrail'],
        before_request_hooks: [{ id: 'h', checks: [{ id: 'test.replace', parameters: { from: 'hello', to: 'bye' } }] }],
        output_guardrails: [{ deny: true, 'test.fail': {} }],
      };
      const made = await providerCalls(async () => {
        const res = await off.handle(
          new Request('http://gateway.local/v1/chat/completions', {
            method: 'POST',
            headers: { ...providerHeaders(upstream.url), 'x-gateway-config': JSON.stringify(config) },
            body: JSON.stringify(chatBody()),
          }),
        );
        expect(res.status).toBe(200);
        const body = (await res.json()) as JsonObject;
        expect(body.hook_results).toBeUndefined();
        expect((body.choices as JsonObject[])[0]).toMatchObject({ message: { content: 'You said: hello there' } });
      });
      expect(made).toBe(1);
      expect(upstream.received.at(-1)).toEqual(chatBody());
    } finally {
      await off.close();
    }
  });
});
