import { describe, expect, test } from 'bun:test';
import {
  type Attempt,
  type AttemptResult,
  type ConfigFieldSet,
  Errors,
  type GatewayConfig,
  GatewayError,
  type GatewayRequest,
  type PluginApi,
  type ProviderAdapter,
  type ServiceToken,
  Services,
  type Stage,
} from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import { CircuitBreaker } from './breaker.ts';
import plugin from './index.ts';
import { FakeStore } from './testing.ts';

const COOLDOWN = 30_000;

function request(config: GatewayConfig): GatewayRequest {
  return buildGatewayRequest({ body: { model: 'm', messages: [] }, config, receivedAt: 0 });
}

function result(status: number, code?: string): AttemptResult {
  const error = code
    ? new GatewayError({ code, status, message: code })
    : status >= 400
      ? Errors.provider('p', status, 'x')
      : undefined;
  return { response: new Response(null, { status: Math.max(status, 200) }), status, providerId: 'p', error, settled: Promise.resolve({ body: undefined }) };
}

/** A breaker with a controllable clock over a config whose first target has a circuit breaker. */
function setup(cb: GatewayConfig['cb_config'] = { failure_threshold: 3, cooldown_interval: COOLDOWN }, store = new FakeStore()) {
  const clock = { now: 1_700_000_000_000 };
  const breaker = new CircuitBreaker({ state: store, now: () => clock.now });
  const config: GatewayConfig = {
    strategy: { mode: 'fallback' },
    targets: [
      { provider: 'a', api_key: 'sk-a', cb_config: cb },
      { provider: 'b', api_key: 'sk-b' },
    ],
  };
  const req = request(config);
  const target = (i: number) => config.targets![i]!;
  const attempt = (i = 0): Attempt => ({ index: `config.targets[${i}]`, target: target(i), provider: { id: 'p' } as ProviderAdapter, retry: 0, body: undefined });
  let calls = 0;
  /** One attempt of target i answering `answer`; `called` says whether the provider was reached. */
  async function call(answer: AttemptResult | number, i = 0): Promise<{ result: AttemptResult; called: boolean }> {
    let called = false;
    const out = await breaker.stage.run(req, attempt(i), async () => {
      called = true;
      calls++;
      return typeof answer === 'number' ? result(answer) : answer;
    });
    return { result: out, called };
  }
  const available = (i = 0) => breaker.isAvailable(req, `config.targets[${i}]`, target(i));
  const status = () => breaker.view()[0]?.status;
  return { clock, breaker, store, config, req, attempt, call, available, status, calls: () => calls };
}

