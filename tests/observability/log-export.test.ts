// Request-log rows exported besides the database (plugins/log-export): to a webhook (batched, retried), as OTLP logs
// (HTTP/JSON) and as JSONL objects in an S3-compatible bucket, against local receivers written here; a sink that is
// down or does not answer only costs dropped rows, counted in /metrics, never a request.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type Family, parsePrometheusText, sampleValue } from '../helpers/prometheus-text.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const T = 30_000;
let mock: OpenAIMock;

beforeAll(async () => {
  mock = await startOpenAIMock({ apiKey: null });
});
afterAll(async () => {
  await mock?.stop();
});

type Row = Record<string, unknown>;
const fast = { LOG_EXPORT_FLUSH_MS: '50', LOG_EXPORT_S3_FLUSH_MS: '50', LOG_EXPORT_RETRY_BASE_MS: '20' };

async function chat(gw: Gateway, content: string): Promise<{ status: number; traceId: string }> {
  const res = await gw.handle(
    new Request('http://gateway.test/v1/chat/completions', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': TEST_ADMIN_KEY,
        'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: 'sk-test', custom_host: mock.url }),
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
    }),
  );
  await res.text();
  return { status: res.status, traceId: res.headers.get('x-gateway-trace-id') as string };
}

const scrape = async (gw: Gateway): Promise<Map<string, Family>> => parsePrometheusText(await (await gw.handle(new Request('http://gateway.test/metrics'))).text());

async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await Bun.sleep(20);
    value = await read();
  }
  return value;
}

/** A local HTTP receiver; `answer` decides each request's status (after reading its body). */
function receiver(answer: (index: number) => number | 'hang' = () => 200) {
  const received: { path: string; headers: Headers; body: Uint8Array }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const body = new Uint8Array(await request.arrayBuffer());
      const index = received.length;
      received.push({ path: new URL(request.url).pathname, headers: request.headers, body });
      const status = answer(index);
      if (status === 'hang') return new Promise<Response>(() => {});
      return new Response(status === 200 ? '{}' : 'try later', { status });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, received, stop: () => server.stop(true) };
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('sinks', () => {
  test('webhook: batches of rows, retried after failures, each row delivered once', async () => {
    const hook = receiver((i) => (i < 2 ? 503 : 200));
    const gw = await startInProcessGateway({ ...fast, LOG_EXPORT_WEBHOOK_URL: `${hook.url}/logs`, LOG_EXPORT_WEBHOOK_HEADERS: 'authorization=Bearer%20hook-secret' });
    try {
      const calls = [await chat(gw, 'first export'), await chat(gw, 'second export'), await chat(gw, 'third export')];
      expect(calls.map((c) => c.status)).toEqual([200, 200, 200]);
      const delivered = () => hook.received.filter((_, i) => i >= 2).flatMap((r) => (JSON.parse(text(r.body)) as { rows: Row[] }).rows);
      const rows = await until(delivered, (rows) => rows.length >= 3);
      expect(rows.map((r) => r.trace_id).sort()).toEqual(calls.map((c) => c.traceId).sort());
      expect(hook.received[0]!.headers.get('authorization')).toBe('Bearer hook-secret');
      expect(hook.received[0]!.path).toBe('/logs');
      const first = rows.find((r) => r.trace_id === calls[0]!.traceId) as Row;
      expect(first).toMatchObject({ status: 200, provider: 'openai', model: 'gpt-4o-mini', endpoint: 'chatComplete', method: 'POST', path: '/chat/completions', error_code: null });
      expect(first.prompt_tokens).toBeGreaterThan(0);
      expect(String(first.request_body)).toContain('first export');
      expect(JSON.parse(String(first.response_body)).object).toBe('chat.completion');
      const m = await until(() => scrape(gw), (m) => sampleValue(m, 'gateway_log_export_rows_total', { sink: 'webhook', result: 'sent' }) === 3);
      expect(sampleValue(m, 'gateway_log_export_rows_total', { sink: 'webhook', result: 'sent' })).toBe(3);
      expect(sampleValue(m, 'gateway_log_export_retries_total', { sink: 'webhook' })).toBeGreaterThanOrEqual(2);
      expect(sampleValue(m, 'gateway_log_export_rows_total', { sink: 'webhook', result: 'dropped_failed' })).toBe(0);
    } finally {
      await gw.close();
      hook.stop();
    }
  }, T);

  test('OTLP logs (HTTP/JSON): one log record per row; LOG_EXPORT_BODIES=OFF leaves bodies out', async () => {
    const collector = receiver();
    const gw = await startInProcessGateway({ ...fast, OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `${collector.url}/v1/logs`, LOG_EXPORT_BODIES: 'OFF' });
    try {
      const call = await chat(gw, 'a secret prompt');
      type Logs = { resourceLogs: { scopeLogs: { logRecords: { body: { stringValue: string }; attributes: { key: string; value: Record<string, unknown> }[]; severityText: string }[] }[] }[] };
      const records = () => collector.received.flatMap((r) => (JSON.parse(text(r.body)) as Logs).resourceLogs.flatMap((rl) => rl.scopeLogs.flatMap((sl) => sl.logRecords)));
      const [record] = await until(records, (r) => r.length >= 1);
      expect(collector.received[0]!.path).toBe('/v1/logs');
      expect(collector.received[0]!.headers.get('content-type')).toBe('application/json');
      const row = JSON.parse(record!.body.stringValue) as Row;
      expect(row.trace_id).toBe(call.traceId);
      expect('request_body' in row || 'response_body' in row).toBe(false);
      expect(record!.body.stringValue).not.toContain('a secret prompt');
      expect(record!.severityText).toBe('INFO');
      expect(record!.attributes).toContainEqual({ key: 'gateway.trace_id', value: { stringValue: call.traceId } });
    } finally {
      await gw.close();
      collector.stop();
    }
  }, T);

  test('S3: JSONL objects under a dated key, SigV4-signed with the payload hash', async () => {
    const bucket = receiver();
    const gw = await startInProcessGateway({
      ...fast,
      LOG_EXPORT_S3_BUCKET: 'logs-bucket',
      LOG_EXPORT_S3_ENDPOINT: bucket.url,
      LOG_EXPORT_S3_REGION: 'eu-west-1',
      LOG_EXPORT_S3_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      LOG_EXPORT_S3_SECRET_ACCESS_KEY: 'secret-example',
      LOG_EXPORT_S3_PREFIX: 'gw/',
    });
    try {
      const calls = [await chat(gw, 'to the bucket 1'), await chat(gw, 'to the bucket 2')];
      const lines = () => bucket.received.flatMap((r) => text(r.body).trimEnd().split('\n').map((l) => JSON.parse(l) as Row));
      const rows = await until(lines, (l) => l.length >= 2);
      expect(rows.map((r) => r.trace_id).sort()).toEqual(calls.map((c) => c.traceId).sort());
      const put = bucket.received[0]!;
      expect(put.path).toMatch(/^\/logs-bucket\/gw\/\d{4}\/\d{2}\/\d{2}\/\d{6}-[\w-]+-1\.jsonl$/);
      expect(put.headers.get('authorization')).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/s3\/aws4_request, SignedHeaders=[^,]*x-amz-content-sha256[^,]*, Signature=[0-9a-f]{64}$/);
      expect(put.headers.get('x-amz-content-sha256')).toBe(new Bun.CryptoHasher('sha256').update(put.body).digest('hex'));
    } finally {
      await gw.close();
      bucket.stop();
    }
  }, T);
});

