// Checks the OpenAI mock with the official `openai` SDK: if the SDK reads the mock's answers, so will anything
// written against the real API. Raw-fetch checks pin the wire format itself (SSE framing, error bodies).

import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, toFile } from 'openai';
import { fixtures as fx, frames, startOpenAIMock, type OpenAIMock } from './openai-server.ts';

const KEY = 'sk-test-mock-key-1234';
let mock: OpenAIMock;
let client: OpenAI;

beforeAll(async () => {
  mock = await startOpenAIMock({ apiKey: KEY });
  client = new OpenAI({ baseURL: mock.url, apiKey: KEY, maxRetries: 0, timeout: 5000 });
});
afterAll(async () => {
  await mock.stop();
});
afterEach(() => mock.reset());

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('openai mock: endpoints through the SDK', () => {
  test('url has the base path and a real port', () => {
    expect(mock.url).toBe(`http://127.0.0.1:${mock.port}/v1`);
    expect(mock.port).toBeGreaterThan(0);
  });

  test('chat completion echoes the last user message, usage in words', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello there' },
      ],
    });
    expect(res.object).toBe('chat.completion');
    expect(res.id).toStartWith('chatcmpl-');
    expect(res.model).toBe('gpt-4o-mini');
    expect(res.choices).toHaveLength(1);
    expect(res.choices[0]!.message).toEqual({ role: 'assistant', content: 'You said: hello there', refusal: null, annotations: [] });
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });
    expect(res._request_id).toStartWith('req_');

    const rec = mock.requests[0]!;
    expect(rec.method).toBe('POST');
    expect(rec.path).toBe('/v1/chat/completions');
    expect(rec.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(rec.headers['content-type']).toContain('application/json');
    expect(JSON.parse(rec.body).messages[1].content).toBe('hello there');
  });

  test('chat: content parts, n, max_tokens and stop', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o',
      n: 2,
      max_completion_tokens: 3,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'one two three four' }] }],
    });
    expect(res.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(res.choices[0]!.message.content).toBe('You said: one');
    expect(res.choices[0]!.finish_reason).toBe('length');
    expect(res.usage!.completion_tokens).toBe(6);

    const stopped = await client.chat.completions.create({ model: 'gpt-4o', stop: ['three'], messages: [{ role: 'user', content: 'one two three' }] });
    expect(stopped.choices[0]!.message.content).toBe('You said: one two ');
  });

  test('chat: a forced tool call', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'weather in Paris' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
      tool_choice: 'required',
    });
    const choice = res.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    const call = choice.message.tool_calls![0]!;
    expect(call.type).toBe('function');
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ text: 'weather in Paris' });
  });

  test('chat stream through the SDK iterator, with include_usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream me please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('You said: stream me please');
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0]!.id)).toBe(true);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 });
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  test('chat stream helper accumulates a tool call', async () => {
    const runner = client.chat.completions.stream({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'call it' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
    });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls![0]!;
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('lookup');
    expect(JSON.parse(call.function.arguments)).toEqual({ text: 'call it' });
  });

  test('text completions, plain and streamed', async () => {
    const res = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test' });
    expect(res.object).toBe('text_completion');
    expect(res.id).toStartWith('cmpl-');
    expect(res.choices[0]).toEqual({ text: 'You said: Say this is a test', index: 0, logprobs: null, finish_reason: 'stop' });
    expect(res.usage).toEqual({ prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 });

    const stream = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'a b', stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: unknown;
    for await (const c of stream) {
      text += c.choices[0]?.text ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('You said: a b');
    expect(usage).toEqual({ prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 });
  });

  test('embeddings: floats, base64 (the SDK default) and dimensions agree', async () => {
    const floats = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta gamma'], encoding_format: 'float' });
    expect(floats.object).toBe('list');
    expect(floats.model).toBe('text-embedding-3-small');
    expect(floats.data.map((d) => d.index)).toEqual([0, 1]);
    expect(floats.data[0]!.object).toBe('embedding');
    expect(floats.data[0]!.embedding).toHaveLength(1536);
    expect(floats.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    const norm = Math.sqrt(floats.data[0]!.embedding.reduce((s, x) => s + x * x, 0));
    expect(norm).toBeCloseTo(1, 4);

    // Without encoding_format the SDK asks for base64 and decodes it.
    const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta gamma'] });
    expect(JSON.parse(mock.requests[1]!.body).encoding_format).toBe('base64');
    expect(decoded.data[1]!.embedding.length).toBe(1536);
    expect(Array.from(decoded.data[1]!.embedding)).toEqual(floats.data[1]!.embedding.map((x) => Math.fround(x)));

    const raw = await client.embeddings.create({ model: 'text-embedding-3-large', input: 'x', encoding_format: 'base64', dimensions: 8 });
    expect(typeof raw.data[0]!.embedding).toBe('string');
    expect(Buffer.from(raw.data[0]!.embedding as unknown as string, 'base64').byteLength).toBe(32);
  });

  test('moderations flag keywords', async () => {
    const res = await client.moderations.create({ model: 'omni-moderation-latest', input: ['I will kill the process', 'have a nice day'] });
    expect(res.id).toStartWith('modr-');
    expect(res.model).toBe('omni-moderation-latest');
    expect(res.results).toHaveLength(2);
    expect(res.results[0]!.flagged).toBe(true);
    expect(res.results[0]!.categories.violence).toBe(true);
    expect(res.results[0]!.category_scores.violence).toBeGreaterThan(0.5);
    expect(res.results[0]!.category_applied_input_types!.violence).toEqual(['text']);
    expect(res.results[1]!.flagged).toBe(false);
    expect(Object.keys(res.results[1]!.categories).sort()).toEqual([...fx.MODERATION_CATEGORIES].sort());
  });

  test('models list and retrieve', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toContain('gpt-4o-mini');
    expect(ids).toContain('text-embedding-3-small');
    const m = await client.models.retrieve('gpt-4o-mini');
    expect(m).toMatchObject({ id: 'gpt-4o-mini', object: 'model', owned_by: 'system' });
    expect(typeof m.created).toBe('number');
    const e = await caught(client.models.retrieve('no-such-model'));
    expect(e).toBeInstanceOf(APIError);
    expect((e as APIError).status).toBe(404);
  });

  test('files: upload (multipart), retrieve, content, list, delete', async () => {
    const content = '{"custom_id":"1"}\n';
    const f = await client.files.create({ file: await toFile(Buffer.from(content), 'batch.jsonl'), purpose: 'batch' });
    expect(f).toMatchObject({ object: 'file', bytes: content.length, filename: 'batch.jsonl', purpose: 'batch', status: 'processed' });
    expect(f.id).toStartWith('file-');
    expect(mock.requests[0]!.headers['content-type']).toStartWith('multipart/form-data');

    expect((await client.files.retrieve(f.id)).filename).toBe('batch.jsonl');
    expect(await (await client.files.content(f.id)).text()).toBe(content);
    const listed: string[] = [];
    for await (const x of client.files.list()) listed.push(x.id);
    expect(listed).toEqual([f.id]);
    expect(await client.files.delete(f.id)).toEqual({ id: f.id, object: 'file', deleted: true });
    expect(((await caught(client.files.retrieve(f.id))) as APIError).status).toBe(404);
  });
});

