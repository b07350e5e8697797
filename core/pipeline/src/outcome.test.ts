// Usage at completion: the outcome the finally stages get carries the answer's final usage, read once (on first
// access) from a whole answer's body, from a stream's last usage event (also beyond the log's capture limit, and
// from a translated provider stream), and figures one stage attaches are read by the next.
import { describe, expect, test } from 'bun:test';
import {
  type AttemptStage,
  defineFigure,
  type FinallyStage,
  type GatewayRequest,
  type Logger,
  type Outcome,
  type ProviderAdapter,
  type StreamTranslator,
} from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import { HostGuard } from './host-guard.ts';
import { type PipelineDeps, runPipeline } from './runner.ts';
import { OpenAiSsePassThrough, type StreamProcessor, TranslatingProcessor } from './streams/processors.ts';
import { relayStream } from './streams/relay.ts';

const adapter: ProviderAdapter = { id: 'fake', baseUrl: () => 'http://unused', authorize: (c) => c, endpoints: { chatComplete: { path: () => '/x' } } };
const logger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const enc = new TextEncoder();
const sse = (...events: unknown[]) => events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');

function answering(body: string, streamUsage?: Record<string, number>): AttemptStage {
  return {
    name: 'fake-provider',
    phase: 'attempt',
    rule: 'sequential',
    run: async (_req, attempt) => ({
      response: new Response(body),
      status: 200,
      providerId: attempt.provider.id,
      settled: Promise.resolve({ body, usage: streamUsage }),
    }),
  };
}

async function outcomeOf(attempt: AttemptStage, finallyStages: FinallyStage[] = []): Promise<Outcome> {
  let resolve!: (o: Outcome) => void;
  const got = new Promise<Outcome>((r) => (resolve = r));
  const sink: FinallyStage = { name: 'sink', phase: 'finally', rule: 'fire-and-forget', run: (_req, o) => resolve(o) };
  const deps: PipelineDeps = {
    strategies: new Map(),
    attemptStages: [attempt],
    call: { hostGuard: new HostGuard([]), captureLimit: 1000, streamIdleTimeoutMs: 1000, defaultTimeoutMs: 1000 },
    resolveProvider: (target) => ({ provider: adapter, target }),
    stages: { requestStages: [], responseStages: [], finallyStages: [...finallyStages, sink] },
    logger,
  };
  const req: GatewayRequest = buildGatewayRequest({ body: { model: 'm', messages: [] }, config: { provider: 'fake' } });
  await runPipeline(req, deps);
  return got;
}

