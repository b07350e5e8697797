import { describe, expect, test } from 'bun:test';
import { type Attempt, type AttemptResult, Errors, type GatewayConfig, type GatewayRequest, type JsonObject, type ProviderAdapter, type SettledBody } from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import { MemoryBackend } from './backends/memory.ts';
import { decodeIndex, LexicalEmbedder } from './semantic.ts';
import { readCacheSettings } from './settings.ts';
import { ResponseCache, type StageBackend } from './stage.ts';

const answerText = (content: string, usage = true) =>
  JSON.stringify({
    id: `chatcmpl-${content}`,
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'stop' }],
    ...(usage ? { usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } : {}),
  });

function whole(text: string, status = 200): AttemptResult {
  return {
    answer: { text, status, contentType: 'application/json' },
    status,
    providerId: 'openai',
    settled: Promise.resolve({ body: text }),
    get response() {
      return new Response(text, { status });
    },
  };
}

/** A streamed result whose bytes are `frames`, then a settled end as the relay would report it. */
function streamed(frames: string[], end: SettledBody = { body: '' }): AttemptResult {
  let resolve!: (s: SettledBody) => void;
  const settled = new Promise<SettledBody>((r) => (resolve = r));
  const enc = new TextEncoder();
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < frames.length) c.enqueue(enc.encode(frames[i++] as string));
      else {
        c.close();
        resolve(end);
      }
    },
  });
  return { response: new Response(body, { headers: { 'content-type': 'text/event-stream' } }), status: 200, providerId: 'openai', settled };
}

function request(config: GatewayConfig, body: JsonObject, headers: Record<string, string> = {}, workspaceId = 'ws'): GatewayRequest {
  return buildGatewayRequest({ body, rawBody: undefined, headers, caller: { workspaceId }, config, receivedAt: 0 });
}

const simple: GatewayConfig = { provider: 'openai', api_key: 'sk', cache: { mode: 'simple' } };
const semantic: GatewayConfig = { provider: 'openai', api_key: 'sk', cache: { mode: 'semantic' } };
const chatBody = (content: string, extra: JsonObject = {}): JsonObject => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

function setup(env: Record<string, string> = {}, backend: StageBackend = new MemoryBackend(1 << 24)) {
  const cache = new ResponseCache({ backend, settings: readCacheSettings(env), embedder: new LexicalEmbedder() });
  let calls = 0;
  const ask = async (config: GatewayConfig, body: JsonObject, result: () => AttemptResult = () => whole(answerText(String(calls))), headers: Record<string, string> = {}) => {
    const req = request(config, body, headers);
    const attempt: Attempt = { index: 'config', target: config, provider: { id: 'openai' } as ProviderAdapter, retry: 0, body };
    const out = await cache.run(req, attempt, async () => {
      calls++;
      return result();
    });
    const text = out.answer ? out.answer.text : await out.response.text();
    await cache.flush();
    return { status: req.locals.cacheStatus, text, out };
  };
  return { cache, ask, calls: () => calls, backend };
}