describe('state machine', () => {
  test('closed → open when failures reach failure_threshold', async () => {
    const t = setup();
    expect(t.available()).toBe(true);
    await t.call(503);
    await t.call(502);
    expect(t.available()).toBe(true);
    expect(t.status()).toBe('closed');
    await t.call(503);
    expect(t.status()).toBe('open');
    expect(t.available()).toBe(false);
    // Other targets keep their own circuit.
    expect(t.available(1)).toBe(true);
  });

  test('an open circuit refuses the call with a retryable 503 circuit_open, without reaching the provider', async () => {
    const t = setup({ failure_threshold: 1, cooldown_interval: COOLDOWN });
    await t.call(503);
    const { result, called } = await t.call(200);
    expect(called).toBe(false);
    expect(result.status).toBe(503);
    expect(result.error?.code).toBe('circuit_open');
    expect(result.error?.retryable).toBe(true);
    expect(result.response.headers.get('retry-after')).toBe('30');
    const body = (await result.response.json()) as { error: { code: string } };
    expect(body.error.code).toBe('circuit_open');
    // Still open just before the cooldown ends.
    t.clock.now += COOLDOWN - 1;
    expect(t.available()).toBe(false);
    expect((await t.call(200)).called).toBe(false);
  });

  test('after the cooldown: half-open lets ONE probe through; a successful probe closes the circuit', async () => {
    const t = setup({ failure_threshold: 1, cooldown_interval: COOLDOWN });
    await t.call(503);
    t.clock.now += COOLDOWN;
    expect(t.status()).toBe('half_open');
    expect(t.available()).toBe(true);

    let release!: (r: AttemptResult) => void;
    const probe = t.breaker.stage.run(t.req, t.attempt(), () => new Promise<AttemptResult>((resolve) => (release = resolve)));
    await Bun.sleep(1);
    // While the probe runs, the target is not offered and other attempts are refused.
    expect(t.available()).toBe(false);
    const other = await t.call(200);
    expect(other.called).toBe(false);
    expect(other.result.error?.code).toBe('circuit_open');

    release(result(200));
    expect((await probe).status).toBe(200);
    expect(t.status()).toBe('closed');
    expect(t.available()).toBe(true);
    expect((await t.call(200)).called).toBe(true);
  });

  test('a failed probe re-opens the circuit for another cooldown', async () => {
    const t = setup({ failure_threshold: 2, cooldown_interval: COOLDOWN });
    await t.call(503);
    await t.call(503);
    t.clock.now += COOLDOWN;
    const probe = await t.call(502);
    expect(probe.called).toBe(true);
    expect(t.status()).toBe('open');
    expect(t.available()).toBe(false);
    t.clock.now += COOLDOWN - 1;
    expect(t.available()).toBe(false);
    expect((await t.call(200)).called).toBe(false);
    t.clock.now += 1;
    expect(t.available()).toBe(true);
    expect((await t.call(200)).called).toBe(true);
    expect(t.status()).toBe('closed');
  });

  test('a probe whose client went away proves nothing: the next attempt probes', async () => {
    const t = setup({ failure_threshold: 1, cooldown_interval: COOLDOWN });
    await t.call(503);
    t.clock.now += COOLDOWN;
    const gone = t.breaker.stage.run(t.req, t.attempt(), async () => {
      throw new Error('client gone');
    });
    await expect(gone).rejects.toThrow('client gone');
    expect(t.status()).toBe('half_open');
    expect(t.available()).toBe(true);
    expect((await t.call(200)).called).toBe(true);
    expect(t.status()).toBe('closed');
  });

  test('a success resets the failure count', async () => {
    const t = setup();
    await t.call(503);
    await t.call(503);
    await t.call(200);
    await t.call(503);
    await t.call(503);
    expect(t.status()).toBe('closed');
    await t.call(503);
    expect(t.status()).toBe('open');
  });

  test('default failures are statuses above 500: 500 is not a failure, 502 and 503 are', async () => {
    const t = setup({ failure_threshold: 2, cooldown_interval: COOLDOWN });
    for (let i = 0; i < 5; i++) await t.call(500);
    for (let i = 0; i < 5; i++) await t.call(429);
    for (let i = 0; i < 5; i++) await t.call(400);
    expect(t.status()).toBe('closed');
    await t.call(502);
    await t.call(503);
    expect(t.status()).toBe('open');
  });

  test('network errors and timeouts are failures whatever failure_status_codes says', async () => {
    const t = setup({ failure_threshold: 2, cooldown_interval: COOLDOWN, failure_status_codes: [429] });
    await t.call(result(502, 'upstream_unreachable'));
    await t.call(result(408, 'request_timeout'));
    expect(t.status()).toBe('open');
  });

  test('custom failure_status_codes replace the default', async () => {
    const t = setup({ failure_threshold: 2, cooldown_interval: COOLDOWN, failure_status_codes: [429, 500] });
    for (let i = 0; i < 5; i++) await t.call(503);
    for (let i = 0; i < 5; i++) await t.call(502);
    expect(t.status()).toBe('closed');
    await t.call(429);
    await t.call(500);
    expect(t.status()).toBe('open');
  });

  test('failures of attempts that started before the circuit opened do not extend it', async () => {
    const t = setup({ failure_threshold: 1, cooldown_interval: COOLDOWN });
    let release!: (r: AttemptResult) => void;
    const slow = t.breaker.stage.run(t.req, t.attempt(), () => new Promise<AttemptResult>((resolve) => (release = resolve)));
    await t.call(503);
    const until = t.breaker.view()[0]!.openUntil;
    t.clock.now += 10_000;
    release(result(503));
    await slow;
    expect(t.breaker.view()[0]!.openUntil).toBe(until);
  });
});