describe('backpressure', () => {
  test('a webhook that is down: every call answered, the rows dropped after the retries and counted', async () => {
    const down = receiver();
    const url = down.url;
    down.stop();
    const gw = await startInProcessGateway({ ...fast, LOG_EXPORT_WEBHOOK_URL: url, LOG_EXPORT_ATTEMPTS: '2' });
    try {
      for (let i = 0; i < 4; i++) expect((await chat(gw, `lost ${i}`)).status).toBe(200);
      const m = await until(() => scrape(gw), (m) => sampleValue(m, 'gateway_log_export_rows_total', { sink: 'webhook', result: 'dropped_failed' }) === 4);
      expect(sampleValue(m, 'gateway_log_export_rows_total', { sink: 'webhook', result: 'dropped_failed' })).toBe(4);
      expect(sampleValue(m, 'gateway_log_export_rows_total', { sink: 'webhook', result: 'sent' })).toBe(0);
    } finally {
      await gw.close();
    }
  }, T);

  test('a full queue drops rows at once and counts them', async () => {
    const silent = receiver(() => 'hang');
    // Flushed only by a batch of 100 or a minute's timer: the queue of 2 fills with the first two rows.
    const gw = await startInProcessGateway({ LOG_EXPORT_WEBHOOK_URL: silent.url, LOG_EXPORT_MAX_QUEUE: '2', LOG_EXPORT_BATCH_SIZE: '100', LOG_EXPORT_FLUSH_MS: '60000' });
    try {
      for (let i = 0; i < 5; i++) expect((await chat(gw, `queued ${i}`)).status).toBe(200);
      const m = await until(() => scrape(gw), (m) => sampleValue(m, 'gateway_log_export_rows_total', { sink: 'webhook', result: 'dropped_queue_full' }) === 3);
      expect(sampleValue(m, 'gateway_log_export_rows_total', { sink: 'webhook', result: 'dropped_queue_full' })).toBe(3);
      expect(sampleValue(m, 'gateway_log_export_queued', { sink: 'webhook' })).toBe(2);
    } finally {
      silent.stop();
      await gw.close();
    }
  }, T);

  test('no sink configured: nothing registered, no series', async () => {
    const gw = await startInProcessGateway();
    try {
      expect((await chat(gw, 'no export')).status).toBe(200);
      expect((await scrape(gw)).has('gateway_log_export_rows_total')).toBe(false);
    } finally {
      await gw.close();
    }
  }, T);
});
