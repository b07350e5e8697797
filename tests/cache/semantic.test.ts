// Semantic mode end to end: the real gateway process, the OpenAI mock, the official `openai` SDK.
//
// - with no embeddings endpoint configured, the local lexical embedding: a reworded prompt (case, punctuation, polite
//   words, contractions) is a SEMANTIC_HIT served without calling the provider, an unrelated prompt or one that
//   swaps a content word is a SEMANTIC_MISS; every message must be similar (a different system prompt misses);
//   other parameters and other models are other partitions; streams are replayed;
// - with GATEWAY_CACHE_EMBEDDINGS_URL: the configured OpenAI-compatible endpoint embeds (model and key sent as
//   configured), so a paraphrase no lexical measure would match is a hit; when the endpoint fails, requests go on as
//   SEMANTIC_MISS at once and are still answered.

import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import { useStack } from '../helpers/e2e-stack.ts';
import { chat, expectValidSse, RUN, rawStream, SEMANTIC, streamChat, T, topicVector, upstream, userChat } from './support.ts';

const ns = (name: string) => ({ ...SEMANTIC, 'x-gateway-cache-namespace': `${RUN}-${name}` });

describe('semantic mode, local lexical embedding', () => {
  const stack = useStack('sqlite');
  beforeEach(() => stack().mock.reset());

  test('a reworded prompt hits, an unrelated one misses', async () => {
    const { client, mock } = stack();
    const h = ns('capital');
    const first = await chat(client(), userChat('What is the capital city of France?'), h);
    expect(first.status).toBe('SEMANTIC_MISS');
    for (const reworded of ['what is the capital city of france', 'Tell me: what is the capital city of France?', "What's the capital city of France?"]) {
      const again = await chat(client(), userChat(reworded), h);
      expect(again.status).toBe('SEMANTIC_HIT');
      expect(again.data.id).toBe(first.data.id);
      expect(again.data.choices[0]?.message.content).toBe('You said: What is the capital city of France?');
    }
    expect(upstream(mock)).toBe(1);
    for (const other of ['How do I bake sourdough bread at home?', 'What is the capital city of Germany?', 'What is the population of France?'])
      expect((await chat(client(), userChat(other), h)).status).toBe('SEMANTIC_MISS');
    expect(upstream(mock)).toBe(4);
    // the exact prompt again: a hit too
    expect((await chat(client(), userChat('What is the capital city of France?'), h)).status).toBe('SEMANTIC_HIT');
    expect(upstream(mock)).toBe(4);
  }, T);

  test('every message must be similar; other parameters and models are other partitions', async () => {
    const { client, mock } = stack();
    const h = ns('conversation');
    const convo = (system: string, user: string, extra = {}) =>
      userChat('', { messages: [{ role: 'system', content: system }, { role: 'user', content: user }], ...extra });
    const system = 'You are a geography teacher. Answer in one short sentence, and never use lists or tables.';
    expect((await chat(client(), convo(system, 'Which river flows through Paris?'), h)).status).toBe('SEMANTIC_MISS');
    expect((await chat(client(), convo(system, 'which river flows through Paris'), h)).status).toBe('SEMANTIC_HIT');
    expect((await chat(client(), convo('You are a pirate. Answer in one short sentence.', 'Which river flows through Paris?'), h)).status).toBe('SEMANTIC_MISS');
    expect((await chat(client(), convo(system, 'Which river flows through London?'), h)).status).toBe('SEMANTIC_MISS');
    expect((await chat(client(), convo(system, 'which river flows through Paris', { temperature: 0.1 }), h)).status).toBe('SEMANTIC_MISS');
    expect((await chat(client(), convo(system, 'which river flows through Paris', { model: 'gpt-4o' }), h)).status).toBe('SEMANTIC_MISS');
    expect(upstream(mock)).toBe(5);
  }, T);

  test('streams: a reworded streamed prompt is replayed as valid SSE', async () => {
    const { client, mock, gw, headers } = stack();
    const h = ns('stream');
    const first = await streamChat(client(), userChat('Please describe the Eiffel Tower briefly.'), h);
    expect(first.status).toBe('SEMANTIC_MISS');
    const raw = await rawStream(gw.url, { ...headers(), ...h }, userChat('please describe the Eiffel Tower briefly'));
    expect(raw.cache).toBe('SEMANTIC_HIT');
    const chunks = expectValidSse(raw.text);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(first.content);
    // and to a whole request, with the usage the stream carried
    const streamedWithUsage = await streamChat(client(), { ...userChat('Name three French cheeses.'), stream_options: { include_usage: true } }, h);
    expect(streamedWithUsage.status).toBe('SEMANTIC_MISS');
    const whole = await chat(client(), userChat('name three french cheeses'), h);
    expect(whole.status).toBe('SEMANTIC_HIT');
    expect(whole.data.choices[0]?.message.content).toBe(streamedWithUsage.content);
    expect(upstream(mock)).toBe(2);
  }, T);

  test('namespaces keep semantic neighbours apart', async () => {
    const { client, mock } = stack();
    expect((await chat(client(), userChat('How tall is Mount Everest?'), ns('ns-a'))).status).toBe('SEMANTIC_MISS');
    expect((await chat(client(), userChat('how tall is mount everest'), ns('ns-b'))).status).toBe('SEMANTIC_MISS');
    expect((await chat(client(), userChat('how tall is mount everest'), ns('ns-a'))).status).toBe('SEMANTIC_HIT');
    expect(upstream(mock)).toBe(2);
  }, T);
});

