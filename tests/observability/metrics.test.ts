// GET /metrics as Prometheus scrapes it, parsed with a strict text-format parser (tests/helpers/prometheus-text.ts):
// per provider and model the errors, durations (whole call, provider, gateway-added), tokens and cost; cache
// lookups, retries and fallbacks, rate-limit refusals, circuit states, and the database and Redis health.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type Family, parsePrometheusText, sampleSum, sampleValue } from '../helpers/prometheus-text.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const T = 30_000;
let mock: OpenAIMock;
let gateway: Gateway;

beforeAll(async () => {
  mock = await startOpenAIMock({ apiKey: null });
  gateway = await startInProcessGateway();
});

afterAll(async () => {
  await gateway?.close();
  await mock?.stop();
});

const leaf = (extra: Record<string, unknown> = {}) => ({ provider: 'openai', api_key: 'sk-test', custom_host: mock.url, ...extra });

async function chat(config: Record<string, unknown>, content = 'hello', extra: { headers?: Record<string, string>; model?: string; stream?: boolean } = {}) {
  const res = await gateway.handle(
    new Request('http://gateway.test/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': JSON.stringify(config), ...extra.headers },
      body: JSON.stringify({ model: extra.model ?? 'gpt-4o-mini', messages: [{ role: 'user', content }], ...(extra.stream ? { stream: true } : {}) }),
    }),
  );
  const text = await res.text();
  return { status: res.status, json: (extra.stream ? undefined : JSON.parse(text)) as Record<string, unknown> | undefined };
}

async function scrape(gw = gateway): Promise<Map<string, Family>> {
  const res = await gw.handle(new Request('http://gateway.test/metrics'));
  expect(res.headers.get('content-type')).toContain('text/plain');
  return parsePrometheusText(await res.text());
}

/** Finally stages (usage, cost) run after the answer: poll until `done` or give up (a hang guard, not a timing test). */
async function settled(done: (m: Map<string, Family>) => boolean): Promise<Map<string, Family>> {
  const deadline = Date.now() + 10_000;
  let m = await scrape();
  while (!done(m) && Date.now() < deadline) {
    await Bun.sleep(20);
    m = await scrape();
  }
  return m;
}

const model = (name: string) => ({ endpoint: 'chatComplete', provider: 'openai', model: name });

describe('per provider and model', () => {
  test('tokens, cost, durations and the gateway-added latency of successful calls', async () => {
    mock.reset();
    const answers = [await chat(leaf()), await chat(leaf(), 'a second question, longer than the first one')];
    const usages = answers.map((a) => a.json?.usage as { prompt_tokens: number; completion_tokens: number });
    const input = usages.reduce((a, u) => a + u.prompt_tokens, 0);
    const output = usages.reduce((a, u) => a + u.completion_tokens, 0);
    const labels = model('gpt-4o-mini');
    const m = await settled((m) => sampleSum(m, 'gateway_cost_usd_cents_total', labels) > 0);
    expect(sampleValue(m, 'gateway_tokens_total', { ...labels, direction: 'input' })).toBe(input);
    expect(sampleValue(m, 'gateway_tokens_total', { ...labels, direction: 'output' })).toBe(output);
    expect(sampleValue(m, 'gateway_cost_usd_cents_total', labels)).toBeGreaterThan(0);
    expect(sampleValue(m, 'gateway_call_duration_seconds_count', labels)).toBe(2);
    expect(sampleValue(m, 'gateway_provider_duration_seconds_count', labels)).toBe(2);
    expect(sampleValue(m, 'gateway_added_duration_seconds_count', labels)).toBe(2);
    expect(m.get('gateway_added_duration_seconds')?.type).toBe('histogram');
    expect(sampleSum(m, 'gateway_errors_total', labels)).toBe(0);
  }, T);

  test('a streamed call counts its tokens and its duration, not a gateway-added latency', async () => {
    mock.reset();
    const labels = model('gpt-4o');
    expect((await chat(leaf(), 'stream me', { model: 'gpt-4o', stream: true })).status).toBe(200);
    const m = await settled((m) => sampleSum(m, 'gateway_tokens_total', { ...labels, direction: 'output' }) > 0);
    expect(sampleValue(m, 'gateway_call_duration_seconds_count', labels)).toBe(1);
    expect(sampleSum(m, 'gateway_added_duration_seconds_count', labels)).toBe(0);
  }, T);

  test('errors by code; a retry and a fallback', async () => {
    mock.reset();
    mock.enqueue({ kind: 'error', status: 400, message: 'bad' });
    expect((await chat(leaf(), 'refused', { model: 'gpt-4.1' })).status).toBe(400);
    // One retry of the first target, then the fallback to the second: one retry, one fallback.
    mock.enqueue({ kind: 'error', status: 500 }, { kind: 'error', status: 500 });
    const fallback = { strategy: { mode: 'fallback' }, targets: [leaf({ retry: { attempts: 1, on_status_codes: [500] } }), leaf()] };
    expect((await chat(fallback, 'retried', { model: 'gpt-4.1-mini' })).status).toBe(200);
    const m = await settled((m) => sampleSum(m, 'gateway_fallbacks_total') > 0);
    const errors = m.get('gateway_errors_total')?.samples.filter((s) => s.labels.model === 'gpt-4.1') ?? [];
    expect(errors.map((s) => [s.labels.code, s.value])).toEqual([[expect.any(String), 1]]);
    expect(sampleValue(m, 'gateway_retries_total', model('gpt-4.1-mini'))).toBe(1);
    expect(sampleValue(m, 'gateway_fallbacks_total', model('gpt-4.1-mini'))).toBe(1);
  }, T);

  test('a client sending many model names cannot grow the exposition past the cap', async () => {
    mock.setBehavior({ kind: 'error', status: 404, message: 'no such model' });
    try {
      for (let i = 0; i < 110; i++) await chat(leaf(), 'x', { model: `made-up-${i}` });
    } finally {
      mock.setBehavior(null);
    }
    const m = await scrape();
    const models = new Set(m.get('gateway_call_duration_seconds')?.samples.filter((s) => s.labels.provider === 'openai').map((s) => s.labels.model));
    expect(models.size).toBe(101); // 100 names, then `other`
    expect(models.has('other')).toBe(true);
    expect(sampleValue(m, 'gateway_call_duration_seconds_count', model('other'))).toBeGreaterThanOrEqual(10);
  }, T);
});

