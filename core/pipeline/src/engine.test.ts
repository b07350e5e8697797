import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import {
  type AttemptRecord,
  type AttemptStage,
  Errors,
  GatewayError,
  type GatewayConfig,
  type GatewayRequest,
  type JsonObject,
  type ProviderAdapter,
  type Strategy,
  type TargetConfig,
} from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import { ClientGoneError } from './call.ts';
import { type EngineDeps, route } from './engine.ts';
import { HostGuard } from './host-guard.ts';

// ---- a fake upstream whose answers each test scripts, per provider ------------------------------------------------

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}
interface Seen {
  provider: string;
  body: JsonObject;
  headers: Record<string, string>;
}

const scripts = new Map<string, Answer[]>();
const seen: Seen[] = [];
const ok = (provider: string): Answer => ({ status: 200, body: { id: `cmpl-${provider}`, object: 'chat.completion', choices: [] } });
const fail = (status: number, extra: Partial<Answer> = {}): Answer => ({ status, body: { error: { message: `failed with ${status}`, type: 'server_error', code: null } }, ...extra });

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(request) {
    const provider = new URL(request.url).pathname.split('/')[1] as string;
    seen.push({ provider, body: (await request.json()) as JsonObject, headers: Object.fromEntries(request.headers) });
    const queue = scripts.get(provider) ?? [];
    // The last scripted answer repeats once the queue runs dry.
    const answer = (queue.length > 1 ? queue.shift() : queue[0]) ?? ok(provider);
    return Response.json(answer.body ?? {}, { status: answer.status, headers: answer.headers });
  },
});
afterAll(() => server.stop(true));

function script(provider: string, ...answers: Answer[]) {
  scripts.set(provider, answers);
}
const calls = (provider: string) => seen.filter((s) => s.provider === provider).length;

beforeEach(() => {
  scripts.clear();
  seen.length = 0;
});

// ---- fake adapters and the engine's dependencies -----------------------------------------------------------------

function adapter(id: string, base = `${server.url.origin}/${id}`): ProviderAdapter {
  return {
    id,
    baseUrl: () => base,
    authorize: (call, target) => ({ ...call, headers: { ...call.headers, authorization: `Bearer ${String(target.api_key ?? 'none')}` } }),
    endpoints: { chatComplete: { path: () => '/chat/completions' } },
  };
}

const firstAvailable: Strategy = {
  mode: 'single',
  plan: (node, ctx) => {
    const all = (node.targets ?? []).map((_, i) => i);
    return all.filter((i) => ctx.isAvailable(`[${i}]`)).slice(0, 1);
  },
  next: () => false,
};
const inOrder: Strategy = {
  mode: 'fallback',
  plan: (node, ctx) => (node.targets ?? []).map((_, i) => i).filter((i) => ctx.isAvailable(`[${i}]`)),
  next: (result) => result.status < 200 || result.status >= 300,
};
const nothing: Strategy = { mode: 'loadbalance', plan: () => [], next: () => false };

function deps(extra: Partial<EngineDeps> = {}): EngineDeps {
  return {
    strategies: new Map([firstAvailable, inOrder, nothing].map((s) => [s.mode, s])),
    attemptStages: [],
    call: { hostGuard: new HostGuard([]), captureLimit: 65_536, streamIdleTimeoutMs: 5_000, defaultTimeoutMs: 10_000 },
    resolveProvider: (target) => {
      const name = String(target.provider);
      if (name === 'ghost') throw Errors.unknownProvider(name);
      const base = name === 'down' ? 'http://127.0.0.1:1' : undefined;
      return { provider: adapter(name, base), target };
    },
    ...extra,
  };
}

function request(config: GatewayConfig, body: JsonObject = { model: 'client-model', messages: [{ role: 'user', content: 'hi' }] }, signal = new AbortController().signal): GatewayRequest {
  return buildGatewayRequest({ body, config, signal });
}

