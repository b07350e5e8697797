// OpenTelemetry traces (plugins/otel) against a local OTLP/HTTP receiver speaking the JSON protocol
// (OTEL_EXPORTER_OTLP_PROTOCOL=http/json): the span tree of a call (the call, its attempts, hook runs, cache
// lookups), the GenAI attributes, the caller's traceparent continued and forwarded to the provider when the config
// asks, bodies kept out unless asked, and a collector that is down costing only dropped spans, counted in /metrics.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './otlp-receiver.ts';

const T = 30_000;
const SERVER = 2;
const CLIENT = 3;
const STATUS_ERROR = 2;

let mock: OpenAIMock;
let receiver: OtlpReceiver;
let gateway: Gateway;

const otelEnv = (endpoint: string, extra: Record<string, string> = {}) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_SERVICE_NAME: 'gateway-under-test',
  OTEL_BSP_SCHEDULE_DELAY: '50',
  ...extra,
});

beforeAll(async () => {
  mock = await startOpenAIMock({ apiKey: null });
  receiver = startOtlpReceiver();
  gateway = await startInProcessGateway(otelEnv(receiver.url));
});

afterAll(async () => {
  await gateway?.close();
  receiver?.stop();
  await mock?.stop();
});

const leaf = (extra: Record<string, unknown> = {}) => ({ provider: 'openai', api_key: 'sk-test', custom_host: mock.url, ...extra });

async function chat(gw: Gateway, config: Record<string, unknown>, headers: Record<string, string> = {}, content = 'hello there') {
  const res = await gw.handle(
    new Request('http://gateway.test/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': JSON.stringify(config), ...headers },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
    }),
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, traceId: res.headers.get('x-gateway-trace-id') as string };
}

/** The call's span and its children, once the call span arrived (it ends last). */
async function treeOf(traceId: string) {
  const [root] = await receiver.waitFor((s) => s.attributes['gateway.trace_id'] === traceId && s.kind === SERVER);
  const r = root as ReceivedSpan;
  // Children end before the call's span and were exported with it or earlier.
  const children = receiver.spans.filter((s) => s.parentSpanId === r.spanId);
  const grandchildren = receiver.spans.filter((s) => children.some((c) => c.spanId === s.parentSpanId));
  return { root: r, children, grandchildren };
}

const hex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');