describe('availability', () => {
  test('a config without cb_config is not touched: stage does not apply, targets always available, no store calls', () => {
    const store = new FakeStore();
    const breaker = new CircuitBreaker({ state: store });
    const config: GatewayConfig = { strategy: { mode: 'fallback' }, targets: [{ provider: 'a' }, { provider: 'b' }] };
    const req = request(config);
    expect(breaker.stage.applies?.(req)).toBe(false);
    expect(breaker.isAvailable(req, 'config.targets[0]', config.targets![0]!)).toBe(true);
    expect(breaker.view()).toHaveLength(0);
    expect(store.calls).toBe(0);
    expect(breaker.stage.applies?.(request({ provider: 'a', cb_config: { failure_threshold: 1, cooldown_interval: COOLDOWN } }))).toBe(true);
  });

  test('cb_config is inherited; a strategy node is unavailable when every target under it is', async () => {
    const clock = { now: 1_700_000_000_000 };
    const breaker = new CircuitBreaker({ state: new FakeStore(), now: () => clock.now });
    const inner: GatewayConfig = { strategy: { mode: 'fallback' }, targets: [{ provider: 'b', api_key: 'x' }, { provider: 'c', api_key: 'y' }] };
    const config: GatewayConfig = {
      strategy: { mode: 'fallback' },
      cb_config: { failure_threshold: 1, cooldown_interval: COOLDOWN },
      targets: [{ provider: 'a' }, inner],
    };
    const req = request(config);
    // What the engine passes: the child with the parent's settings applied.
    const effectiveInner = { ...inner, cb_config: config.cb_config };
    const fail = (index: string, target: GatewayConfig) =>
      breaker.stage.run(req, { index, target, provider: { id: 'p' } as ProviderAdapter, retry: 0, body: undefined }, async () => result(503));

    expect(breaker.isAvailable(req, 'config.targets[1]', effectiveInner)).toBe(true);
    await fail('config.targets[1].targets[0]', { ...inner.targets![0]!, cb_config: config.cb_config });
    expect(breaker.isAvailable(req, 'config.targets[1].targets[0]', { ...inner.targets![0]!, cb_config: config.cb_config })).toBe(false);
    expect(breaker.isAvailable(req, 'config.targets[1]', effectiveInner)).toBe(true);
    await fail('config.targets[1].targets[1]', { ...inner.targets![1]!, cb_config: config.cb_config });
    expect(breaker.isAvailable(req, 'config.targets[1]', effectiveInner)).toBe(false);
    expect(breaker.isAvailable(req, 'config.targets[0]', { provider: 'a', cb_config: config.cb_config })).toBe(true);
  });
});