describe('cache, limits, circuits, health', () => {
  test('cache lookups by result', async () => {
    mock.reset();
    const config = leaf({ cache: { mode: 'simple' } });
    const before = await scrape();
    await chat(config, 'cache metrics');
    await chat(config, 'cache metrics');
    const m = await scrape();
    const delta = (result: string) => sampleSum(m, 'gateway_cache_lookups_total', { result }) - sampleSum(before, 'gateway_cache_lookups_total', { result });
    expect([delta('MISS'), delta('HIT')]).toEqual([1, 1]);
  }, T);

  test('a rate-limit refusal is counted; a provider’s own 429 is not', async () => {
    mock.reset();
    const policy = await gateway.handle(
      new Request('http://gateway.test/v1/policies/rate-limits', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY },
        body: JSON.stringify({ name: 'one a minute', type: 'requests', unit: 'rpm', value: 1, conditions: [{ key: 'metadata.limit', value: 'metrics' }] }),
      }),
    );
    expect(policy.status).toBe(201);
    const limited = { headers: { 'x-gateway-metadata': JSON.stringify({ limit: 'metrics' }) } };
    expect((await chat(leaf(), 'one', limited)).status).toBe(200);
    expect((await chat(leaf(), 'two', limited)).status).toBe(429);
    mock.enqueue({ kind: 'error', status: 429 });
    expect((await chat(leaf(), 'provider busy')).status).toBe(429);
    const m = await scrape();
    expect(sampleValue(m, 'gateway_limit_rejections_total', { code: 'rate_limit_exceeded' })).toBe(1);
  }, T);

  test('circuit states', async () => {
    mock.reset();
    mock.setBehavior({ kind: 'error', status: 503 });
    try {
      const config = leaf({ cb_config: { failure_threshold: 1, cooldown_interval: 30_000 } });
      await chat(config, 'break it');
      const m = await settled((m) => sampleValue(m, 'gateway_circuits', { state: 'open' }) === 1);
      expect(sampleValue(m, 'gateway_circuits', { state: 'open' })).toBe(1);
      expect(m.get('gateway_circuits')?.type).toBe('gauge');
    } finally {
      mock.setBehavior(null);
    }
  }, T);

  test('the database is up; Redis is only reported with REDIS_URL', async () => {
    const m = await scrape();
    expect(sampleValue(m, 'gateway_database_up')).toBe(1);
    expect(m.has('gateway_redis_up')).toBe(false);
  }, T);

  test('Redis up, and a Redis that does not answer', async () => {
    const up = await startInProcessGateway({ REDIS_URL: 'redis://127.0.0.1:6379' });
    try {
      const deadline = Date.now() + 10_000;
      let m = await scrape(up);
      while (sampleValue(m, 'gateway_redis_up') !== 1 && Date.now() < deadline) {
        await Bun.sleep(50);
        m = await scrape(up);
      }
      expect(sampleValue(m, 'gateway_redis_up')).toBe(1);
    } finally {
      await up.close();
    }
    // Nothing listens on this port: the first probe fails within the store's command timeout.
    const closed = Bun.serve({ port: 0, fetch: () => new Response() });
    const port = closed.port;
    closed.stop(true);
    const down = await startInProcessGateway({ REDIS_URL: `redis://127.0.0.1:${port}` });
    try {
      const deadline = Date.now() + 15_000;
      let m = await scrape(down);
      while (sampleValue(m, 'gateway_redis_probe_failures_total') === 0 && Date.now() < deadline) {
        await Bun.sleep(50);
        m = await scrape(down);
      }
      expect(sampleValue(m, 'gateway_redis_up')).toBe(0);
      expect(sampleValue(m, 'gateway_redis_probe_failures_total')).toBeGreaterThan(0);
    } finally {
      await down.close();
    }
  }, T);
});

describe('the strict parser refuses what Prometheus would', () => {
  const refused: [string, string][] = [
    ['a sample before its TYPE', 'x_total 1\n'],
    ['a TYPE given twice', '# TYPE x counter\n# TYPE x counter\n'],
    ['a series given twice', '# TYPE x counter\nx{a="1"} 1\nx{a="1"} 2\n'],
    ['an unquoted label', '# TYPE x counter\nx{a=1} 1\n'],
    ['a bad value', '# TYPE x counter\nx 1,5\n'],
    ['no final newline', '# TYPE x counter\nx 1'],
    ['a +Inf bucket that is not the count', '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n'],
    ['buckets that decrease', '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="2"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n'],
  ];
  for (const [what, text] of refused) test(what, () => expect(() => parsePrometheusText(text)).toThrow());

  test('a valid exposition', () => {
    const m = parsePrometheusText('# HELP x_total Things.\n# TYPE x_total counter\nx_total{a="q\\"uote",b="2"} 3\n');
    expect(m.get('x_total')?.samples).toEqual([{ name: 'x_total', labels: { a: 'q"uote', b: '2' }, value: 3 }]);
  });
});
