/**
 * The cohere provider through an in-process gateway against the local Cohere server: the native wire format that
 * leaves the gateway, the model list, error relaying, and malformed answers (→ 502, or an error frame in a stream).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../../helpers/in-process.ts';
import { cohereError, type CohereTestServer, frame, sse, startCohereServer } from './server.ts';

let gateway: Gateway;
let server: CohereTestServer;

/** The start of a stream, written in two parts (so the client sees "Hel" before whatever follows). */
const BEGIN = [
  frame({ id: 's', type: 'message-start', delta: { message: { role: 'assistant' } } }),
  frame({ type: 'content-delta', index: 0, delta: { message: { content: { text: 'Hel' } } } }),
];

/** Scripted answers by model name; every other model gets the protocol's answer. */
const SCRIPTS: Record<string, () => Response> = {
  'malformed-json': () => new Response('this is not json', { headers: { 'content-type': 'application/json' } }),
  'malformed-shape': () => Response.json({ id: 'x', text: 'a v1-style answer' }),
  'malformed-finish': () => Response.json({ id: 'x', message: { role: 'assistant', content: [{ type: 'text', text: 'Hi' }] } }),
  'error-finish': () => Response.json({ id: 'x', message: { role: 'assistant', content: [] }, finish_reason: 'ERROR' }),
  'rate-limited': () => cohereError(429, "You are using a Trial key, which is limited to 10 API calls / minute."),
  'stream-broken-event': () => sse([...BEGIN, 'event: content-delta\ndata: {"type":"content-delta",\n\n']),
  'stream-error-end': () => sse([...BEGIN, frame({ type: 'message-end', delta: { finish_reason: 'ERROR', error: 'internal failure' } })]),
  'stream-cut': () => sse(BEGIN),
};

beforeAll(async () => {
  gateway = await startInProcessGateway();
  server = startCohereServer({
    respond: (body, req) => {
      const model = typeof body.model === 'string' ? body.model : '';
      if (req.path === '/v2/embed' && model === 'malformed-embed') return Response.json({ id: 'e', embeddings: {} });
      return SCRIPTS[model]?.();
    },
  });
});
afterAll(async () => {
  server?.stop();
  await gateway?.close();
});

