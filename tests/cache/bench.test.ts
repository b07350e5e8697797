// Micro-benchmarks of the response cache, in-process (numbers printed; bounds asserted generously).
//
// - The stage alone, against a provider call that answers at once: what a MISS adds (key, lookup, store of the
//   answer) and what a HIT costs, averaged over 2000 requests each; a hit never calls the provider.
// - The whole gateway in-process (`gateway.handle`) in front of the OpenAI mock: 2000 requests of one body are one
//   provider call, and a hit is served faster than an uncached call; the miss overhead there is printed.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { LexicalEmbedder, MemoryBackend, readCacheSettings, ResponseCache } from '@gateway/plugin-cache';
import type { Attempt, AttemptResult, GatewayConfig, GatewayRequest, JsonObject, ProviderAdapter } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { providerHeaders, startInProcessGateway } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { RUN } from './support.ts';

const N = 2_000;
/** "A miss adds little": the bound asserted on the stage's average miss overhead. */
const MISS_OVERHEAD_US = 30;
const HIT_US = 30;

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
  const settled = Promise.resolve({ body: ANSWER });
  return {
    answer: { text: ANSWER, status: 200, contentType: 'application/json' },
    status: 200,
    providerId: 'openai',
    settled,
    get response() {
      return new Response(ANSWER, { headers: { 'content-type': 'application/json' } });
    },
  };
}

const config: GatewayConfig = { provider: 'openai', api_key: 'sk-bench', custom_host: 'http://127.0.0.1:9/v1', cache: { mode: 'simple' } };

function request(body: JsonObject): GatewayRequest {
  return {
    traceId: 't',
    endpoint: 'chatComplete',
    method: 'POST',
    path: '/chat/completions',
    search: '',
    headers: new Headers({ 'content-type': 'application/json' }),
    body,
    rawBody: undefined,
    parsedBody: body,
    metadata: {},
    caller: { apiKeyId: 'k', organisationId: 'o', workspaceId: 'ws-bench', scopes: [], keyType: 'workspace-service', userId: null },
    config,
    signal: new AbortController().signal,
    receivedAt: 0,
    locals: {},
  };
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

/** Average microseconds per call of `fn` over `n` calls (after a warm-up). */
async function perCall(n: number, fn: (i: number) => Promise<unknown>, offset = 0): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) await fn(offset + i);
  return ((performance.now() - started) * 1000) / n;
}

describe('the cache stage alone', () => {
  test(`a miss adds less than ${MISS_OVERHEAD_US} µs on average over ${N} requests; a hit calls no provider`, async () => {
    const cache = new ResponseCache({ backend: new MemoryBackend(64 * 1024 * 1024), settings: readCacheSettings({}), embedder: new LexicalEmbedder() });
    let calls = 0;
    const next = async () => {
      calls++;
      return answer();
    };
    const run = (i: number) => {
      const body = bodyOf(i);
      const attempt: Attempt = { index: 'config', target: config, provider, retry: 0, body };
      return cache.run(request(body), attempt, next);
    };
    // warm-up (JIT), then each measure three times and the best kept: a busy machine only ever adds time
    await perCall(N, run, 10 * N);
    await perCall(N, () => next());
    let baseline = Number.POSITIVE_INFINITY;
    let misses = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 3; round++) {
      baseline = Math.min(baseline, await perCall(N, () => next()));
      misses = Math.min(misses, await perCall(N, run, (round + 1) * 100 * N));
    }
    const overhead = misses - baseline;

    calls = 0;
    const hitBody = bodyOf(-1);
    const hitRequest = () => cache.run(request(hitBody), { index: 'config', target: config, provider, retry: 0, body: hitBody }, next);
    const first = await hitRequest();
    expect(first.answer?.text).toBe(ANSWER);
    await perCall(N, hitRequest);
    let hit = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 3; round++) hit = Math.min(hit, await perCall(N, hitRequest));
    const served = await hitRequest();

    console.info(`[cache bench] stage: miss overhead ${overhead.toFixed(2)} µs (miss ${misses.toFixed(2)} µs, provider stub ${baseline.toFixed(2)} µs), hit ${hit.toFixed(2)} µs, over ${N} requests`);
    expect(calls).toBe(1); // only the first of 1 + 7 × 2000 identical requests reached the provider
    expect(served.answer?.text).toBe(ANSWER);
    expect(overhead).toBeLessThan(MISS_OVERHEAD_US);
    expect(hit).toBeLessThan(HIT_US);
  }, 60_000);
});

describe('the whole gateway, in-process', () => {
  let gateway: Gateway;
  let mock: OpenAIMock;
  beforeAll(async () => {
    mock = await startOpenAIMock({ apiKey: null });
    gateway = await startInProcessGateway();
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.stop();
  });

  const call = async (body: JsonObject, cached: boolean) => {
    const headers = providerHeaders(mock.url, cached ? { 'x-gateway-config': JSON.stringify({ cache: { mode: 'simple' } }) } : {});
    const res = await gateway.handle(new Request('http://gateway/v1/chat/completions', { method: 'POST', headers, body: JSON.stringify(body) }));
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`status ${res.status}`);
    return res.headers.get('x-gateway-cache-status');
  };

  test(`${N} requests of one body are one provider call; a hit is faster than an uncached call`, async () => {
    const body = bodyOf(-2);
    expect(await call(body, true)).toBe('MISS');
    await perCall(200, () => call(body, true));
    const hit = await perCall(N, () => call(body, true));
    expect(await call(body, true)).toBe('HIT');
    expect(mock.requests.length).toBe(1);

    await perCall(200, (i) => call(bodyOf(i), false), 50 * N);
    const uncached = await perCall(N, (i) => call(bodyOf(i), false), 60 * N);
    const missing = await perCall(N, (i) => call(bodyOf(i), true), 70 * N);
    console.info(
      `[cache bench] gateway in-process: hit ${hit.toFixed(1)} µs, uncached call ${uncached.toFixed(1)} µs, miss ${missing.toFixed(1)} µs (miss − uncached ${(missing - uncached).toFixed(1)} µs, includes the mock's HTTP noise)`,
    );
    expect(hit).toBeLessThan(uncached);
  }, 120_000);
});
