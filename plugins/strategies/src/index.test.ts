import { describe, expect, test } from 'bun:test';
import {
  type AttemptResult,
  Errors,
  GatewayError,
  type GatewayConfig,
  type GatewayRequest,
  type PluginApi,
  type Strategy,
  type StrategyContext,
} from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import plugin, { conditional, fallback, loadbalance, single } from './index.ts';

function request(overrides: Partial<GatewayRequest> = {}): GatewayRequest {
  return buildGatewayRequest({ body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, receivedAt: 0, ...overrides });
}

function ctx(open: number[] = [], req = request()): StrategyContext {
  return { request: req, isAvailable: (index) => !open.some((i) => index === `[${i}]`) };
}

function result(status: number, code?: string): AttemptResult {
  const error = code ? new GatewayError({ code, status, message: code }) : status >= 400 ? Errors.provider('p', status, 'x') : undefined;
  return { response: new Response(null, { status: status === 0 ? 200 : status }), status, providerId: 'p', error, settled: Promise.resolve({ body: undefined }) };
}

const targets = (n: number, extra: (i: number) => GatewayConfig = () => ({})) =>
  Array.from({ length: n }, (_, i) => ({ provider: `p${i}`, name: `t${i}`, ...extra(i) }));

describe('plugin', () => {
  test('registers the four strategies by mode', async () => {
    const registered: Strategy[] = [];
    await plugin.setup({ strategy: (s: Strategy) => registered.push(s) } as unknown as PluginApi);
    expect(registered.map((s) => s.mode)).toEqual(['single', 'loadbalance', 'fallback', 'conditional']);
  });
});

describe('single', () => {
  test('plans the first target only and never moves on', () => {
    const node: GatewayConfig = { strategy: { mode: 'single' }, targets: targets(3) };
    expect(single.plan(node, ctx())).toEqual([0]);
    expect(single.next(result(500), node, node.targets![0]!)).toBe(false);
  });

  test('skips a target whose circuit is open; when every circuit is open it still tries the first', () => {
    const node: GatewayConfig = { strategy: { mode: 'single' }, targets: targets(3) };
    expect(single.plan(node, ctx([0]))).toEqual([1]);
    expect(single.plan(node, ctx([0, 1, 2]))).toEqual([0]);
  });
});

describe('loadbalance', () => {
  const N = 10_000;
  /** Share of picks per target over N plans. */
  function shares(node: GatewayConfig, open: number[] = []): number[] {
    const counts = new Array((node.targets ?? []).length).fill(0) as number[];
    for (let k = 0; k < N; k++) {
      const plan = loadbalance.plan(node, ctx(open));
      expect(plan).toHaveLength(1);
      counts[plan[0] as number]++;
    }
    return counts.map((c) => c / N);
  }

  test('picks follow the weights within ±0.03 over 10 000 picks; weight 0 is never chosen', () => {
    const node: GatewayConfig = { strategy: { mode: 'loadbalance' }, targets: targets(4, (i) => ({ weight: [1, 3, 0, 6][i] })) };
    const s = shares(node);
    expect(s[2]).toBe(0);
    expect(Math.abs((s[0] as number) - 0.1)).toBeLessThan(0.03);
    expect(Math.abs((s[1] as number) - 0.3)).toBeLessThan(0.03);
    expect(Math.abs((s[3] as number) - 0.6)).toBeLessThan(0.03);
  });

  test('a target without a weight counts as weight 1; fractional weights work', () => {
    const node: GatewayConfig = { strategy: { mode: 'loadbalance' }, targets: [{ provider: 'a' }, { provider: 'b', weight: 0.5 }, { provider: 'c', weight: 0.5 }] };
    const s = shares(node);
    expect(Math.abs((s[0] as number) - 0.5)).toBeLessThan(0.03);
    expect(Math.abs((s[1] as number) - 0.25)).toBeLessThan(0.03);
    expect(Math.abs((s[2] as number) - 0.25)).toBeLessThan(0.03);
  });

  test('the extremes of Math.random still pick a weighted target, never a zero-weight one', () => {
    const node: GatewayConfig = { strategy: { mode: 'loadbalance' }, targets: targets(3, (i) => ({ weight: [0, 2, 0][i] })) };
    const random = Math.random;
    try {
      for (const r of [0, 0.5, 0.9999999999]) {
        Math.random = () => r;
        expect(loadbalance.plan(node, ctx())).toEqual([1]);
      }
    } finally {
      Math.random = random;
    }
  });

  test('a target whose circuit is open is not picked', () => {
    const node: GatewayConfig = { strategy: { mode: 'loadbalance' }, targets: targets(3, () => ({ weight: 1 })) };
    const s = shares(node, [1]);
    expect(s[1]).toBe(0);
    expect(Math.abs((s[0] as number) - 0.5)).toBeLessThan(0.03);
  });

  test('all weights zero: nothing to plan (the engine answers 400)', () => {
    const node: GatewayConfig = { strategy: { mode: 'loadbalance' }, targets: targets(2, () => ({ weight: 0 })) };
    expect(loadbalance.plan(node, ctx())).toEqual([]);
  });

  test('never moves on to another target', () => {
    const node: GatewayConfig = { strategy: { mode: 'loadbalance' }, targets: targets(2) };
    expect(loadbalance.next(result(500), node, node.targets![0]!)).toBe(false);
  });
});