describe('the cache stage', () => {
  test('no cache on the target: DISABLED, the provider is called', async () => {
    const { ask, calls } = setup();
    const noCache: GatewayConfig = { provider: 'openai', api_key: 'sk' };
    expect((await ask(noCache, chatBody('a'))).status).toBe('DISABLED');
    expect((await ask(noCache, chatBody('a'))).status).toBe('DISABLED');
    expect(calls()).toBe(2);
  });

  test('max_age 0 stores nothing', async () => {
    const { ask, calls } = setup();
    const config: GatewayConfig = { ...simple, cache: { mode: 'simple', max_age: 0 } };
    expect((await ask(config, chatBody('a'))).status).toBe('MISS');
    expect((await ask(config, chatBody('a'))).status).toBe('MISS');
    expect(calls()).toBe(2);
  });

  test('non-2xx answers and failed results are not stored', async () => {
    const { ask, calls } = setup();
    const error = Errors.provider('openai', 500, 'boom');
    await ask(simple, chatBody('a'), () => ({ ...whole('{"error":{}}', 500), error }));
    await ask(simple, chatBody('a'), () => whole('{"error":{}}', 500));
    expect((await ask(simple, chatBody('a'))).status).toBe('MISS');
    expect((await ask(simple, chatBody('a'))).status).toBe('HIT');
    expect(calls()).toBe(3);
  });

  test('a stream is stored only when it ended complete', async () => {
    const { ask, calls } = setup();
    const chunk = (content: string, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
    const body = chatBody('s', { stream: true });
    // the relay reported an error (no [DONE])
    await ask(simple, body, () => streamed([chunk('Hel'), 'data: {"error":{"message":"cut"}}\n\n'], { body: '', error: Errors.streamInterrupted('openai', 'cut') }));
    // the client went away
    await ask(simple, body, () => streamed([chunk('Hel'), chunk('lo', 'stop'), 'data: [DONE]\n\n'], { body: '', clientAborted: true }));
    expect(calls()).toBe(2);
    const ok = await ask(simple, body, () => streamed([chunk('Hel'), chunk('lo', 'stop'), 'data: [DONE]\n\n']));
    expect(ok.status).toBe('MISS');
    expect(ok.text).toBe(`${chunk('Hel') + chunk('lo', 'stop')}data: [DONE]\n\n`); // passed on unchanged
    const hit = await ask(simple, body);
    expect(hit.status).toBe('HIT');
    expect(hit.text).toContain('"content":"Hello"');
    expect(hit.text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(calls()).toBe(3);
  });

  test('streams larger than the largest entry are passed on and not stored', async () => {
    const { ask, calls } = setup({ GATEWAY_CACHE_MAX_ENTRY_BYTES: '200' });
    const frame = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'x'.repeat(150) }, finish_reason: null }] })}\n\n`;
    const body = chatBody('big', { stream: true });
    const first = await ask(simple, body, () => streamed([frame, frame, 'data: [DONE]\n\n']));
    expect(first.text).toBe(`${frame}${frame}data: [DONE]\n\n`);
    expect((await ask(simple, body, () => streamed([frame, 'data: [DONE]\n\n']))).status).toBe('MISS');
    expect(calls()).toBe(2);
  });

  test('a backend that fails is a miss, never a failed request', async () => {
    const failing: StageBackend = {
      name: 'failing',
      get: () => Promise.reject(new Error('down')),
      set: () => Promise.reject(new Error('down')),
    };
    const { ask, calls } = setup({}, failing);
    for (const config of [simple, semantic]) {
      const a = await ask(config, chatBody('a'));
      expect(a.status).toBe(config === simple ? 'MISS' : 'SEMANTIC_MISS');
      expect(JSON.parse(a.text).choices[0].message.content).toBeString();
    }
    expect(calls()).toBe(2);
  });

  test('force refresh: REFRESH, the fresh answer replaces the stored one', async () => {
    const { ask } = setup();
    const first = await ask(simple, chatBody('r'));
    const refreshed = await ask(simple, chatBody('r'), undefined, { 'x-gateway-cache-force-refresh': 'TRUE' });
    expect(refreshed.status).toBe('REFRESH');
    expect(refreshed.text).not.toBe(first.text);
    expect((await ask(simple, chatBody('r'))).text).toBe(refreshed.text);
  });

  test('semantic entries are bounded per partition, oldest first', async () => {
    const backend = new MemoryBackend(1 << 24);
    const { ask, calls } = setup({ GATEWAY_CACHE_SEMANTIC_MAX_ENTRIES: '3' }, backend);
    const questions = ['How tall is Mount Everest?', 'How deep is the Mariana Trench?', 'How long is the Nile river?', 'How wide is the Sahara desert?'];
    for (const q of questions) expect((await ask(semantic, chatBody(q))).status).toBe('SEMANTIC_MISS');
    const indexKey = backend.keys().find((k) => k.startsWith('s:')) as string;
    const index = decodeIndex(backend.peek(indexKey) as Uint8Array, new LexicalEmbedder().id);
    expect(index?.items.length).toBe(3);
    expect(index?.hashes.length).toBe(3);
    // the oldest conversation left the index (its exact entry still answers the exact question)
    expect((await ask(semantic, chatBody('how tall is mount everest'))).status).toBe('SEMANTIC_MISS');
    expect((await ask(semantic, chatBody('how wide is the sahara desert'))).status).toBe('SEMANTIC_HIT');
    expect(calls()).toBe(5);
  });

  test('workspaces never share, however similar', async () => {
    const { cache } = setup();
    let calls = 0;
    const run = async (workspaceId: string, content: string) => {
      const body = chatBody(content);
      const req = request(semantic, body, {}, workspaceId);
      await cache.run(req, { index: 'config', target: semantic, provider: { id: 'openai' } as ProviderAdapter, retry: 0, body }, async () => {
        calls++;
        return whole(answerText(content));
      });
      await cache.flush();
      return req.locals.cacheStatus;
    };
    expect(await run('ws-a', 'What is the speed of light?')).toBe('SEMANTIC_MISS');
    expect(await run('ws-b', 'What is the speed of light?')).toBe('SEMANTIC_MISS');
    expect(await run('ws-b', 'what is the speed of light')).toBe('SEMANTIC_HIT');
    expect(await run('ws-c', 'what is the speed of light')).toBe('SEMANTIC_MISS');
    expect(calls).toBe(3);
  });
});
