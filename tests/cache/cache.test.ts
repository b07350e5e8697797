// The response cache end to end, simple mode, in-process store: the real gateway process in front of the OpenAI
// mock, called with the official `openai` SDK (maxRetries 0). Upstream calls are counted on the mock.
//
// - hit / miss, x-gateway-cache-status on every answer (DISABLED without a cache config);
// - x-gateway-cache-force-refresh: REFRESH, the provider is called and the fresh answer replaces the stored one;
// - x-gateway-cache-namespace partitions the cache, and then metadata no longer does;
// - max_age (seconds): an answer older than it is not served;
// - errors, cut streams and client-aborted streams are never stored;
// - completions and embeddings;
// - streaming: a stream is stored once complete and replayed to a later stream (same content, valid SSE ending with
//   data: [DONE]) or to a whole request (the assembled chat.completion); a whole answer is replayed as a stream.

import { beforeEach, describe, expect, test } from 'bun:test';
import { useStack } from '../helpers/e2e-stack.ts';
import {
  cacheHeaders,
  chat,
  contentOf,
  expectValidSse,
  rawStream,
  SIMPLE,
  streamChat,
  T,
  unique,
  upstream,
  userChat,
} from './support.ts';

const stack = useStack('sqlite');
beforeEach(() => stack().mock.reset());