async function run(config: GatewayConfig, d: EngineDeps = deps(), req = request(config)) {
  const log: AttemptRecord[] = [];
  const result = await route(req, config, 'config', d, log);
  const text = await result.response.text();
  return { result, log, text, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

// ---- tests ----------------------------------------------------------------------------------------------------------

describe('route: leaves and recursion', () => {
  test('a config without strategy is a leaf: one call, index "config", no retries', async () => {
    const { result, log, json } = await run({ provider: 'a', api_key: 'ka' });
    expect(result.status).toBe(200);
    expect(result.index).toBe('config');
    expect(result.retries).toBe(0);
    expect(result.providerId).toBe('a');
    expect(json).toEqual({ id: 'cmpl-a', object: 'chat.completion', choices: [] });
    expect(seen[0]?.headers.authorization).toBe('Bearer ka');
    expect(log).toMatchObject([{ index: 'config', providerId: 'a', retry: 0, status: 200 }]);
  });

  test('a nested target answers with its full path, e.g. config.targets[1].targets[0]', async () => {
    script('a', fail(500));
    const config: GatewayConfig = {
      strategy: { mode: 'fallback' },
      targets: [{ provider: 'a' }, { strategy: { mode: 'fallback' }, targets: [{ provider: 'b' }, { provider: 'c' }] }],
    };
    const { result, log } = await run(config);
    expect(result.status).toBe(200);
    expect(result.providerId).toBe('b');
    expect(result.index).toBe('config.targets[1].targets[0]');
    expect(log.map((l) => [l.index, l.status])).toEqual([
      ['config.targets[0]', 500],
      ['config.targets[1].targets[0]', 200],
    ]);
    expect(calls('c')).toBe(0);
  });

  test('three levels deep, the deepest path is kept', async () => {
    script('x', fail(503));
    script('y', fail(503));
    const config: GatewayConfig = {
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'x' },
        { strategy: { mode: 'fallback' }, targets: [{ provider: 'y' }, { strategy: { mode: 'single' }, targets: [{ provider: 'z' }] }] },
      ],
    };
    const { result } = await run(config);
    expect(result.index).toBe('config.targets[1].targets[1].targets[0]');
    expect(result.providerId).toBe('z');
  });

  test('when every target fails, the last failure is the answer', async () => {
    script('a', fail(500));
    script('b', fail(429));
    const { result, json } = await run({ strategy: { mode: 'fallback' }, targets: [{ provider: 'a' }, { provider: 'b' }] });
    expect(result.status).toBe(429);
    expect(result.index).toBe('config.targets[1]');
    expect(json).toMatchObject({ error: { message: 'failed with 429' }, provider: 'b' });
  });

  test('a child inherits its parent settings (here retry and override_params) and the request body is never changed', async () => {
    script('a', fail(500));
    const req = request({});
    const before = structuredClone(req.body);
    const config: GatewayConfig = {
      strategy: { mode: 'fallback' },
      retry: { attempts: 1 },
      override_params: { temperature: 0 },
      targets: [{ provider: 'a', override_params: { model: 'model-a' } }, { provider: 'b' }],
    };
    const { result } = await run(config, deps(), req);
    expect(result.providerId).toBe('b');
    expect(calls('a')).toBe(2); // 1 + retry.attempts inherited from the root
    expect(seen.filter((s) => s.provider === 'a').every((s) => s.body.model === 'model-a' && s.body.temperature === 0)).toBe(true);
    expect(seen.find((s) => s.provider === 'b')?.body).toMatchObject({ model: 'client-model', temperature: 0 });
    expect(req.body).toEqual(before as JsonObject);
  });

  test('an unknown strategy mode is a 400 naming the mode', async () => {
    const error = await route(request({}), { strategy: { mode: 'conditional' }, targets: [{ provider: 'a' }] }, 'config', deps(), []).catch((e) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(400);
    expect((error as GatewayError).message).toContain('conditional');
  });

  test('a strategy that plans nothing is a 400', async () => {
    const error = await route(request({}), { strategy: { mode: 'loadbalance' }, targets: [{ provider: 'a' }] }, 'config', deps(), []).catch((e) => e);
    expect((error as GatewayError).status).toBe(400);
  });

  test('a leaf whose provider cannot be resolved answers with that error (400), without a call', async () => {
    const { result, json } = await run({ provider: 'ghost' });
    expect(result.status).toBe(400);
    expect(result.retries).toBe(0);
    expect((json as { error: { code: string } }).error.code).toBe('unknown_provider');
    expect(seen).toHaveLength(0);
  });

  test('the availability check (circuit breaker) is asked with the full path of each child', async () => {
    const asked: string[] = [];
    const d = deps({
      isAvailable: (_req, index) => {
        asked.push(index);
        return index !== 'config.targets[1].targets[0]';
      },
    });
    const config: GatewayConfig = {
      strategy: { mode: 'fallback' },
      targets: [{ provider: 'a' }, { strategy: { mode: 'fallback' }, targets: [{ provider: 'b' }, { provider: 'c' }] }],
    };
    script('a', fail(500));
    const { result } = await run(config, d);
    // Attempts are recorded (and breakers keyed) by full path; the check must use the same key, or the
    // breaker of config.targets[0] would also close config.targets[1].targets[0].
    expect(asked).toContain('config.targets[0]');
    expect(asked).toContain('config.targets[1].targets[0]');
    expect(result.index).toBe('config.targets[1].targets[1]');
  });
});

describe('route: retries', () => {
  test('retried statuses are retried up to retry.attempts; the count of retries is reported', async () => {
    script('a', fail(503), fail(502), ok('a'));
    const { result, log } = await run({ provider: 'a', retry: { attempts: 3 } });
    expect(result.status).toBe(200);
    expect(result.retries).toBe(2);
    expect(calls('a')).toBe(3);
    expect(log.map((l) => [l.retry, l.status])).toEqual([
      [0, 503],
      [1, 502],
      [2, 200],
    ]);
  });

  test('a target is called at most 1 + attempts times; -1 when retries ran out', async () => {
    script('a', fail(500));
    const { result } = await run({ provider: 'a', retry: { attempts: 2 } });
    expect(calls('a')).toBe(3);
    expect(result.status).toBe(500);
    expect(result.retries).toBe(-1);
  });

  test('without retry config a failure is not retried, and the count is 0', async () => {
    script('a', fail(503));
    const { result } = await run({ provider: 'a' });
    expect(calls('a')).toBe(1);
    expect(result.retries).toBe(0);
  });

  test('a status outside on_status_codes is not retried', async () => {
    script('a', fail(500));
    const { result } = await run({ provider: 'a', retry: { attempts: 3, on_status_codes: [429] } });
    expect(calls('a')).toBe(1);
    expect(result.status).toBe(500);
    expect(result.retries).toBe(0);
  });

  test('custom on_status_codes are retried', async () => {
    script('a', fail(418), ok('a'));
    const { result } = await run({ provider: 'a', retry: { attempts: 1, on_status_codes: [418] } });
    expect(calls('a')).toBe(2);
    expect(result.status).toBe(200);
    expect(result.retries).toBe(1);
  });

  test('context_length_exceeded is never retried, even when its status is listed', async () => {
    script('a', {
      status: 400,
      body: { error: { message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error', code: 'context_length_exceeded', param: 'messages' } },
    });
    const { result, json } = await run({ provider: 'a', retry: { attempts: 3, on_status_codes: [400] } });
    expect(calls('a')).toBe(1);
    expect(result.status).toBe(400);
    expect(result.retries).toBe(0);
    expect(json).toMatchObject({ error: { code: 'context_length_exceeded', message: "This model's maximum context length is 8192 tokens" }, provider: 'a' });
  });

  test('an unreachable upstream is retried whatever the codes say', async () => {
    const { result } = await run({ provider: 'down', retry: { attempts: 1, on_status_codes: [418] } });
    expect(result.status).toBe(502);
    expect(result.error?.code).toBe('upstream_unreachable');
    expect(result.retries).toBe(-1);
  });

  test('with use_retry_after_headers the provider Retry-After-ms sets the pause', async () => {
    script('a', fail(429, { headers: { 'retry-after-ms': '300' } }), ok('a'));
    const started = performance.now();
    const { result } = await run({ provider: 'a', retry: { attempts: 1, use_retry_after_headers: true } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(280);
    expect(result.status).toBe(200);
    expect(result.retries).toBe(1);
  });

  test('a Retry-After longer than the cap is not waited for: the answer goes back, retries -1', async () => {
    script('a', fail(429, { headers: { 'retry-after': '3600' } }), ok('a'));
    const started = performance.now();
    const { result } = await run({ provider: 'a', retry: { attempts: 3, use_retry_after_headers: true } });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(calls('a')).toBe(1);
    expect(result.status).toBe(429);
    expect(result.retries).toBe(-1);
  });

  test('each fallback target has its own retries; the count is that of the answering target', async () => {
    script('a', fail(503));
    script('b', fail(503), ok('b'));
    const config: GatewayConfig = {
      strategy: { mode: 'fallback' },
      retry: { attempts: 1 },
      targets: [{ provider: 'a' }, { provider: 'b' }],
    };
    const { result } = await run(config);
    expect(calls('a')).toBe(2);
    expect(calls('b')).toBe(2);
    expect(result.index).toBe('config.targets[1]');
    expect(result.retries).toBe(1);
  });

  test('the client going away during the pause between retries ends routing with ClientGoneError', async () => {
    script('a', fail(503));
    const controller = new AbortController();
    const config: TargetConfig = { provider: 'a', retry: { attempts: 5 } };
    setTimeout(() => controller.abort(), 30);
    const error = await route(request(config, undefined, controller.signal), config, 'config', deps(), []).catch((e) => e);
    expect(error).toBeInstanceOf(ClientGoneError);
    expect(calls('a')).toBeLessThan(6);
  });
});

describe('route: attempt stages', () => {
  test('run around each attempt in order, onion style, and see the attempt', async () => {
    const order: string[] = [];
    const stage = (name: string): AttemptStage => ({
      name,
      phase: 'attempt',
      rule: 'sequential',
      async run(_req, attempt, next) {
        order.push(`${name}>${attempt.index}#${attempt.retry}`);
        const r = await next();
        order.push(`${name}<${r.status}`);
        return r;
      },
    });
    script('a', fail(503), ok('a'));
    const { result } = await run({ provider: 'a', retry: { attempts: 1 } }, deps({ attemptStages: [stage('outer'), stage('inner')] }));
    expect(result.status).toBe(200);
    expect(order).toEqual(['outer>config#0', 'inner>config#0', 'inner<503', 'outer<503', 'outer>config#1', 'inner>config#1', 'inner<200', 'outer<200']);
  });

  test('a stage may answer itself (a cache hit) and the provider is not called', async () => {
    const hit: AttemptStage = {
      name: 'cache',
      phase: 'attempt',
      rule: 'sequential',
      run: async (_req, attempt) => ({ response: Response.json({ cached: true }), status: 200, providerId: attempt.provider.id, settled: Promise.resolve({ body: undefined }) }),
    };
    const { result, json } = await run({ provider: 'a' }, deps({ attemptStages: [hit] }));
    expect(json).toEqual({ cached: true });
    expect(result.status).toBe(200);
    expect(seen).toHaveLength(0);
  });

  test('a stage that does not apply is skipped', async () => {
    let ran = false;
    const skipped: AttemptStage = { name: 'skip', phase: 'attempt', rule: 'sequential', applies: () => false, run: async (_r, _a, next) => ((ran = true), next()) };
    await run({ provider: 'a' }, deps({ attemptStages: [skipped] }));
    expect(ran).toBe(false);
    expect(calls('a')).toBe(1);
  });

  test('a stage that throws becomes an error result tagged with its name, not a crash', async () => {
    const broken: AttemptStage = {
      name: 'rate-limit',
      phase: 'attempt',
      rule: 'sequential',
      run: async () => {
        throw Errors.rateLimited('Too many requests', 2);
      },
    };
    const { result, json } = await run({ provider: 'a' }, deps({ attemptStages: [broken] }));
    expect(result.status).toBe(429);
    expect(result.error?.plugin).toBe('rate-limit');
    expect(result.error?.phase).toBe('attempt');
    expect((json as { error: { code: string } }).error.code).toBe('rate_limited');
    expect(seen).toHaveLength(0);
  });
});
