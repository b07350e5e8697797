/**
 * The mistral-ai provider through an in-process gateway against the local Mistral server, which refuses what Mistral
 * refuses: each documented difference is shown refused when sent as OpenAI spells it, and accepted through the
 * gateway. Also: unchanged bodies go out byte for byte, Mistral's errors keep their message, malformed answers → 502.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../../helpers/in-process.ts';
import { CHUNKED_THINKING, type MistralTestServer, startMistralServer } from './server.ts';

let gateway: Gateway;
let server: MistralTestServer;

beforeAll(async () => {
  gateway = await startInProcessGateway();
  server = startMistralServer({
    respond: (body) => {
      if (body.model === 'malformed-json') return new Response('<html>oops</html>', { headers: { 'content-type': 'application/json' } });
      if (body.model === 'malformed-array') return Response.json([1, 2, 3]);
      if (body.model === 'malformed-stream')
        return new Response('data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\ndata: {broken\n\n', {
          headers: { 'content-type': 'text/event-stream' },
        });
      return undefined;
    },
  });
});
afterAll(async () => {
  server?.stop();
  await gateway?.close();
});

function viaGateway(path: string, body?: unknown, raw?: string): Promise<Response> {
  return gateway.handle(
    new Request(`http://gateway.test${path}`, {
      method: body === undefined && raw === undefined ? 'GET' : 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': TEST_ADMIN_KEY,
        'x-gateway-provider': 'mistral-ai',
        'x-gateway-custom-host': server.baseUrl,
        authorization: 'Bearer mistral-test-key',
      },
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    }),
  );
}

/** The same body straight to the server, as an OpenAI client would send it without the gateway. */
function direct(path: string, body: unknown): Promise<Response> {
  return fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer mistral-test-key' },
    body: JSON.stringify(body),
  });
}

const sent = () => JSON.parse((server.requests.at(-1) as { body: string }).body) as Record<string, unknown>;
const user = (content = 'Hi') => [{ role: 'user', content }];
const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

/** Each difference: an OpenAI body Mistral refuses, what the gateway must send instead, and what it answers. */
const DIFFERENCES: { name: string; body: Record<string, unknown>; check(wire: Record<string, unknown>): void }[] = [
  {
    name: 'seed → random_seed',
    body: { model: 'mistral-large-latest', messages: user(), seed: 42 },
    check: (wire) => {
      expect(wire.random_seed).toBe(42);
      expect('seed' in wire).toBe(false);
    },
  },
  {
    name: 'max_completion_tokens → max_tokens',
    body: { model: 'mistral-large-latest', messages: user(), max_completion_tokens: 100 },
    check: (wire) => expect(wire.max_tokens).toBe(100),
  },
  {
    name: 'tool_choice "required" → "any"',
    body: { model: 'mistral-large-latest', messages: user('weather?'), tools: [weather], tool_choice: 'required' },
    check: (wire) => expect(wire.tool_choice).toBe('any'),
  },
  {
    name: 'developer role → system',
    body: { model: 'mistral-large-latest', messages: [{ role: 'developer', content: 'Be kind' }, ...user()] },
    check: (wire) => expect((wire.messages as { role: string }[])[0]?.role).toBe('system'),
  },
  {
    name: "a user message's name is left out",
    body: { model: 'mistral-large-latest', messages: [{ role: 'user', content: 'Hi', name: 'alice' }] },
    check: (wire) => expect(wire.messages).toEqual([{ role: 'user', content: 'Hi' }]),
  },
  {
    name: 'foreign tool call ids → 9 letters or digits, the same in the call and its result',
    body: {
      model: 'mistral-large-latest',
      tools: [weather],
      messages: [
        ...user('weather?'),
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_9fJ2kLm0QwErTy', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_9fJ2kLm0QwErTy', content: '18C' },
      ],
    },
    check: (wire) => {
      const [, call, result] = wire.messages as { tool_calls?: { id: string }[]; tool_call_id?: string }[];
      expect(call?.tool_calls?.[0]?.id).toMatch(/^[a-zA-Z0-9]{9}$/);
      expect(result?.tool_call_id).toBe(call?.tool_calls?.[0]?.id as string);
    },
  },
  {
    name: 'stream_options, logprobs, user, logit_bias, store are dropped',
    body: { model: 'mistral-large-latest', messages: user(), logprobs: true, top_logprobs: 2, user: 'u', logit_bias: { '50256': -100 }, store: false },
    check: (wire) => expect(Object.keys(wire).sort()).toEqual(['messages', 'model']),
  },
];

