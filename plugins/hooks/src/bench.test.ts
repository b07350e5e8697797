// Micro-benchmark: what the hook engine adds per request with three cheap input checks on (one guardrail entry),
// in-process. Asserted through the real runner (runPipeline) with a provider stub that answers at once, so that no
// network noise hides the engine: request stage, response-stage test, answer built as usual. The same difference
// through the whole in-process gateway in front of a local HTTP upstream is printed (it is within that noise).

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type PipelineDeps, runPipeline } from '@gateway/pipeline';
import type { AttemptResult, AttemptStage, GatewayConfig, GuardrailCheck, ProviderAdapter } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { providerHeaders, startInProcessGateway } from '../../../tests/helpers/in-process.ts';
import { createHookEngine } from './engine.ts';
import { chatAnswer, chatBody, testRequest } from './testing.ts';

/** "Small": the bound on the average added per request. */
const ADDED_US = 20;
const N = 5_000;

const cheap: GuardrailCheck[] = ['bench.a', 'bench.b', 'bench.c'].map((id) => ({
  id,
  run: (ctx) => Promise.resolve({ verdict: ctx.request.body !== undefined }),
}));
const withChecks = Object.freeze({ provider: 'openai', api_key: 'sk', input_guardrails: [{ 'bench.a': {}, 'bench.b': {}, 'bench.c': {} }] }) as GatewayConfig;
const without: GatewayConfig = Object.freeze({ provider: 'openai', api_key: 'sk' });

/** Average microseconds per call over `n` calls. */
async function perCall(n: number, fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return ((performance.now() - started) * 1000) / n;
}

/** Best of `rounds` for each side, measured alternately (a busy machine only ever adds time): with − without. */
async function added(rounds: number, n: number, withFn: () => Promise<unknown>, withoutFn: () => Promise<unknown>): Promise<{ added: number; with: number; without: number }> {
  await perCall(n, withFn); // warm-up (JIT)
  await perCall(n, withoutFn);
  let a = Number.POSITIVE_INFINITY;
  let b = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) {
    a = Math.min(a, await perCall(n, withFn));
    b = Math.min(b, await perCall(n, withoutFn));
  }
  return { added: a - b, with: a, without: b };
}

describe('cost of three cheap input checks', () => {
  test(`through the runner: less than ${ADDED_US} µs added per request on average`, async () => {
    const checks = new Map(cheap.map((c) => [c.id, c]));
    const engine = createHookEngine({ checks: () => (id) => checks.get(id) });
    const text = JSON.stringify(chatAnswer());
    const answer = (): AttemptResult => ({
      answer: { text, status: 200, contentType: 'application/json' },
      status: 200,
      providerId: 'openai',
      settled: Promise.resolve({ body: text }),
      get response() {
        return new Response(text, { headers: { 'content-type': 'application/json' } });
      },
    });
    const stub: AttemptStage = { name: 'provider-stub', phase: 'attempt', rule: 'sequential', run: async () => answer() };
    const provider = { id: 'openai' } as ProviderAdapter;
    const deps: PipelineDeps = {
      strategies: new Map(),
      attemptStages: [stub],
      call: { hostGuard: undefined as never, captureLimit: 65_536, streamIdleTimeoutMs: 1_000, defaultTimeoutMs: 1_000 },
      resolveProvider: (target) => ({ provider, target }),
      stages: { requestStages: [engine.request], requestJudges: [], responseStages: [engine.response], responseJudges: [], finallyStages: [] },
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    };
    const body = chatBody();
    const one = (config: GatewayConfig) => async () => {
      const res = await runPipeline(testRequest(config, body), deps);
      if (res.status !== 200) throw new Error(`status ${res.status}`);
    };
    // The engine really ran (and passed) with the checks on.
    const req = testRequest(withChecks, body);
    await runPipeline(req, deps);
    expect((req.locals.hookResults as { verdict: boolean }[]).map((r) => r.verdict)).toEqual([true]);

    const m = await added(5, N, one(withChecks), one(without));
    console.info(`[hooks bench] runner: +${m.added.toFixed(2)} µs per request with three cheap input checks (${m.with.toFixed(2)} vs ${m.without.toFixed(2)} µs), best of 5 × ${N}`);
    expect(m.added).toBeLessThan(ADDED_US);
  }, 60_000);

  describe('through the whole gateway, in-process (printed)', () => {
    let gw: Gateway;
    let upstream: ReturnType<typeof Bun.serve>;
    beforeAll(async () => {
      const text = JSON.stringify(chatAnswer());
      upstream = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(text, { headers: { 'content-type': 'application/json' } }) });
      gw = await startInProcessGateway();
      for (const c of cheap) gw.plugins.registry.guardrails.set(c.id, c);
    });
    afterAll(async () => {
      await gw?.close();
      upstream?.stop(true);
    });

    test('the difference is within the noise of the local HTTP call', async () => {
      const url = `http://127.0.0.1:${upstream.port}/v1`;
      const payload = JSON.stringify(chatBody());
      const one = (config: GatewayConfig) => {
        const header = JSON.stringify({ ...config, custom_host: url });
        return async () => {
          const res = await gw.handle(
            new Request('http://gateway.local/v1/chat/completions', { method: 'POST', headers: { ...providerHeaders(url), 'x-gateway-config': header }, body: payload }),
          );
          if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
          await res.arrayBuffer();
        };
      };
      const m = await added(5, 400, one(withChecks), one(without));
      console.info(`[hooks bench] gateway: ${m.added >= 0 ? '+' : ''}${m.added.toFixed(1)} µs per request (${m.with.toFixed(1)} vs ${m.without.toFixed(1)} µs), best of 5 × 400`);
      expect(m.with).toBeGreaterThan(0);
    }, 60_000);
  });
});
