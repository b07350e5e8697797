// The circuit breaker through the whole gateway, in-process: a fallback config whose primary fails is skipped once
// its circuit opens, probed after the cooldown (time is injected: configs cannot set a cooldown under 30 s) and
// used again once it recovers; with Redis two gateways share one circuit; with Redis unreachable requests still
// succeed. The upstream is a local Bun.serve speaking OpenAI chat JSON, one path prefix per target.

import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../../../tests/helpers/in-process.ts';
import { CircuitBreaker } from './breaker.ts';
import { Services } from '@gateway/sdk';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const COOLDOWN = 30_000;

interface Upstream {
  url: string;
  hits: Record<string, number>;
  /** Status each target answers with (200 = a chat completion). */
  status: Record<string, number>;
  stop(): void;
}

function startUpstream(): Upstream {
  const hits: Record<string, number> = {};
  const status: Record<string, number> = {};
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const name = new URL(req.url).pathname.split('/')[1] ?? '';
      hits[name] = (hits[name] ?? 0) + 1;
      const body = (await req.json().catch(() => ({}))) as { model?: string };
      const code = status[name] ?? 200;
      if (code !== 200)
        return Response.json({ error: { message: `${name} is down`, type: 'server_error', code: null, param: null } }, { status: code });
      return Response.json({
        id: `chatcmpl-${name}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model ?? 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: `hello from ${name}` }, finish_reason: 'stop', logprobs: null }],
        usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 },
      });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, hits, status, stop: () => void server.stop(true) };
}

let upstream: Upstream;
const gateways: Gateway[] = [];

beforeAll(() => {
  upstream = startUpstream();
});
afterAll(() => upstream?.stop());
afterEach(async () => {
  for (const gw of gateways.splice(0)) await gw.close();
  for (const k of Object.keys(upstream.hits)) delete upstream.hits[k];
  for (const k of Object.keys(upstream.status)) delete upstream.status[k];
});

async function gateway(env: Record<string, string> = {}): Promise<Gateway> {
  const gw = await startInProcessGateway({ LOG_LEVEL: process.env.CB_TEST_LOG ?? 'silent', ...env });
  gateways.push(gw);
  return gw;
}

function breakerOf(gw: Gateway): CircuitBreaker {
  const breaker = gw.plugins.registry.optional(Services.circuitBreaker);
  if (!(breaker instanceof CircuitBreaker)) throw new Error(`circuit breaker plugin not loaded: ${JSON.stringify(gw.plugins.refused)}`);
  return breaker;
}

/** A clock shared by the gateways of a test, starting now. */
function fakeClock(...gws: Gateway[]) {
  const clock = { now: Date.now() };
  for (const gw of gws) breakerOf(gw).now = () => clock.now;
  return clock;
}

/** primary (with a circuit breaker) → fallback. Unique credentials per test keep circuits of runs apart. */
function fallbackConfig(primary: string, fallback: string, threshold = 3) {
  const run = crypto.randomUUID();
  return JSON.stringify({
    strategy: { mode: 'fallback' },
    targets: [
      { provider: 'openai', api_key: `sk-primary-${run}`, custom_host: `${upstream.url}/${primary}/v1`, cb_config: { failure_threshold: threshold, cooldown_interval: COOLDOWN } },
      { provider: 'openai', api_key: `sk-fallback-${run}`, custom_host: `${upstream.url}/${fallback}/v1` },
    ],
  });
}

async function chat(gw: Gateway, config: string): Promise<{ status: number; index: string | null; content: string | undefined }> {
  const res = await gw.handle(
    new Request('http://gw.test/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': config },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    }),
  );
  const body = (await res.json()) as { choices?: { message: { content: string } }[] };
  return { status: res.status, index: res.headers.get('x-gateway-last-used-option-index'), content: body.choices?.[0]?.message.content };
}

const hits = (name: string) => upstream.hits[name] ?? 0;

describe('in-process gateway, in-process state', () => {
  test('the breaker is loaded and wired', async () => {
    const gw = await gateway();
    expect(gw.plugins.loaded.map((p) => p.name)).toContain('@gateway/plugin-circuit-breaker');
    expect(typeof breakerOf(gw).isAvailable).toBe('function');
  });

  test('a failing primary is skipped after failure_threshold failures, probed after the cooldown, used again once it recovers', async () => {
    const gw = await gateway();
    const clock = fakeClock(gw);
    const config = fallbackConfig('p1', 'f1');
    upstream.status.p1 = 503;

    // Closed: every request tries the primary, then falls back.
    for (let i = 0; i < 3; i++) {
      const r = await chat(gw, config);
      expect(r.status).toBe(200);
      expect(r.content).toBe('hello from f1');
      expect(r.index).toBe('config.targets[1]');
    }
    expect(hits('p1')).toBe(3);

    // Open: the primary is no longer called.
    for (let i = 0; i < 5; i++) {
      const r = await chat(gw, config);
      expect(r.status).toBe(200);
      expect(r.index).toBe('config.targets[1]');
    }
    expect(hits('p1')).toBe(3);
    expect(hits('f1')).toBe(8);

    // Still open just before the cooldown ends.
    clock.now += COOLDOWN - 1_000;
    await chat(gw, config);
    expect(hits('p1')).toBe(3);

    // Half-open: one probe; it fails, so the circuit opens for another cooldown.
    clock.now += 1_000;
    expect((await chat(gw, config)).status).toBe(200);
    expect(hits('p1')).toBe(4);
    for (let i = 0; i < 3; i++) await chat(gw, config);
    expect(hits('p1')).toBe(4);

    // The primary recovers; after the next cooldown the probe succeeds and the primary is used again.
    upstream.status.p1 = 200;
    clock.now += COOLDOWN;
    const probe = await chat(gw, config);
    expect(probe.content).toBe('hello from p1');
    expect(probe.index).toBe('config.targets[0]');
    const fallbackBefore = hits('f1');
    for (let i = 0; i < 3; i++) expect((await chat(gw, config)).index).toBe('config.targets[0]');
    expect(hits('p1')).toBe(8);
    expect(hits('f1')).toBe(fallbackBefore);
  });

  test('a 500 is not a failure by default: the circuit stays closed', async () => {
    const gw = await gateway();
    const config = fallbackConfig('p2', 'f2', 2);
    upstream.status.p2 = 500;
    for (let i = 0; i < 5; i++) expect((await chat(gw, config)).index).toBe('config.targets[1]');
    expect(hits('p2')).toBe(5);
  });

  test('a single-target config whose circuit is open answers 503 circuit_open without calling the provider', async () => {
    const gw = await gateway();
    const config = JSON.stringify({
      provider: 'openai',
      api_key: `sk-${crypto.randomUUID()}`,
      custom_host: `${upstream.url}/p3/v1`,
      cb_config: { failure_threshold: 2, cooldown_interval: COOLDOWN },
    });
    upstream.status.p3 = 502;
    expect((await chat(gw, config)).status).toBe(502);
    expect((await chat(gw, config)).status).toBe(502);
    const res = await gw.handle(
      new Request('http://gw.test/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': config },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      }),
    );
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('circuit_open');
    expect(hits('p3')).toBe(2);
  });
});

describe('with Redis (REDIS_URL)', () => {
  /** A gateway whose Redis connection is up (right after start the client may still be connecting). */
  async function redisGateway(env: Record<string, string>): Promise<Gateway> {
    const gw = await gateway(env);
    for (let i = 0; i < 200; i++) {
      if (await gw.state.get('ping').then(() => true, () => false)) return gw;
      await Bun.sleep(5);
    }
    throw new Error(`Redis at ${REDIS_URL} is not reachable`);
  }

  test('two gateways share one circuit: failures seen by gateway A open it for gateway B', async () => {
    const env = { REDIS_URL, CIRCUIT_BREAKER_KEY_PREFIX: `cb-test-${crypto.randomUUID()}:` };
    const a = await redisGateway(env);
    const b = await redisGateway(env);
    const clock = fakeClock(a, b);
    const config = fallbackConfig('p4', 'f4');
    upstream.status.p4 = 503;

    for (let i = 0; i < 3; i++) expect((await chat(a, config)).content).toBe('hello from f4');
    expect(hits('p4')).toBe(3);

    // B never saw a failure of this target, yet does not call it.
    for (let i = 0; i < 3; i++) {
      const r = await chat(b, config);
      expect(r.status).toBe(200);
      expect(r.content).toBe('hello from f4');
      expect(r.index).toBe('config.targets[1]');
    }
    expect(hits('p4')).toBe(3);
    expect(breakerOf(b).view().map((c) => c.status)).toEqual(['open']);

    // After the cooldown B probes; the primary has recovered, so the circuit closes, for A too (next refresh).
    upstream.status.p4 = 200;
    clock.now += COOLDOWN;
    expect((await chat(b, config)).content).toBe('hello from p4');
    expect(hits('p4')).toBe(4);
    await Bun.sleep(400);
    expect(breakerOf(a).view().map((c) => c.status)).toEqual(['closed']);
    expect((await chat(a, config)).content).toBe('hello from p4');
    expect(hits('p4')).toBe(5);
  });

  test('a gateway that already knew the circuit as closed learns it opened within its refresh interval', async () => {
    const env = { REDIS_URL, CIRCUIT_BREAKER_KEY_PREFIX: `cb-test-${crypto.randomUUID()}:` };
    const a = await redisGateway(env);
    const b = await redisGateway(env);
    fakeClock(a, b);
    const config = fallbackConfig('p5', 'f5', 2);
    expect((await chat(b, config)).content).toBe('hello from p5'); // B: circuit seen, closed
    upstream.status.p5 = 503;
    await chat(a, config);
    await chat(a, config);
    expect(hits('p5')).toBe(3);
    expect(breakerOf(a).view().map((c) => c.status)).toEqual(['open']);
    await Bun.sleep(400); // > the 250 ms refresh
    expect(breakerOf(b).view().map((c) => c.status)).toEqual(['open']);
    for (let i = 0; i < 3; i++) expect((await chat(b, config)).content).toBe('hello from f5');
    expect(hits('p5')).toBe(3);
  });

  test('Redis unreachable: requests still succeed and each gateway trips its own circuits', async () => {
    const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
    const closedPort = probe.port;
    probe.stop(true);
    const gw = await gateway({ REDIS_URL: `redis://127.0.0.1:${closedPort}` });
    expect(gw.state.kind).toBe('redis');
    const config = fallbackConfig('p6', 'f6', 2);

    const ok = await chat(gw, config);
    expect(ok.status).toBe(200);
    expect(ok.content).toBe('hello from p6');

    upstream.status.p6 = 503;
    for (let i = 0; i < 4; i++) {
      const r = await chat(gw, config);
      expect(r.status).toBe(200);
      expect(r.content).toBe('hello from f6');
    }
    // Local view only: the circuit still opened after two failures.
    expect(hits('p6')).toBe(3);
  });
});