describe('simple mode', () => {
  test('miss, then hit without calling the provider; the status header is always set', async () => {
    const { client, mock } = stack();
    const body = userChat(unique('What is the capital of France?'));
    const first = await chat(client(), body, SIMPLE);
    expect(first.status).toBe('MISS');
    expect(first.headers.get('x-gateway-provider')).toBe('openai');
    const second = await chat(client(), body, SIMPLE);
    expect(second.status).toBe('HIT');
    expect(second.data).toEqual(first.data); // the stored answer as it came, id included
    expect(second.headers.get('x-gateway-provider')).toBe('openai');
    expect(second.headers.get('x-gateway-trace-id')).toBeString();
    expect(upstream(mock)).toBe(1);

    // Another body, another model, another parameter: misses.
    expect((await chat(client(), { ...body, temperature: 0.5 }, SIMPLE)).status).toBe('MISS');
    expect((await chat(client(), { ...body, model: 'gpt-4o' }, SIMPLE)).status).toBe('MISS');
    expect(upstream(mock)).toBe(3);

    // No cache config: DISABLED, the provider is called every time.
    expect((await chat(client(), body, {})).status).toBe('DISABLED');
    expect((await chat(client(), body, {})).status).toBe('DISABLED');
    expect(upstream(mock)).toBe(5);
  }, T);

  test('the key is the body the target sends: override_params count, the order of keys does not', async () => {
    const { client, mock } = stack();
    const text = unique('Order of keys');
    const a = await chat(client(), { messages: [{ role: 'user', content: text }], model: 'gpt-4o-mini', temperature: 0 }, SIMPLE);
    expect(a.status).toBe('MISS');
    const b = await chat(client(), { temperature: 0, model: 'gpt-4o-mini', messages: [{ content: text, role: 'user' }] }, SIMPLE);
    expect(b.status).toBe('HIT');
    // The same client body, but the config overrides the temperature: another body goes out, another key.
    const overridden = { 'x-gateway-config': JSON.stringify({ cache: { mode: 'simple' }, override_params: { temperature: 1 } }) };
    expect((await chat(client(), userChat(text, { temperature: 0 }), overridden)).status).toBe('MISS');
    expect((await chat(client(), userChat(text, { temperature: 0.3 }), overridden)).status).toBe('HIT');
    expect(mock.requests.at(-1)?.json).toMatchObject({ temperature: 1 });
    expect(upstream(mock)).toBe(2);
  }, T);

  test('force refresh skips the lookup, calls the provider and stores the fresh answer', async () => {
    const { client, mock } = stack();
    const body = userChat(unique('Refresh me'));
    const first = await chat(client(), body, SIMPLE);
    const refreshed = await chat(client(), body, { ...SIMPLE, 'x-gateway-cache-force-refresh': 'true' });
    expect(refreshed.status).toBe('REFRESH');
    expect(refreshed.data.id).not.toBe(first.data.id);
    expect(upstream(mock)).toBe(2);
    const after = await chat(client(), body, SIMPLE);
    expect(after.status).toBe('HIT');
    expect(after.data.id).toBe(refreshed.data.id);
    expect(upstream(mock)).toBe(2);
    // Anything but "true" is no refresh.
    expect((await chat(client(), body, { ...SIMPLE, 'x-gateway-cache-force-refresh': 'false' })).status).toBe('HIT');
  }, T);

  test('namespaces partition the cache; with one, metadata does not', async () => {
    const { client, mock } = stack();
    const body = userChat(unique('Namespaced'));
    const ns = (n: string, metadata?: Record<string, string>) => ({
      ...SIMPLE,
      'x-gateway-cache-namespace': n,
      ...(metadata ? { 'x-gateway-metadata': JSON.stringify(metadata) } : {}),
    });
    expect((await chat(client(), body, ns('team-a', { user: 'u1' }))).status).toBe('MISS');
    expect((await chat(client(), body, ns('team-a', { user: 'u2', session: 's' }))).status).toBe('HIT');
    expect((await chat(client(), body, ns('team-b'))).status).toBe('MISS');
    expect((await chat(client(), body, SIMPLE)).status).toBe('MISS'); // no namespace: its own partition
    expect(upstream(mock)).toBe(3);
    // Without a namespace the metadata is part of the key.
    const md = (m: Record<string, string>) => ({ ...SIMPLE, 'x-gateway-metadata': JSON.stringify(m) });
    expect((await chat(client(), body, md({ user: 'u1' }))).status).toBe('MISS');
    expect((await chat(client(), body, md({ user: 'u1' }))).status).toBe('HIT');
    expect((await chat(client(), body, md({ user: 'u2' }))).status).toBe('MISS');
    expect(upstream(mock)).toBe(5);
  }, T);

  test('max_age: an answer older than it is not served', async () => {
    const { client, mock } = stack();
    const body = userChat(unique('Short lived'));
    const headers = cacheHeaders({ mode: 'simple', max_age: 1 });
    expect((await chat(client(), body, headers)).status).toBe('MISS');
    expect((await chat(client(), body, headers)).status).toBe('HIT');
    await Bun.sleep(1_100);
    expect((await chat(client(), body, headers)).status).toBe('MISS');
    expect((await chat(client(), body, headers)).status).toBe('HIT');
    expect(upstream(mock)).toBe(2);
    // A request that accepts only younger answers does not get an older one (max_age is also the oldest accepted).
    const longLived = userChat(unique('Long lived'));
    await chat(client(), longLived, cacheHeaders({ mode: 'simple', max_age: 3600 }));
    await Bun.sleep(1_100);
    expect((await chat(client(), longLived, cacheHeaders({ mode: 'simple', max_age: 1 }))).status).toBe('MISS');
  }, T);

  test('errors are never stored', async () => {
    const { client, mock } = stack();
    const body = userChat(unique('Failing'));
    mock.enqueue({ kind: 'error', status: 500 });
    const failed = await client()
      .chat.completions.create(body, { headers: SIMPLE })
      .withResponse()
      .catch((e: { status?: number; headers?: Headers }) => e);
    expect((failed as { status?: number }).status).toBe(500);
    expect((failed as { headers?: Headers }).headers?.get('x-gateway-cache-status')).toBe('MISS');
    mock.enqueue({ kind: 'error', status: 429 });
    await client().chat.completions.create(body, { headers: SIMPLE }).catch(() => undefined);
    const ok = await chat(client(), body, SIMPLE);
    expect(ok.status).toBe('MISS');
    expect((await chat(client(), body, SIMPLE)).status).toBe('HIT');
    expect(upstream(mock)).toBe(3);
  }, T);

  test('completions and embeddings', async () => {
    const { client, mock } = stack();
    const prompt = unique('Say this is a test');
    const complete = async () => {
      const { data, response } = await client()
        .completions.create({ model: 'gpt-3.5-turbo-instruct', prompt, max_tokens: 20 }, { headers: SIMPLE })
        .withResponse();
      return { data, status: response.headers.get('x-gateway-cache-status') };
    };
    const c1 = await complete();
    const c2 = await complete();
    expect([c1.status, c2.status]).toEqual(['MISS', 'HIT']);
    expect(c2.data).toEqual(c1.data);
    expect(upstream(mock, '/v1/completions')).toBe(1);

    const input = unique('embed me');
    const embed = async (encoding_format?: 'float' | 'base64') => {
      const { data, response } = await client()
        .embeddings.create({ model: 'text-embedding-3-small', input, ...(encoding_format ? { encoding_format } : {}) }, { headers: SIMPLE })
        .withResponse();
      return { data, status: response.headers.get('x-gateway-cache-status') };
    };
    const e1 = await embed();
    const e2 = await embed();
    expect([e1.status, e2.status]).toEqual(['MISS', 'HIT']);
    expect(e2.data.data[0]?.embedding).toEqual(e1.data.data[0]?.embedding as number[]);
    // another encoding is another body
    expect((await embed('float')).status).toBe('MISS');
    expect(upstream(mock, '/v1/embeddings')).toBe(2);
  }, T);

  test('moderations are not cached', async () => {
    const { client, mock } = stack();
    const input = unique('a harmless sentence');
    for (let i = 0; i < 2; i++) {
      const { response } = await client().moderations.create({ input }, { headers: SIMPLE }).withResponse();
      expect(response.headers.get('x-gateway-cache-status')).toBe('DISABLED');
    }
    expect(upstream(mock, '/v1/moderations')).toBe(2);
  }, T);
});

