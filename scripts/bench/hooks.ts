/**
 * The hook engine: what three cheap input checks (one guardrail entry) add per request, in-process. Budgeted
 * through the real runner (runPipeline) with a provider stub that answers at once, so that no network noise hides
 * the engine: request stage, response stage, answer built as usual. The same difference through the whole
 * in-process gateway in front of a local HTTP upstream is printed (it is within that noise).
 */
import { createHookEngine } from '../../plugins/hooks/src/engine.ts';
import { chatAnswer, chatBody, testRequest } from '../../plugins/hooks/src/testing.ts';
import { type PipelineDeps, runPipeline } from '@gateway/pipeline';
import type { AttemptResult, AttemptStage, GatewayConfig, GuardrailCheck, ProviderAdapter } from '@gateway/sdk';
import { providerHeaders, startInProcessGateway } from '../../tests/helpers/in-process.ts';
import { best, budget, check, figure } from './measure.ts';

const ADDED_US = 20;
const N = 5_000;

const cheap: GuardrailCheck[] = ['bench.a', 'bench.b', 'bench.c'].map((id) => ({
  id,
  run: (ctx) => Promise.resolve({ verdict: ctx.request.body !== undefined }),
}));
const withChecks = Object.freeze({ provider: 'openai', api_key: 'sk', input_guardrails: [{ 'bench.a': {}, 'bench.b': {}, 'bench.c': {} }] }) as GatewayConfig;
const without: GatewayConfig = Object.freeze({ provider: 'openai', api_key: 'sk' });

// ---- through the runner
{
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
    stages: { requestStages: [engine.request], responseStages: [engine.response], finallyStages: [] },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  };
  const body = chatBody();
  const one = (config: GatewayConfig) => async () => {
    const res = await runPipeline(testRequest(config, body), deps);
    if (res.status !== 200) throw new Error(`status ${res.status}`);
  };
  const req = testRequest(withChecks, body);
  await runPipeline(req, deps);
  const results = req.locals.hookResults as { verdict: boolean }[] | undefined;
  check(results?.length === 1 && results[0]?.verdict === true, 'the engine ran the checks, and they passed');
  const t = await best(5, N, { with: one(withChecks), without: one(without) }, N);
  figure('runner: with three cheap input checks', t.with);
  figure('runner: without', t.without);
  budget('runner: what three cheap input checks add per request', t.with - t.without, ADDED_US);
}

// ---- through the whole gateway, in-process
{
  const text = JSON.stringify(chatAnswer());
  const upstream = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(text, { headers: { 'content-type': 'application/json' } }) });
  const gw = await startInProcessGateway();
  try {
    for (const c of cheap) gw.plugins.registry.guardrails.set(c.id, c);
    const url = `http://127.0.0.1:${upstream.port}/v1`;
    const payload = JSON.stringify(chatBody());
    const one = (config: GatewayConfig) => {
      const header = JSON.stringify({ ...config, custom_host: url });
      return async () => {
        const res = await gw.handle(new Request('http://gateway.local/v1/chat/completions', { method: 'POST', headers: { ...providerHeaders(url), 'x-gateway-config': header }, body: payload }));
        if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      };
    };
    const t = await best(5, 400, { with: one(withChecks), without: one(without) }, 400);
    figure('gateway in-process: with three cheap input checks', t.with);
    figure('gateway in-process: without', t.without);
    figure('gateway in-process: difference (within the noise of the local HTTP call)', t.with - t.without);
  } finally {
    await gw.close();
    upstream.stop(true);
  }
}