describe('shared state', () => {
  test('state keys hold hashes only: no credential in clear', async () => {
    const t = setup({ failure_threshold: 1, cooldown_interval: COOLDOWN });
    await t.call(503);
    const keys = [...t.store.data.keys()];
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key).toMatch(/^cb:[0-9a-f]{64}:[fop]$/);
      expect(key).not.toContain('sk-a');
    }
  });

  test('two breakers over one store share a circuit: failures seen by A open it for B', async () => {
    const store = new FakeStore('redis');
    const a = setup({ failure_threshold: 2, cooldown_interval: COOLDOWN }, store);
    const b = setup({ failure_threshold: 2, cooldown_interval: COOLDOWN }, store);
    b.clock.now = a.clock.now;
    expect(b.available()).toBe(true); // B has seen the circuit (closed)
    await a.call(503);
    await a.call(503);
    expect(a.status()).toBe('open');
    // B's view catches up on its next refresh (every 250 ms in the plugin).
    await b.breaker.refresh();
    expect(b.available()).toBe(false);
    expect((await b.call(200)).called).toBe(false);
  });

  test("a process's first attempt of a circuit reads the shared state before calling", async () => {
    const store = new FakeStore('redis');
    const a = setup({ failure_threshold: 1, cooldown_interval: COOLDOWN }, store);
    const b = setup({ failure_threshold: 1, cooldown_interval: COOLDOWN }, store);
    b.clock.now = a.clock.now;
    await a.call(503);
    expect((await b.call(200)).called).toBe(false);
  });

  test('failures counted by two processes add up', async () => {
    const store = new FakeStore('redis');
    const a = setup({ failure_threshold: 3, cooldown_interval: COOLDOWN }, store);
    const b = setup({ failure_threshold: 3, cooldown_interval: COOLDOWN }, store);
    await a.call(503);
    await b.call(503);
    await a.call(503);
    expect(a.status()).toBe('open');
  });

  test('half-open: only one process probes; its success closes the circuit everywhere', async () => {
    const store = new FakeStore('redis');
    const a = setup({ failure_threshold: 1, cooldown_interval: COOLDOWN }, store);
    const b = setup({ failure_threshold: 1, cooldown_interval: COOLDOWN }, store);
    b.clock.now = a.clock.now;
    b.available();
    await a.call(503);
    await b.breaker.refresh();
    a.clock.now += COOLDOWN;
    b.clock.now += COOLDOWN;

    let release!: (r: AttemptResult) => void;
    const probe = b.breaker.stage.run(b.req, b.attempt(), () => new Promise<AttemptResult>((resolve) => (release = resolve)));
    await Bun.sleep(1);
    const other = await a.call(200);
    expect(other.called).toBe(false); // B holds the probe
    expect(a.available()).toBe(false);
    release(result(200));
    await probe;
    expect(b.status()).toBe('closed');
    await Bun.sleep(1);
    await a.breaker.refresh();
    expect(a.status()).toBe('closed');
    expect((await a.call(200)).called).toBe(true);
  });

  test('store down: decisions fall back to the local view, requests never fail because of the breaker', async () => {
    const store = new FakeStore('redis');
    store.down = true;
    const t = setup({ failure_threshold: 2, cooldown_interval: COOLDOWN }, store);
    expect((await t.call(200)).result.status).toBe(200);
    await t.call(503);
    await t.call(503);
    expect(t.status()).toBe('open');
    expect((await t.call(200)).called).toBe(false);
    await t.breaker.refresh(); // rejected reads change nothing
    expect(t.status()).toBe('open');
    t.clock.now += COOLDOWN;
    const probe = await t.call(200);
    expect(probe.called).toBe(true);
    expect(t.status()).toBe('closed');
  });

  test('a circuit opened while the store was down is shared once the store is back', async () => {
    const store = new FakeStore('redis');
    store.down = true;
    const a = setup({ failure_threshold: 1, cooldown_interval: COOLDOWN }, store);
    const b = setup({ failure_threshold: 1, cooldown_interval: COOLDOWN }, store);
    b.clock.now = a.clock.now;
    await a.call(503);
    expect(a.status()).toBe('open');
    expect(store.data.size).toBe(0);
    store.down = false;
    await a.breaker.refresh();
    expect([...store.data.keys()].some((k) => k.endsWith(':o'))).toBe(true);
    expect((await b.call(200)).called).toBe(false);
  });

  test('a hanging store is not waited for longer than storeWaitMs', async () => {
    const hanging = new FakeStore('redis');
    const never = new Promise<never>(() => {});
    hanging.get = () => never;
    hanging.incr = () => never;
    hanging.set = () => never;
    hanging.del = () => never;
    const breaker = new CircuitBreaker({ state: hanging, storeWaitMs: 20 });
    const config: GatewayConfig = { provider: 'a', cb_config: { failure_threshold: 1, cooldown_interval: COOLDOWN } };
    const started = performance.now();
    const out = await breaker.stage.run(request(config), { index: 'config', target: config, provider: { id: 'p' } as ProviderAdapter, retry: 0, body: undefined }, async () => result(503));
    expect(out.status).toBe(503);
    expect(performance.now() - started).toBeLessThan(5_000); // the store never answers: not waited for
    expect(breaker.view()[0]?.status).toBe('open');
  });

  test('once the store is known to be down, requests stop asking it; the refresh notices it is back', async () => {
    const store = new FakeStore('redis');
    const breaker = new CircuitBreaker({ state: store, storeWaitMs: 20 });
    const config: GatewayConfig = { provider: 'a', cb_config: { failure_threshold: 100, cooldown_interval: COOLDOWN } };
    const attempt = { index: 'config', target: config, provider: { id: 'p' } as ProviderAdapter, retry: 0, body: undefined };
    store.down = true;
    await breaker.stage.run(request(config), attempt, async () => result(503)); // discovers the outage
    const before = store.calls;
    for (let i = 0; i < 5; i++) await breaker.stage.run(request(config), attempt, async () => result(503));
    expect(store.calls).toBe(before); // no request waited on the store
    store.down = false;
    await breaker.refresh();
    await breaker.stage.run(request(config), attempt, async () => result(503));
    expect(store.calls).toBeGreaterThan(before + 1); // shared again
  });
});

describe('plugin', () => {
  test('registers the attempt stage, declares cb_config and provides the circuitBreaker service', async () => {
    const stages: Stage[] = [];
    const declared: ConfigFieldSet[] = [];
    const services = new Map<string, unknown>();
    const closers: (() => unknown)[] = [];
    await plugin.setup({
      name: '@gateway/plugin-circuit-breaker',
      env: {},
      state: new FakeStore(),
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      stage: (s: Stage) => stages.push(s),
      configFields: (fields: ConfigFieldSet) => declared.push(fields),
      provide: (token: ServiceToken<unknown>, value: unknown) => services.set(token.id, value),
      optional: (token: ServiceToken<unknown>) => services.get(token.id),
      onClose: (fn: () => unknown) => closers.push(fn),
    } as unknown as PluginApi);
    expect(stages).toHaveLength(1);
    expect(stages[0]).toMatchObject({ name: 'circuit-breaker', phase: 'attempt', rule: 'sequential' });
    expect(declared.map((set) => [Object.keys(set.fields), set.inherited])).toEqual([[['cb_config'], ['cb_config']]]);
    expect(services.get(Services.circuitBreaker.id)).toBeInstanceOf(CircuitBreaker);
    expect(closers).toHaveLength(1);
    for (const fn of closers) await fn();
  });
});