describe('span tree and attributes', () => {
  test('a retried call: the caller’s trace continued, one span per attempt, GenAI attributes, traceparent forwarded per attempt', async () => {
    mock.reset();
    mock.enqueue({ kind: 'error', status: 500 });
    const incomingTrace = hex(16);
    const incomingSpan = hex(8);
    const traceId = `otel-${hex(4)}`;
    const call = await chat(gateway, leaf({ retry: { attempts: 1, on_status_codes: [500] }, forward_headers: ['traceparent'] }), {
      traceparent: `00-${incomingTrace}-${incomingSpan}-01`,
      'x-gateway-trace-id': traceId,
    });
    expect(call.status).toBe(200);
    const usage = call.body.usage as { prompt_tokens: number; completion_tokens: number };

    const { root, children } = await treeOf(traceId);
    expect(root.traceId).toBe(incomingTrace);
    expect(root.parentSpanId).toBe(incomingSpan);
    expect(root.name).toBe('chat gpt-4o-mini');
    expect(root.resource['service.name']).toBe('gateway-under-test');
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': call.body.model,
      'gen_ai.provider.name': 'openai',
      'gen_ai.usage.input_tokens': usage.prompt_tokens,
      'gen_ai.usage.output_tokens': usage.completion_tokens,
      'gen_ai.response.finish_reasons': ['stop'],
      'gateway.trace_id': traceId,
      'gateway.workspace.id': expect.any(String),
      'gateway.attempts': 2,
      'gateway.retries': 1,
      'http.response.status_code': 200,
    });
    expect(root.attributes['gateway.cost.usd_cents']).toBeGreaterThan(0);
    expect(root.attributes['gateway.request.body']).toBeUndefined();
    expect(root.attributes['gateway.response.body']).toBeUndefined();

    const attempts = children.filter((s) => s.kind === CLIENT).sort((a, b) => Number(a.attributes['gateway.attempt.retry']) - Number(b.attributes['gateway.attempt.retry']));
    expect(attempts.map((s) => [s.attributes['gateway.attempt.retry'], s.attributes['http.response.status_code'], s.traceId])).toEqual([
      [0, 500, incomingTrace],
      [1, 200, incomingTrace],
    ]);
    expect(attempts[0]!.status).toBe(STATUS_ERROR);
    expect(attempts[1]!.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o-mini', 'gateway.target.index': 'config' });
    // Each attempt reached the provider as the parent of the provider's own spans.
    expect(mock.requests.map((r) => r.headers.traceparent)).toEqual(attempts.map((a) => `00-${incomingTrace}-${a.spanId}-01`));
  }, T);

  test('without forward_headers the provider gets no traceparent; without one incoming, a new trace', async () => {
    mock.reset();
    const traceId = `otel-${hex(4)}`;
    const call = await chat(gateway, leaf(), { 'x-gateway-trace-id': traceId });
    expect(call.status).toBe(200);
    const { root, children } = await treeOf(traceId);
    expect(root.parentSpanId).toBeUndefined();
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(children.map((s) => s.traceId)).toEqual([root.traceId]);
    expect(mock.requests[0]!.headers.traceparent).toBeUndefined();
  }, T);

  test('cache lookups: a miss then a hit, each a child of its attempt', async () => {
    mock.reset();
    const config = leaf({ cache: { mode: 'simple' } });
    const content = `cache me ${hex(4)}`;
    const first = await chat(gateway, config, { 'x-gateway-trace-id': `otel-miss-${content}` }, content);
    const second = await chat(gateway, config, { 'x-gateway-trace-id': `otel-hit-${content}` }, content);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(mock.requests.length).toBe(1);
    for (const [traceId, status] of [
      [first.traceId, 'MISS'],
      [second.traceId, 'HIT'],
    ] as const) {
      const { root, children, grandchildren } = await treeOf(traceId);
      expect(root.attributes['gateway.cache.status']).toBe(status);
      const attempt = children.find((s) => s.kind === CLIENT) as ReceivedSpan;
      const lookups = grandchildren.filter((s) => s.name === 'gateway cache lookup');
      expect(lookups.map((s) => [s.parentSpanId, s.attributes['gateway.cache.status']])).toEqual([[attempt.spanId, status]]);
    }
  }, T);

  test('hook runs: input guardrails that allow, and that deny (no attempt then)', async () => {
    mock.reset();
    const config = leaf({ input_guardrails: [{ id: 'no-pw', deny: true, 'default.contains': { words: ['password'], operator: 'none' } }] });
    const allowed = await chat(gateway, config, {}, 'nothing secret');
    const denied = await chat(gateway, config, {}, 'my password is hunter2');
    expect([allowed.status, denied.status]).toEqual([200, 400]);

    const ok = await treeOf(allowed.traceId);
    const okHooks = ok.children.filter((s) => s.name === 'gateway hooks input');
    expect(okHooks.map((s) => s.status)).toEqual([0]);
    expect(ok.children.filter((s) => s.kind === CLIENT).length).toBe(1);

    const no = await treeOf(denied.traceId);
    expect(no.children.map((s) => [s.name, s.status])).toEqual([['gateway hooks input', STATUS_ERROR]]);
    expect(no.root.attributes).toMatchObject({ 'http.response.status_code': 400, 'error.type': 'guardrail_denied', 'gateway.attempts': 0 });
    expect(no.root.status).toBe(STATUS_ERROR);
  }, T);

  test('/metrics counts the spans delivered', async () => {
    const text = await (await gateway.handle(new Request('http://gateway.test/metrics'))).text();
    const exported = Number(/^gateway_otel_spans_exported_total (\d+)$/m.exec(text)?.[1]);
    expect(exported).toBeGreaterThanOrEqual(receiver.spans.length);
    expect(text).toContain('gateway_otel_spans_dropped_total{reason="export_failed"} 0');
  }, T);
});