describe('openai mock: errors', () => {
  test('a wrong key is a 401 invalid_api_key', async () => {
    const other = new OpenAI({ baseURL: mock.url, apiKey: 'sk-wrong-key-000000', maxRetries: 0 });
    const e = await caught(other.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }));
    expect(e).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((e as APIError).status).toBe(401);
    expect((e as APIError).code).toBe('invalid_api_key');
    expect((e as APIError).type).toBe('invalid_request_error');
    expect((e as APIError).message).toContain('Incorrect API key provided: sk-');
    expect((e as APIError).message).not.toContain('sk-wrong-key-000000');
  });

  test('no key is a 401', async () => {
    const res = await fetch(`${mock.url}/models`);
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: { code: unknown; message: string } };
    expect(body.error.code).toBeNull();
    expect(body.error.message).toStartWith("You didn't provide an API key.");
  });

  test('an unknown model is a 404 model_not_found', async () => {
    const e = (await caught(client.chat.completions.create({ model: 'gpt-9', messages: [{ role: 'user', content: 'x' }] }))) as APIError;
    expect(e).toBeInstanceOf(OpenAI.NotFoundError);
    expect(e.status).toBe(404);
    expect(e.code).toBe('model_not_found');
  });

  test('invalid requests are 400 invalid_request_error with param', async () => {
    const e = (await caught(client.chat.completions.create({ model: 'gpt-4o', temperature: 3, messages: [{ role: 'user', content: 'x' }] }))) as APIError;
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.status).toBe(400);
    expect(e.type).toBe('invalid_request_error');
    expect(e.param).toBe('temperature');

    const unknown = (await caught(
      client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], not_a_param: 1 } as never),
    )) as APIError;
    expect(unknown.status).toBe(400);
    expect(unknown.message).toContain('Unrecognized request argument supplied: not_a_param');

    const missing = (await caught(client.chat.completions.create({ model: 'gpt-4o' } as never))) as APIError;
    expect(missing.param).toBe('messages');
    expect(missing.code).toBe('missing_required_parameter');
  });

  test('error bodies on the wire: exact shape', async () => {
    const res = await fetch(`${mock.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-request-id')).toStartWith('req_');
    const text = await res.text();
    const body = JSON.parse(text);
    expect(Object.keys(body)).toEqual(['error']);
    expect(Object.keys(body.error)).toEqual(['message', 'type', 'param', 'code']);
    expect(body.error.type).toBe('invalid_request_error');
    expect(text).toStartWith('{\n    "error": {\n        "message": "We could not parse the JSON body');

    const nowhere = await fetch(`${mock.url}/nowhere`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(nowhere.status).toBe(404);
    expect(((await nowhere.json()) as { error: { message: string } }).error.message).toBe('Invalid URL (GET /v1/nowhere)');
  });
});

describe('openai mock: wire format of streams', () => {
  test('SSE frames are `data: {json}\\n\\n` and end with `data: [DONE]\\n\\n`', async () => {
    const res = await fetch(`${mock.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const text = await res.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const events = text.split('\n\n').filter(Boolean);
    for (const e of events) expect(e).toMatch(/^data: /);
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice('data: '.length)));
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe('You said: hi');
    expect(chunks.at(-1).choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
    expect('usage' in chunks[0]).toBe(false); // only with stream_options.include_usage
  });
});

