/**
 * The google provider through an in-process gateway against the local Gemini server: the wire format sent, streams,
 * faults (malformed answers → 502, broken streams → an error frame and no [DONE]), errors, the model list.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../../helpers/in-process.ts';
import { FAULT_MODELS, SKIP_SIGNATURE, THOUGHT_TEXT } from './gemini-wire.ts';
import { GEMINI_KEY, type GeminiTestServer, startGeminiServer } from './server.ts';

let gateway: Gateway;
let server: GeminiTestServer;
beforeAll(async () => {
  gateway = await startInProcessGateway();
  server = startGeminiServer();
});
afterAll(async () => {
  server?.stop();
  await gateway?.close();
});

type Obj = Record<string, any>;

function call(path: string, body?: unknown, headers: Record<string, string> = {}, method = 'POST'): Promise<Response> {
  return gateway.handle(
    new Request(`http://gateway.test${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': TEST_ADMIN_KEY,
        'x-gateway-provider': 'google',
        'x-gateway-custom-host': server.baseUrl,
        authorization: `Bearer ${GEMINI_KEY}`,
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
}

const chat = (body: Obj, headers?: Record<string, string>) => call('/v1/chat/completions', { model: 'gemini-2.5-flash', ...body }, headers);

/** The data payloads of an SSE body. */
async function events(res: Response): Promise<string[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .map((e) => e.trim())
    .filter(Boolean)
    .map((e) => e.replace(/^data: /, ''));
}

describe('wire format', () => {
  test('generateContent on the model path, the key in x-goog-api-key only', async () => {
    const before = server.requests.length;
    const res = await chat({ messages: [{ role: 'system', content: 'Sys' }, { role: 'user', content: 'Hello there' }], temperature: 0.2, max_tokens: 50 });
    expect(res.status).toBe(200);
    const sent = server.requests[before] as (typeof server.requests)[number];
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent.search).toBe('');
    expect(sent.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(JSON.parse(sent.body)).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hello there' }] }],
      systemInstruction: { parts: [{ text: 'Sys' }] },
      generationConfig: { maxOutputTokens: 50, temperature: 0.2 },
    });
    const json = (await res.json()) as Obj;
    expect(json.choices[0].message.content).toBe('System: Sys | You said: Hello there');
    expect(res.headers.get('x-gateway-provider')).toBe('google');
  });

  test('a stream asks for alt=sse; without include_usage no usage chunk, and [DONE] at the end', async () => {
    const before = server.requests.length;
    const res = await chat({ messages: [{ role: 'user', content: 'Stream please' }], stream: true });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const data = await events(res);
    expect(server.requests[before]?.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(server.requests[before]?.search).toBe('?alt=sse');
    expect(data[data.length - 1]).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Obj);
    expect(chunks.every((c) => c.usage === undefined && c.choices.length === 1)).toBe(true);
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe('You said: Stream please');
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  test('a JSON schema with keywords Gemini refuses reaches it cleaned, and the answer is JSON', async () => {
    const res = await chat({
      messages: [{ role: 'user', content: 'Give JSON' }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'a', strict: true, schema: { type: 'object', additionalProperties: false, properties: { answer: { type: ['string', 'null'] } }, required: ['answer'] } },
      },
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(((await res.json()) as Obj).choices[0].message.content)).toEqual({ answer: 'Give JSON' });
  });

  test('a Gemini 3 history whose thought signature was lost gets the placeholder and is accepted', async () => {
    const res = await chat({
      model: 'gemini-3-pro-preview',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      messages: [
        { role: 'user', content: 'What is the weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_x', content: '18C' },
      ],
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Obj).choices[0].message.content).toBe('Tool said: 18C');
    const sent = JSON.parse(server.requests[server.requests.length - 1]?.body ?? '{}') as Obj;
    expect(sent.contents[1].parts[0].thoughtSignature).toBe(SKIP_SIGNATURE);
  });

  test('a tool result for an unknown call is a 400 that never reaches the provider', async () => {
    const before = server.requests.length;
    const res = await chat({ messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'ghost', content: 'r' }] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Obj).error.message).toContain('ghost');
    expect(server.requests.length).toBe(before);
  });

  test('thoughts come back as reasoning_content when strict wire compliance is off', async () => {
    const body = { messages: [{ role: 'user', content: 'Think' }], thinking: { type: 'enabled', budget_tokens: 1024 } };
    const strict = (await (await chat(body)).json()) as Obj;
    expect(strict.choices[0].message.reasoning_content).toBeUndefined();
    const open = (await (await chat(body, { 'x-gateway-strict-wire-compliance': 'false' })).json()) as Obj;
    expect(open.choices[0].message.reasoning_content).toBe(THOUGHT_TEXT);
    expect(open.choices[0].message.content).toBe('You said: Think');
  });
});