describe('fallback', () => {
  test('plans every target in order, leaving out open circuits (all of them when every circuit is open)', () => {
    const node: GatewayConfig = { strategy: { mode: 'fallback' }, targets: targets(4) };
    expect(fallback.plan(node, ctx())).toEqual([0, 1, 2, 3]);
    expect(fallback.plan(node, ctx([1, 3]))).toEqual([0, 2]);
    expect(fallback.plan(node, ctx([0, 1, 2, 3]))).toEqual([0, 1, 2, 3]);
  });

  test('a success stops; without on_status_codes any failure moves on', () => {
    const node: GatewayConfig = { strategy: { mode: 'fallback' }, targets: targets(2) };
    const child = node.targets![0]!;
    expect(fallback.next(result(200), node, child)).toBe(false);
    expect(fallback.next(result(201), node, child)).toBe(false);
    for (const status of [400, 401, 404, 429, 500, 503]) expect(fallback.next(result(status), node, child)).toBe(true);
  });

  test('with on_status_codes only those statuses move on', () => {
    const node: GatewayConfig = { strategy: { mode: 'fallback', on_status_codes: [429, 503] }, targets: targets(2) };
    const child = node.targets![0]!;
    expect(fallback.next(result(429), node, child)).toBe(true);
    expect(fallback.next(result(503), node, child)).toBe(true);
    expect(fallback.next(result(500), node, child)).toBe(false);
    expect(fallback.next(result(400), node, child)).toBe(false);
    expect(fallback.next(result(200), node, child)).toBe(false);
  });

  test("a target's own on_status_codes win over the strategy's", () => {
    const node: GatewayConfig = { strategy: { mode: 'fallback', on_status_codes: [429] }, targets: targets(2) };
    const child: GatewayConfig = { provider: 'p0', on_status_codes: [500] };
    expect(fallback.next(result(500), node, child)).toBe(true);
    expect(fallback.next(result(429), node, child)).toBe(false);
  });

  test('an unreachable upstream or a timeout always moves on, whatever the codes', () => {
    const node: GatewayConfig = { strategy: { mode: 'fallback', on_status_codes: [429] }, targets: targets(2) };
    const child = node.targets![0]!;
    expect(fallback.next(result(502, 'upstream_unreachable'), node, child)).toBe(true);
    expect(fallback.next(result(408, 'request_timeout'), node, child)).toBe(true);
    expect(fallback.next(result(502, 'upstream_invalid_response'), node, child)).toBe(false);
  });
});

describe('conditional', () => {
  const node: GatewayConfig = {
    strategy: {
      mode: 'conditional',
      conditions: [
        { query: { 'metadata.tier': { $eq: 'pro' } }, then: 'premium' },
        { query: { 'params.model': { $regex: '^gpt-4' } }, then: 'big' },
      ],
      default: 'cheap',
    },
    targets: [{ name: 'cheap', provider: 'a' }, { name: 'big', provider: 'b' }, { name: 'premium', provider: 'c' }],
  };

  test('the first matching condition names the target', () => {
    expect(conditional.plan(node, ctx([], request({ metadata: { tier: 'pro' } })))).toEqual([2]);
    expect(conditional.plan(node, ctx([], request()))).toEqual([1]); // model gpt-4o
  });

  test('no match falls to the default', () => {
    expect(conditional.plan(node, ctx([], request({ body: { model: 'llama' } })))).toEqual([0]);
  });

  test('no match and no default is a 400', () => {
    const noDefault: GatewayConfig = { ...node, strategy: { ...node.strategy!, default: undefined } };
    let error: unknown;
    try {
      conditional.plan(noDefault, ctx([], request({ body: { model: 'llama' } })));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(400);
    expect((error as GatewayError).message).toContain('No conditional routing rule matched');
  });

  test('a rule naming a target that does not exist is a 400 naming it', () => {
    const broken: GatewayConfig = { ...node, strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'nowhere' }] } };
    expect(() => conditional.plan(broken, ctx())).toThrow('"nowhere"');
  });

  test('an empty query matches everything', () => {
    const always: GatewayConfig = { ...node, strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'big' }], default: 'cheap' } };
    expect(conditional.plan(always, ctx())).toEqual([1]);
  });

  test('never moves on to another target', () => {
    expect(conditional.next(result(500), node, node.targets![0]!)).toBe(false);
  });
});
