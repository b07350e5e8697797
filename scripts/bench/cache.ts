/**
 * The response cache, in-process:
 * - the stage alone, against a provider call that answers at once: what a MISS adds (key, lookup, store of the
 *   answer) and what a HIT costs, per request (budgeted);
 * - the whole gateway in-process (`gateway.handle`) in front of the local OpenAI mock: a hit, an uncached call and
 *   a miss (printed; a hit must be faster than an uncached call).
 */
import { LexicalEmbedder, MemoryBackend, readCacheSettings, ResponseCache } from '@gateway/plugin-cache';
import type { Attempt, AttemptResult, GatewayConfig, GatewayRequest, JsonObject, ProviderAdapter } from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import { providerHeaders, startInProcessGateway } from '../../tests/helpers/in-process.ts';
import { startOpenAIMock } from '../../tests/mocks/openai-server.ts';
import { best, budget, check, figure } from './measure.ts';

const N = 2_000;
const MISS_OVERHEAD_US = 30;
const HIT_US = 30;
/** Bodies never seen before in this run. */
const RUN = crypto.randomUUID();

const ANSWER = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'You said: a question of a typical length for a chat', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 12, total_tokens: 22 },
  system_fingerprint: 'fp_0123456789',
});

/** A whole answer as the pipeline builds one (its Response only on demand). */
function answer(): AttemptResult {
  return {
    answer: { text: ANSWER, status: 200, contentType: 'application/json' },
    status: 200,
    providerId: 'openai',
    settled: Promise.resolve({ body: ANSWER }),
    get response() {
      return new Response(ANSWER, { headers: { 'content-type': 'application/json' } });
    },
  };
}

const config: GatewayConfig = { provider: 'openai', api_key: 'sk-bench', custom_host: 'http://127.0.0.1:9/v1', cache: { mode: 'simple' } };

function request(body: JsonObject): GatewayRequest {
  return buildGatewayRequest({ body, rawBody: undefined, caller: { workspaceId: 'ws-bench' }, config, receivedAt: 0 });
}

const provider = { id: 'openai' } as ProviderAdapter;
const bodyOf = (i: number): JsonObject => ({
  model: 'gpt-4o-mini',
  temperature: 0.2,
  messages: [
    { role: 'system', content: 'You are a helpful assistant. Answer briefly.' },
    { role: 'user', content: `A question of a typical length for a chat, number ${i} of run ${RUN}` },
  ],
});

// ---- the stage alone
{
  const cache = new ResponseCache({ backend: new MemoryBackend(64 * 1024 * 1024), settings: readCacheSettings({}), embedder: new LexicalEmbedder() });
  let calls = 0;
  const next = async () => {
    calls++;
    return answer();
  };
  const attempt = (body: JsonObject): Attempt => ({ index: 'config', target: config, provider, retry: 0, body });
  const hitBody = bodyOf(-1);
  check((await cache.run(request(hitBody), attempt(hitBody), next)).answer?.text === ANSWER, 'the first call answers');
  const t = await best(3, N, {
    provider: () => next(),
    // every round starts at a new offset: each call a body never seen, a miss
    miss: (i) => {
      const body = bodyOf(1_000_000 + i);
      return cache.run(request(body), attempt(body), next);
    },
  });
  calls = 0;
  const hit = await best(3, N, { hit: () => cache.run(request(hitBody), attempt(hitBody), next) });
  check(calls === 0, `a hit never calls the provider (${calls} calls)`);
  figure('cache stage: provider stub, per call', t.provider);
  figure('cache stage: miss, per request', t.miss);
  budget('cache stage: what a miss adds over the provider stub', t.miss - t.provider, MISS_OVERHEAD_US);
  budget('cache stage: a hit, per request', hit.hit, HIT_US);
}

// ---- the whole gateway in-process, in front of the local OpenAI mock
{
  const mock = await startOpenAIMock({ apiKey: null });
  const gateway = await startInProcessGateway();
  try {
    const call = async (body: JsonObject, cached: boolean) => {
      const headers = providerHeaders(mock.url, cached ? { 'x-gateway-config': JSON.stringify({ cache: { mode: 'simple' } }) } : {});
      const res = await gateway.handle(new Request('http://gateway/v1/chat/completions', { method: 'POST', headers, body: JSON.stringify(body) }));
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      return res.headers.get('x-gateway-cache-status');
    };
    const one = bodyOf(-2);
    check((await call(one, true)) === 'MISS', 'the first cached call is a MISS');
    const hit = await best(1, N, { hit: () => call(one, true) }, 200);
    check((await call(one, true)) === 'HIT' && mock.requests.length === 1, `${N} requests of one body are one provider call (${mock.requests.length})`);
    const t = await best(1, N, { uncached: (i) => call(bodyOf(2_000_000 + i), false), miss: (i) => call(bodyOf(3_000_000 + i), true) }, 200);
    figure('gateway in-process: hit', hit.hit);
    figure('gateway in-process: uncached call', t.uncached);
    figure('gateway in-process: miss', t.miss);
    figure("gateway in-process: miss − uncached (includes the mock's HTTP noise)", t.miss - t.uncached);
    budget('gateway in-process: a hit, as a share of an uncached call', (100 * hit.hit) / t.uncached, 100, '%');
  } finally {
    await gateway.close();
    await mock.stop();
  }
}