describe('faults', () => {
  test('a 200 that is not a generateContent answer is a 502', async () => {
    for (const model of [FAULT_MODELS.malformed, FAULT_MODELS.notJson]) {
      const res = await chat({ model, messages: [{ role: 'user', content: 'x' }] });
      expect(res.status).toBe(502);
      const body = (await res.json()) as Obj;
      expect(body.error.code).toBe('upstream_invalid_response');
      expect(body.provider).toBe('google');
    }
  });

  test('broken streams end with an error frame and no [DONE]', async () => {
    for (const [model, code] of [
      [FAULT_MODELS.malformedStream, 'upstream_invalid_response'],
      [FAULT_MODELS.cutStream, 'stream_interrupted'],
    ] as const) {
      const data = await events(await chat({ model, messages: [{ role: 'user', content: 'x' }], stream: true }));
      expect(data).not.toContain('[DONE]');
      const last = JSON.parse(data[data.length - 1] as string) as Obj;
      expect(last.error.code).toBe(code);
      expect((JSON.parse(data[0] as string) as Obj).choices[0].delta.content).toBe('Partial ');
    }
  });

  test('an error event inside a stream ends it with the provider’s message', async () => {
    const data = await events(await chat({ model: FAULT_MODELS.errorInStream, messages: [{ role: 'user', content: 'x' }], stream: true }));
    expect(data).not.toContain('[DONE]');
    const last = JSON.parse(data[data.length - 1] as string) as Obj;
    expect(last.error.message).toBe('The model is overloaded.');
    expect(last.provider).toBe('google');
  });

  test('a blocked prompt finishes with content_filter, streamed or not; MAX_TOKENS with length', async () => {
    const whole = (await (await chat({ model: FAULT_MODELS.blocked, messages: [{ role: 'user', content: 'x' }] })).json()) as Obj;
    expect(whole.choices[0].finish_reason).toBe('content_filter');
    const data = await events(await chat({ model: FAULT_MODELS.blocked, messages: [{ role: 'user', content: 'x' }], stream: true }));
    expect(data[data.length - 1]).toBe('[DONE]');
    expect((JSON.parse(data[0] as string) as Obj).choices[0].finish_reason).toBe('content_filter');
    const cut = (await (await chat({ model: FAULT_MODELS.maxTokens, messages: [{ role: 'user', content: 'x' }] })).json()) as Obj;
    expect(cut.choices[0].finish_reason).toBe('length');
  });

  test('a wrong key: Google’s error relayed with its status and message', async () => {
    const res = await chat({ messages: [{ role: 'user', content: 'x' }] }, { authorization: 'Bearer wrong' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Obj;
    expect(body.error.message).toBe('API key not valid. Please pass a valid API key.');
    expect(body.error.code).toBe('INVALID_ARGUMENT');
    expect(body.provider).toBe('google');
  });

  test('a model name that would leave the model path is refused before any call', async () => {
    const before = server.requests.length;
    const res = await chat({ model: '../files/x', messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(400);
    expect(server.requests.length).toBe(before);
  });
});

test('GET /v1/models lists Gemini models in OpenAI’s shape', async () => {
  const res = await call('/v1/models', undefined, {}, 'GET');
  expect(res.status).toBe(200);
  const body = (await res.json()) as Obj;
  expect(body.object).toBe('list');
  expect(body.data.map((m: Obj) => m.id)).toEqual(['gemini-2.5-flash', 'text-embedding-004']);
  expect(server.requests[server.requests.length - 1]?.search).toBe('?pageSize=1000');
});

test('embeddings with dimensions; token arrays are refused', async () => {
  const res = await call('/v1/embeddings', { model: 'text-embedding-004', input: 'hello', dimensions: 8, encoding_format: 'float' });
  expect(res.status).toBe(200);
  const sent = JSON.parse(server.requests[server.requests.length - 1]?.body ?? '{}') as Obj;
  expect(sent.requests[0].outputDimensionality).toBe(8);
  const bad = await call('/v1/embeddings', { model: 'text-embedding-004', input: [1, 2, 3] });
  expect(bad.status).toBe(400);
});