describe('mistral-ai: every documented difference, refused as OpenAI spells it, accepted through the gateway', () => {
  for (const d of DIFFERENCES) {
    test(d.name, async () => {
      const refused = await direct('/chat/completions', d.body);
      expect(refused.status).toBeGreaterThanOrEqual(400);
      const res = await viaGateway('/v1/chat/completions', d.body);
      expect(res.status).toBe(200);
      d.check(sent());
    });
  }

  test('a stream with stream_options.include_usage: the option is dropped, and usage still arrives (in the last chunk)', async () => {
    const body = { model: 'mistral-large-latest', messages: user('Stream it'), stream: true, stream_options: { include_usage: true } };
    expect((await direct('/chat/completions', body)).status).toBe(422);
    const res = await viaGateway('/v1/chat/completions', body);
    expect(res.status).toBe(200);
    expect('stream_options' in sent()).toBe(false);
    const text = await res.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const chunks = text.split('\n\n').filter((f) => f && f !== 'data: [DONE]').map((f) => JSON.parse(f.slice(6)));
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('You said: Stream it');
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 });
  });

  test('embeddings: dimensions → output_dimension, user dropped', async () => {
    const body = { model: 'mistral-embed', input: ['abc'], dimensions: 4, user: 'u', encoding_format: 'float' };
    expect((await direct('/embeddings', body)).status).toBe(422);
    const res = await viaGateway('/v1/embeddings', body);
    expect(res.status).toBe(200);
    expect(sent()).toEqual({ model: 'mistral-embed', input: ['abc'], output_dimension: 4, encoding_format: 'float' });
    const json = (await res.json()) as { data: { embedding: number[] }[] };
    expect(json.data[0]?.embedding).toHaveLength(4);
  });
});

describe('mistral-ai: everything else passes as OpenAI shape', () => {
  test('a body with nothing to translate goes out byte for byte', async () => {
    const raw = '{"model":"mistral-large-latest",  "messages":[{"role":"user","content":"Hi"}], "temperature":0.1, "safe_prompt":true}';
    const res = await viaGateway('/v1/chat/completions', undefined, raw);
    expect(res.status).toBe(200);
    expect((server.requests.at(-1) as { body: string }).body).toBe(raw);
  });

  test('the model list passes through', async () => {
    const res = await viaGateway('/v1/models');
    expect(res.status).toBe(200);
    const json = (await res.json()) as { data: { id: string }[] };
    expect(json.data.map((m) => m.id)).toEqual(['mistral-large-latest', 'mistral-embed']);
  });

  test('finish_reason "model_length" → "length"; content given as chunks → a string', async () => {
    const a = (await (await viaGateway('/v1/chat/completions', { model: 'length-model', messages: user() })).json()) as { choices: { finish_reason: string }[] };
    expect(a.choices[0]?.finish_reason).toBe('length');
    const b = (await (await viaGateway('/v1/chat/completions', { model: 'chunked-model', messages: user() })).json()) as { choices: { message: { content: string } }[] };
    expect(b.choices[0]?.message.content).toBe('You said: Hi');
    expect(JSON.stringify(b)).not.toContain(CHUNKED_THINKING);
  });

  test("a Mistral validation error keeps its status and a readable message, with provider set", async () => {
    const res = await viaGateway('/v1/chat/completions', { model: 'mistral-large-latest', messages: user(), functions: [{ name: 'f' }] });
    expect(res.status).toBe(422);
    const json = (await res.json()) as { error: { message: string; type: string }; provider: string };
    expect(json.error.message).toBe('body.functions: Extra inputs are not permitted');
    expect(json.error.type).toBe('invalid_request_error');
    expect(json.provider).toBe('mistral-ai');
  });
});

describe('mistral-ai: malformed answers', () => {
  for (const model of ['malformed-json', 'malformed-array']) {
    test(`${model} → 502`, async () => {
      const res = await viaGateway('/v1/chat/completions', { model, messages: user() });
      expect(res.status).toBe(502);
      expect(((await res.json()) as { provider: string }).provider).toBe('mistral-ai');
    });
  }

  test('a malformed stream chunk ends the stream with an error frame and no [DONE]', async () => {
    const res = await viaGateway('/v1/chat/completions', { model: 'malformed-stream', messages: user(), stream: true });
    const text = await res.text();
    expect(text).toContain('"content":"Hel"');
    expect(text).not.toContain('[DONE]');
    expect(text).toContain('"error"');
  });
});