describe('streaming', () => {
  test('a stream is stored once complete and replayed to a later stream: same content, valid SSE, [DONE]', async () => {
    const { client, mock, gw, headers } = stack();
    const body = userChat(unique('Stream me twice'));
    const first = await streamChat(client(), body, SIMPLE);
    expect(first.status).toBe('MISS');
    expect(first.content).toBe(`You said: ${body.messages[0]?.content as string}`);
    expect(first.chunks.length).toBeGreaterThan(3); // word by word from the provider

    const second = await streamChat(client(), body, SIMPLE);
    expect(second.status).toBe('HIT');
    expect(second.content).toBe(first.content);
    expect(second.ids).toEqual(first.ids); // the stored answer's id
    expect(second.chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
    expect(upstream(mock)).toBe(1);

    // The exact bytes: SSE events of JSON chunks, the last one data: [DONE].
    const raw = await rawStream(gw.url, { ...headers(), ...SIMPLE }, { ...body });
    expect(raw.status).toBe(200);
    expect(raw.cache).toBe('HIT');
    expect(raw.contentType).toContain('text/event-stream');
    expect(contentOf(expectValidSse(raw.text))).toBe(first.content);
    expect(upstream(mock)).toBe(1);
  }, T);

  test('stream, then a whole request: the assembled chat.completion', async () => {
    const { client, mock } = stack();
    const body = userChat(unique('Stream then whole'));
    const streamed = await streamChat(client(), { ...body, stream_options: { include_usage: true } }, SIMPLE);
    expect(streamed.status).toBe('MISS');
    const usage = streamed.chunks.at(-1)?.usage;
    expect(usage?.total_tokens).toBeGreaterThan(0);

    const whole = await chat(client(), body, SIMPLE);
    expect(whole.status).toBe('HIT');
    expect(whole.data.object).toBe('chat.completion');
    expect(whole.data.id).toBe([...streamed.ids][0] as string);
    expect(whole.data.choices[0]?.message).toMatchObject({ role: 'assistant', content: streamed.content });
    expect(whole.data.choices[0]?.finish_reason).toBe('stop');
    expect(whole.data.usage).toEqual(usage as NonNullable<typeof usage>);
    expect(upstream(mock)).toBe(1);
  }, T);

  test('a stream without usage serves streams, not whole requests (which always carry usage)', async () => {
    const { client, mock } = stack();
    const body = userChat(unique('No usage in the stream'));
    expect((await streamChat(client(), body, SIMPLE)).status).toBe('MISS');
    expect((await streamChat(client(), body, SIMPLE)).status).toBe('HIT');
    // asking for the usage chunk, or for a whole answer, needs usage the stream did not carry: a miss, which stores
    // the whole answer in its place
    expect((await streamChat(client(), { ...body, stream_options: { include_usage: true } }, SIMPLE)).status).toBe('MISS');
    const whole = await chat(client(), body, SIMPLE);
    expect(whole.status).toBe('HIT');
    expect(whole.data.usage?.total_tokens).toBeGreaterThan(0);
    expect(upstream(mock)).toBe(2);
  }, T);

  test('a whole answer, then a stream: replayed as SSE with the usage chunk when asked for', async () => {
    const { client, mock, gw, headers } = stack();
    const body = userChat(unique('Whole then stream'));
    const whole = await chat(client(), body, SIMPLE);
    const streamed = await streamChat(client(), { ...body, stream_options: { include_usage: true } }, SIMPLE);
    expect(streamed.status).toBe('HIT');
    expect(streamed.content).toBe(whole.data.choices[0]?.message.content as string);
    expect(streamed.chunks.at(-1)?.usage).toEqual(whole.data.usage as NonNullable<typeof whole.data.usage>);
    const raw = await rawStream(gw.url, { ...headers(), ...SIMPLE }, { ...body });
    expect(raw.cache).toBe('HIT');
    const chunks = expectValidSse(raw.text);
    expect(chunks.every((c) => c.usage === undefined)).toBe(true);
    expect(upstream(mock)).toBe(1);
  }, T);

  test('a cut stream is never stored', async () => {
    const { client, mock, gw, headers } = stack();
    const body = userChat(unique('Cut me short please'));
    mock.enqueue({ kind: 'default', stopAfterChunks: 2, end: 'cut' });
    const cut = await rawStream(gw.url, { ...headers(), ...SIMPLE }, { ...body });
    expect(cut.cache).toBe('MISS');
    expect(cut.text).toContain('"error"');
    expect(cut.text).not.toContain('[DONE]');
    mock.enqueue({ kind: 'default', stopAfterChunks: 2, end: 'close' }); // ends without [DONE]
    await rawStream(gw.url, { ...headers(), ...SIMPLE }, { ...body });
    await Bun.sleep(50);
    const whole = await streamChat(client(), body, SIMPLE);
    expect(whole.status).toBe('MISS');
    expect(upstream(mock)).toBe(3);
    expect((await streamChat(client(), body, SIMPLE)).status).toBe('HIT');
  }, T);

  test('a stream the client left is never stored', async () => {
    const { client, mock, gw, headers } = stack();
    const body = userChat(unique('Slow words for a client that leaves'));
    mock.enqueue({ kind: 'default', chunkDelayMs: 100 });
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers(), ...SIMPLE },
      body: JSON.stringify({ ...body, stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.cancel().catch(() => {});
    await Bun.sleep(800); // the rest of the provider's stream would have arrived by now
    const again = await streamChat(client(), body, SIMPLE);
    expect(again.status).toBe('MISS');
    expect(upstream(mock)).toBe(2);
  }, T);
});