function call(path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Response> {
  return gateway.handle(
    new Request(`http://gateway.test${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': TEST_ADMIN_KEY,
        'x-gateway-provider': 'cohere',
        'x-gateway-custom-host': server.baseUrl,
        authorization: 'Bearer co-test-key',
        ...extra,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
}

const lastRequest = () => server.requests.at(-1) as (typeof server.requests)[number];

describe('cohere: the wire format that leaves the gateway', () => {
  test('a full request arrives as Cohere v2 chat JSON, at /v2/chat, with the bearer key', async () => {
    const res = await call('/v1/chat/completions', {
      model: 'command-a-03-2025',
      messages: [
        { role: 'developer', content: 'Be brief' },
        { role: 'user', content: [{ type: 'text', text: 'What is the weather?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_a', content: '18C' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      tool_choice: 'required',
      stop: ['END'],
      max_completion_tokens: 50,
      temperature: 0.3,
      top_p: 1,
      seed: 4,
      response_format: { type: 'json_object' },
      user: 'someone',
    });
    expect(res.status).toBe(200);
    const sent = lastRequest();
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v2/chat');
    expect(sent.headers.authorization).toBe('Bearer co-test-key');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(JSON.parse(sent.body)).toEqual({
      model: 'command-a-03-2025',
      messages: [
        { role: 'system', content: 'Be brief' },
        { role: 'user', content: [{ type: 'text', text: 'What is the weather?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
        { role: 'assistant', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_a', content: [{ type: 'text', text: '18C' }] },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      tool_choice: 'REQUIRED',
      response_format: { type: 'json_object' },
      stop_sequences: ['END'],
      max_tokens: 50,
      temperature: 0.3,
      p: 0.99,
      seed: 4,
    });
    const json = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(json.choices[0]?.message.content).toBe('Tool said: 18C');
  });

  test('a named tool choice is REQUIRED over that tool alone, and the answer is its call', async () => {
    const res = await call('/v1/chat/completions', {
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'weather for both' }],
      tools: [
        { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    const sent = JSON.parse(lastRequest().body);
    expect(sent.tool_choice).toBe('REQUIRED');
    expect(sent.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['get_time']);
    const json = (await res.json()) as { choices: { finish_reason: string; message: { content: string; tool_calls: { function: { name: string } }[] } }[] };
    expect(json.choices[0]?.finish_reason).toBe('tool_calls');
    expect(json.choices[0]?.message.tool_calls.map((c) => c.function.name)).toEqual(['get_time']);
    expect(json.choices[0]?.message.content).toBe('I will look this up.');
  });

  test('embeddings go to /v2/embed with texts, input_type and float embedding types', async () => {
    const res = await call('/v1/embeddings', { model: 'embed-v4.0', input: 'hello', encoding_format: 'float', dimensions: 512 });
    expect(res.status).toBe(200);
    expect(lastRequest().path).toBe('/v2/embed');
    expect(JSON.parse(lastRequest().body)).toEqual({ model: 'embed-v4.0', texts: ['hello'], input_type: 'search_document', embedding_types: ['float'], output_dimension: 512 });
    const json = (await res.json()) as { data: { embedding: number[] }[]; usage: { prompt_tokens: number } };
    expect(json.data[0]?.embedding).toHaveLength(8);
    expect(json.usage.prompt_tokens).toBe(1);
  });

  test('a streamed answer is OpenAI SSE, chunk by chunk, closed by [DONE]', async () => {
    const res = await call('/v1/chat/completions', { model: 'command-a-03-2025', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(JSON.parse(lastRequest().body).stream).toBe(true);
    const text = await res.text();
    const frames = text.split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toBe('data: [DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.replace(/^data: /, '')));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === 'c0he7e-conformance')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('You said: Hi');
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
  });
});

describe('cohere: model list and errors', () => {
  test('GET /v1/models asks Cohere for one large page and answers an OpenAI list', async () => {
    const res = await call('/v1/models');
    expect(res.status).toBe(200);
    expect(lastRequest().path).toBe('/v1/models');
    expect(lastRequest().search).toBe('?page_size=1000');
    const json = (await res.json()) as { object: string; data: { id: string; object: string; owned_by: string }[] };
    expect(json.object).toBe('list');
    expect(json.data.map((m) => m.id)).toEqual(['command-a-03-2025', 'embed-v4.0']);
    expect(json.data.every((m) => m.object === 'model' && m.owned_by === 'cohere')).toBe(true);
  });

  test("a Cohere error keeps its status and Cohere's message, with provider set", async () => {
    const res = await call('/v1/chat/completions', { model: 'rate-limited', messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.status).toBe(429);
    const json = (await res.json()) as { error: { message: string }; provider: string };
    expect(json.error.message).toContain('Trial key');
    expect(json.provider).toBe('cohere');
  });

  test('what Cohere would refuse is refused by the gateway first, with a 400 naming the field', async () => {
    const res = await call('/v1/chat/completions', { model: 'command-a-03-2025', messages: [{ role: 'user', content: 'Hi' }], n: 3 });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string; param: string } }).error.param).toBe('n');
  });
});

describe('cohere: malformed answers', () => {
  for (const model of ['malformed-json', 'malformed-shape', 'malformed-finish', 'error-finish']) {
    test(`${model} → 502 with provider set`, async () => {
      const res = await call('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Hi' }] });
      expect(res.status).toBe(502);
      const json = (await res.json()) as { error: { type: string; message: string }; provider: string };
      expect(json.error.type).toBe('upstream_error');
      expect(json.provider).toBe('cohere');
    });
  }

  test('an embed answer without float embeddings → 502', async () => {
    const res = await call('/v1/embeddings', { model: 'malformed-embed', input: 'x' });
    expect(res.status).toBe(502);
  });

  for (const [model, why] of [['stream-broken-event', 'a malformed event'], ['stream-error-end', 'an ERROR ending'], ['stream-cut', 'no message-end']]) {
    test(`a stream with ${why} ends with an error frame and no [DONE]`, async () => {
      const res = await call('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Hi' }], stream: true });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('"content":"Hel"');
      expect(text).not.toContain('[DONE]');
      const last = text.split('\n\n').filter(Boolean).at(-1) as string;
      const error = JSON.parse(last.replace(/^data: /, '')) as { error: { message: string } };
      expect(typeof error.error.message).toBe('string');
    });
  }
});