describe('usage at completion', () => {
  test('a whole answer: the counts and the details it carries, read once', async () => {
    const body = JSON.stringify({
      id: 'c1',
      choices: [],
      usage: {
        prompt_tokens: 20,
        completion_tokens: 9,
        total_tokens: 29,
        prompt_tokens_details: { cached_tokens: 8, audio_tokens: 2 },
        completion_tokens_details: { reasoning_tokens: 4, accepted_prediction_tokens: 1, rejected_prediction_tokens: 0 },
      },
    });
    const outcome = await outcomeOf(answering(body));
    expect(outcome.usage).toEqual({
      promptTokens: 20,
      completionTokens: 9,
      totalTokens: 29,
      cachedInputTokens: 8,
      audioInputTokens: 2,
      reasoningTokens: 4,
      acceptedPredictionTokens: 1,
      rejectedPredictionTokens: 0,
    });
    // Once: the second read is the same object (no second parse).
    expect(outcome.usage).toBe(outcome.usage);
  });

  test('a stream: the usage its events carried wins over its (size-capped) body', async () => {
    const outcome = await outcomeOf(answering(sse({ choices: [] }), { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }));
    expect(outcome.usage).toEqual({ promptTokens: 3, completionTokens: 4, totalTokens: 7 });
  });

  test('Anthropic-style cache counts, and the responses API names', async () => {
    const cached = await outcomeOf(answering(JSON.stringify({ usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 6, cache_creation_input_tokens: 2 } })));
    // Anthropic's `input_tokens` leaves out the cache reads and writes: "total_input_tokens = cache_read_input_tokens +
    // cache_creation_input_tokens + input_tokens" (Anthropic, Prompt caching, "Tracking cache performance":
    // https://platform.claude.com/docs/en/build-with-claude/prompt-caching). So the prompt is 10 + 6 + 2, not 10
    // (which this test asserted before, and which priced the 8 cached tokens as if the uncached part were 2).
    expect(cached.usage).toEqual({ promptTokens: 18, completionTokens: 5, totalTokens: 23, cachedInputTokens: 6, cacheWriteInputTokens: 2 });
  });

  test('no usage in the answer: undefined', async () => {
    expect((await outcomeOf(answering(JSON.stringify({ choices: [] })))).usage).toBeUndefined();
  });

  test('a figure attached by one finally stage is read by the next (the pricing and the log)', async () => {
    const COST = defineFigure<{ cents: number }>('test.cost');
    const seen: unknown[] = [];
    const pricing: FinallyStage = { name: 'pricing', phase: 'finally', rule: 'fire-and-forget', run: (_req, o) => o.figures.set(COST, { cents: (o.usage?.totalTokens ?? 0) * 2 }) };
    const reader: FinallyStage = { name: 'reader', phase: 'finally', rule: 'fire-and-forget', run: (_req, o) => void seen.push(o.figures.get(COST)) };
    const outcome = await outcomeOf(answering(JSON.stringify({ usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } })), [pricing, reader]);
    expect(seen).toEqual([{ cents: 6 }]);
    expect(outcome.figures.get(defineFigure<number>('test.other'))).toBeUndefined();
  });
});

describe('stream processors keep the last usage object of the events they parse', () => {
  async function relayAll(parts: string[], processor: StreamProcessor, captureLimit: number) {
    let end: { usage?: unknown; body: string; complete: boolean } | undefined;
    const upstream = new ReadableStream<Uint8Array>({
      start(c) {
        for (const p of parts) c.enqueue(enc.encode(p));
        c.close();
      },
    });
    const out = relayStream(upstream, { provider: 'p', processor, captureLimit, idleTimeoutMs: 1000, abortUpstream() {}, onEnd: (e) => (end = e) });
    await new Response(out).text();
    return end!;
  }

  test('an OpenAI stream with include_usage, longer than the capture limit', async () => {
    const deltas = Array.from({ length: 200 }, (_, i) => sse({ choices: [{ delta: { content: `t${i}` } }], usage: null }));
    const last = sse({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 200, total_tokens: 205 } }, '[DONE]');
    const end = await relayAll([...deltas, last], new OpenAiSsePassThrough(), 512);
    expect(end.complete).toBe(true);
    expect(end.body.length).toBeLessThanOrEqual(512); // the log's copy never saw the usage event …
    expect(end.usage).toEqual({ prompt_tokens: 5, completion_tokens: 200, total_tokens: 205 }); // … the processor did
  });

  test('a translated provider stream: the usage of the chunks the adapter produced', async () => {
    const translator: StreamTranslator & { toChunks: NonNullable<StreamTranslator['toChunks']> } = {
      framing: 'ndjson',
      toChunks: (event) => {
        const e = JSON.parse(event.data) as { text?: string; in?: number; out?: number };
        if (e.text) return { chunks: [{ choices: [{ delta: { content: e.text } }] }] };
        return { chunks: [{ choices: [], usage: { prompt_tokens: e.in ?? 0, completion_tokens: e.out ?? 0, total_tokens: (e.in ?? 0) + (e.out ?? 0) } }], done: true };
      },
    };
    const processor = new TranslatingProcessor(translator, { endpoint: 'chatComplete', model: 'm', strictWireCompliance: true, now: 0 });
    const end = await relayAll(['{"text":"hi"}\n', '{"in":11,"out":3}\n'], processor, 10_000);
    expect(end.complete).toBe(true);
    expect(end.usage).toEqual({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
  });
});