// ---- an OpenAI-compatible embeddings endpoint of our own ---------------------------------------------------------

const embeddingCalls: { auth: string | null; body: { model?: string; input?: string[] } }[] = [];
let embeddingsDown = false;
let embeddingsDelayMs = 0;
const embeddings = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { model?: string; input?: string[] };
    embeddingCalls.push({ auth: req.headers.get('authorization'), body });
    if (embeddingsDown) return new Response('{"error":{"message":"down"}}', { status: 503 });
    if (embeddingsDelayMs) await Bun.sleep(embeddingsDelayMs);
    const input = body.input ?? [];
    return Response.json({ object: 'list', model: body.model, data: input.map((text, index) => ({ object: 'embedding', index, embedding: topicVector(text) })), usage: { prompt_tokens: 1, total_tokens: 1 } });
  },
});
afterAll(() => embeddings.stop(true));

describe('semantic mode, configured embeddings endpoint', () => {
  const stack = useStack('sqlite', {
    env: {
      GATEWAY_CACHE_EMBEDDINGS_URL: `http://127.0.0.1:${embeddings.port}/v1`,
      GATEWAY_CACHE_EMBEDDINGS_API_KEY: 'sk-embeddings-test',
      GATEWAY_CACHE_EMBEDDINGS_MODEL: 'test-embedder',
    },
  });
  beforeEach(() => {
    stack().mock.reset();
    embeddingCalls.length = 0;
    embeddingsDown = false;
    embeddingsDelayMs = 0;
  });

  test('a request right behind a stored answer sees it, even while its index entry is still being embedded', async () => {
    const { client } = stack();
    const h = ns('slow-embedder');
    embeddingsDelayMs = 150; // storing the first answer needs an embedding: slower than the next request
    const first = await chat(client(), userChat('What is the capital of France?'), h);
    expect(first.status).toBe('SEMANTIC_MISS');
    const para = await chat(client(), userChat('Which town hosts the French government?'), h);
    expect(para.status).toBe('SEMANTIC_HIT');
    expect(para.data.id).toBe(first.data.id);
  });

  test('a paraphrase the endpoint finds similar is a hit; the endpoint is called as configured', async () => {
    const { client, mock } = stack();
    const h = ns('remote');
    const first = await chat(client(), userChat('What is the capital of France?'), h);
    expect(first.status).toBe('SEMANTIC_MISS');
    const para = await chat(client(), userChat('Which town hosts the French government?'), h);
    expect(para.status).toBe('SEMANTIC_HIT');
    expect(para.data.id).toBe(first.data.id);
    expect((await chat(client(), userChat('How do I bake bread?'), h)).status).toBe('SEMANTIC_MISS');
    expect(upstream(mock)).toBe(2);
    expect(embeddingCalls.length).toBeGreaterThan(0);
    expect(embeddingCalls[0]?.auth).toBe('Bearer sk-embeddings-test');
    expect(embeddingCalls[0]?.body.model).toBe('test-embedder');
    expect(embeddingCalls.flatMap((c) => c.body.input ?? [])).toContain('Which town hosts the French government?');
  }, T);

  test('an endpoint that fails: requests are answered at once as SEMANTIC_MISS', async () => {
    const { client, mock } = stack();
    const h = ns('remote-down');
    await chat(client(), userChat('Tell me about French wine.'), h);
    embeddingsDown = true;
    for (const text of ['Tell me about wine from France.', 'Describe French wines.', 'Tell me about French wine!']) {
      const started = performance.now();
      const answer = await chat(client(), userChat(text), h);
      expect(answer.status).toBe('SEMANTIC_MISS');
      expect(answer.data.choices[0]?.message.content).toBe(`You said: ${text}`);
      expect(performance.now() - started).toBeLessThan(1_000);
    }
    expect(upstream(mock)).toBe(4);
    // exact repeats are still served: they need no embedding
    expect((await chat(client(), userChat('Tell me about French wine.'), h)).status).toBe('SEMANTIC_HIT');
  }, T);
});