describe('openai mock: scripted behaviors', () => {
  test('fixed status and body, once, then the normal answer', async () => {
    mock.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '0' } });
    const e = (await caught(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }))) as APIError;
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e.status).toBe(429);
    expect(e.code).toBe('rate_limit_exceeded');
    expect(e.headers?.get('retry-after')).toBe('0');
    const ok = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    expect(ok.choices[0]!.message.content).toBe('You said: x');
    expect(mock.requests).toHaveLength(2);
  });

  test('respond with an arbitrary body', async () => {
    mock.setBehavior((req) => (req.path.endsWith('/models') ? { kind: 'respond', status: 200, body: { object: 'list', data: [] } } : undefined));
    const page = await client.models.list();
    expect(page.data).toEqual([]);
  });

  test('a delay before the headers', async () => {
    mock.enqueue({ kind: 'default', delayMs: 300 });
    const t0 = Date.now();
    await client.models.list();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
  });

  test('a slowed stream', async () => {
    mock.enqueue({ kind: 'default', chunkDelayMs: 40 });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a b' }], stream: true });
    const times: number[] = [];
    for await (const _ of stream) times.push(Date.now());
    expect(times.length).toBe(6); // role, "You", " said:", " a", " b", finish
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(150);
  });

  test('a stream cut mid-way (no [DONE]) fails the SDK iterator', async () => {
    mock.enqueue({ kind: 'default', stopAfterChunks: 2, end: 'cut' });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three' }], stream: true });
    const got: string[] = [];
    const e = await caught(
      (async () => {
        for await (const c of stream) got.push(c.choices[0]?.delta.content ?? '');
      })(),
    );
    expect(e).toBeInstanceOf(Error);
    expect(got).toEqual(['', 'You']);
  });

  test('a scripted stream with per-frame delays and an error frame', async () => {
    mock.enqueue({ kind: 'stream', frames: [...frames.chat('partial answer').slice(0, 2), { ...frames.error('upstream broke'), delayMs: 20 }], end: 'close' });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: true });
    const e = (await caught(
      (async () => {
        for await (const _ of stream) {
          /* drain */
        }
      })(),
    )) as APIError;
    expect(e).toBeInstanceOf(APIError);
    expect(e.message).toContain('upstream broke');
  });

  test('never answering: the client times out', async () => {
    mock.enqueue({ kind: 'hang' });
    const impatient = new OpenAI({ baseURL: mock.url, apiKey: KEY, maxRetries: 0, timeout: 300 });
    const e = await caught(impatient.models.list());
    expect(e).toBeInstanceOf(APIConnectionTimeoutError);
    for (let i = 0; i < 100 && mock.requests[0]!.abortedAt === undefined; i++) await Bun.sleep(20);
    expect(mock.requests[0]!.abortedAt).toBeNumber();
  });

  test('a reset connection is a connection error', async () => {
    mock.enqueue({ kind: 'reset' });
    const e = await caught(client.models.list());
    expect(e).toBeInstanceOf(APIConnectionError);
    expect(e).not.toBeInstanceOf(APIConnectionTimeoutError);
  });

  test('a body cut after some bytes', async () => {
    mock.enqueue({ kind: 'respond', status: 200, body: { object: 'list', data: [] }, cutAfterBytes: 5 });
    const e = await caught(client.models.list());
    expect(e).toBeInstanceOf(Error);
  });

  test('waitForRequests and behaviors that look at the request', async () => {
    mock.setBehavior((req) => ((req.json as { model?: string } | undefined)?.model === 'gpt-4o' ? { kind: 'error', status: 503 } : undefined));
    const a = client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).catch((e: APIError) => e.status);
    const b = client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'y' }] }).then((r) => r.choices[0]!.message.content);
    await mock.waitForRequests(2);
    expect(await a).toBe(503);
    expect(await b).toBe('You said: y');
  });
});

describe('openai mock: options', () => {
  test('basePath and apiKey: null', async () => {
    const m = await startOpenAIMock({ basePath: '/openai/v1', apiKey: null });
    try {
      expect(m.url).toEndWith('/openai/v1');
      const c = new OpenAI({ baseURL: m.url, apiKey: 'anything', maxRetries: 0 });
      expect((await c.models.list()).data.length).toBeGreaterThan(0);
      const res = await fetch(`http://127.0.0.1:${m.port}/v1/models`);
      expect(res.status).toBe(404);
    } finally {
      await m.stop();
    }
  });
});