describe('options and failures', () => {
  test('GATEWAY_OTEL_CAPTURE_BODIES=ON puts the request and answer bodies on the call span', async () => {
    const own = startOtlpReceiver();
    const gw = await startInProcessGateway(otelEnv(own.url, { GATEWAY_OTEL_CAPTURE_BODIES: 'ON' }));
    try {
      mock.reset();
      const call = await chat(gw, leaf(), {}, 'show my body');
      const [root] = await own.waitFor((s) => s.attributes['gateway.trace_id'] === call.traceId && s.kind === SERVER);
      expect(String(root!.attributes['gateway.request.body'])).toContain('show my body');
      expect(JSON.parse(String(root!.attributes['gateway.response.body'])).id).toBe(call.body.id);
    } finally {
      await gw.close();
      own.stop();
    }
  }, T);

  test('a collector that is down: every call answered, the spans dropped and counted', async () => {
    const down = startOtlpReceiver();
    const url = down.url;
    down.stop(); // nothing listens there any more
    const gw = await startInProcessGateway(otelEnv(url, { OTEL_EXPORTER_OTLP_TIMEOUT: '1000' }));
    try {
      mock.reset();
      for (let i = 0; i < 5; i++) expect((await chat(gw, leaf(), {}, `call ${i}`)).status).toBe(200);
      // Each call made two spans (the call, its attempt): all ten end as failed exports.
      const deadline = Date.now() + 20_000;
      let failed = 0;
      while (failed < 10 && Date.now() < deadline) {
        await Bun.sleep(50);
        const text = await (await gw.handle(new Request('http://gateway.test/metrics'))).text();
        failed = Number(/^gateway_otel_spans_dropped_total\{reason="export_failed"\} (\d+)$/m.exec(text)?.[1]);
      }
      expect(failed).toBe(10);
    } finally {
      await gw.close();
    }
  }, T);

  test('a collector that does not answer: the queue fills, further spans are dropped at once and counted', async () => {
    // Takes the connection and never answers: the first batch stays in flight until the export times out.
    const silent = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Promise<Response>(() => {}) });
    // A queue of 2: the first call's two spans are exported (and wait), the next two calls' four are dropped.
    const gw = await startInProcessGateway(otelEnv(`http://127.0.0.1:${silent.port}`, { OTEL_BSP_MAX_QUEUE_SIZE: '2', OTEL_EXPORTER_OTLP_TIMEOUT: '5000' }));
    try {
      mock.reset();
      for (let i = 0; i < 3; i++) expect((await chat(gw, leaf(), {}, `queued ${i}`)).status).toBe(200);
      const text = await (await gw.handle(new Request('http://gateway.test/metrics'))).text();
      expect(text.match(/^gateway_otel_spans_(dropped_total\{reason="\w+"\}|queued) \d+$/gm)).toEqual([
        'gateway_otel_spans_dropped_total{reason="queue_full"} 4',
        'gateway_otel_spans_dropped_total{reason="export_failed"} 0',
        'gateway_otel_spans_queued 2',
      ]);
    } finally {
      silent.stop(true); // the pending export fails now rather than at its timeout
      await gw.close();
    }
  }, T);

  test('the default protocol is http/protobuf', async () => {
    const own = startOtlpReceiver();
    const gw = await startInProcessGateway({ ...otelEnv(own.url), OTEL_EXPORTER_OTLP_PROTOCOL: '' });
    try {
      mock.reset();
      expect((await chat(gw, leaf())).status).toBe(200);
      const deadline = Date.now() + 10_000;
      while (own.contentTypes.length === 0 && Date.now() < deadline) await Bun.sleep(20);
      expect(own.contentTypes[0]).toBe('application/x-protobuf');
      expect(own.spans).toEqual([]);
    } finally {
      await gw.close();
      own.stop();
    }
  }, T);

  test('off without an OTLP endpoint: no series, no spans', async () => {
    const gw = await startInProcessGateway({ OTEL_SERVICE_NAME: 'no-endpoint' });
    try {
      const text = await (await gw.handle(new Request('http://gateway.test/metrics'))).text();
      expect(text).not.toContain('gateway_otel_');
      expect(gw.plugins.loaded.map((p) => p.name)).toContain('@gateway/plugin-otel');
    } finally {
      await gw.close();
    }
  }, T);
});
