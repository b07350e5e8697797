import { describe, expect, test } from 'bun:test';
import type { JsonObject, ProviderCall, TranslateContext } from '@gateway/sdk';
import { DROPPED_FIELDS, mistralChatRequest, mistralChatResponse, mistralEmbedRequest, mistralError, mistralToolCallId, provider } from './index.ts';

const ctx = (over: Partial<TranslateContext> = {}): TranslateContext => ({
  endpoint: 'chatComplete',
  model: 'mistral-large-latest',
  strictWireCompliance: true,
  now: 1,
  ...over,
});
const chat = (body: JsonObject) => mistralChatRequest(body, {}, ctx());
const base = (extra: JsonObject = {}): JsonObject => ({ model: 'mistral-large-latest', messages: [{ role: 'user', content: 'Hi' }], ...extra });

describe('the mistral-ai adapter', () => {
  test('the shared OpenAI-compatible adapter underneath: base URL, paths, bearer key, no stream translation', async () => {
    expect(provider.id).toBe('mistral-ai');
    expect(provider.baseUrl({})).toBe('https://api.mistral.ai/v1');
    expect(Object.keys(provider.endpoints).sort()).toEqual(['chatComplete', 'embed']);
    expect(provider.endpoints.chatComplete?.path({}, {}, ctx())).toBe('/chat/completions');
    expect(provider.endpoints.embed?.path({}, {}, ctx())).toBe('/embeddings');
    expect(provider.endpoints.chatComplete?.stream).toBeUndefined();
    expect(provider.endpoints.listModels).toBeUndefined();
    const call: ProviderCall = { url: 'u', method: 'POST', headers: {} };
    expect((await provider.authorize(call, { api_key: 'mk' })).headers.authorization).toBe('Bearer mk');
  });
});

describe('chat request: the documented differences', () => {
  test('a body with no difference is the very same object (its bytes go out as the client sent them)', () => {
    const body = base({ temperature: 0.2, top_p: 0.9, max_tokens: 5, stop: ['x'], n: 2, parallel_tool_calls: false, response_format: { type: 'json_object' }, safe_prompt: true, random_seed: 3 });
    expect(chat(body)).toBe(body);
  });

  test('seed → random_seed (a random_seed the client sent wins)', () => {
    const out = chat(base({ seed: 42 }));
    expect(out.random_seed).toBe(42);
    expect('seed' in out).toBe(false);
    expect(chat(base({ seed: 42, random_seed: 7 })).random_seed).toBe(7);
    expect('random_seed' in chat(base({ seed: null }))).toBe(false);
  });

  test('max_completion_tokens → max_tokens', () => {
    const out = chat(base({ max_completion_tokens: 64 }));
    expect(out.max_tokens).toBe(64);
    expect('max_completion_tokens' in out).toBe(false);
    expect(chat(base({ max_completion_tokens: 64, max_tokens: 10 })).max_tokens).toBe(10);
  });

  test('tool_choice "required" → "any"; auto, none and a named function stay', () => {
    expect(chat(base({ tool_choice: 'required' })).tool_choice).toBe('any');
    for (const choice of ['auto', 'none', { type: 'function', function: { name: 'f' } }]) {
      const body = base({ tool_choice: choice });
      expect(chat(body)).toBe(body);
    }
  });

  test('developer messages → system messages', () => {
    const out = chat(base({ messages: [{ role: 'developer', content: 'Be kind' }, { role: 'user', content: 'Hi' }] }));
    expect(out.messages).toEqual([{ role: 'system', content: 'Be kind' }, { role: 'user', content: 'Hi' }]);
  });

  test('message fields outside Mistral message schemas are left out; a tool message keeps its name', () => {
    const out = chat(base({
      messages: [
        { role: 'system', content: 'S', name: 'sys' },
        { role: 'user', content: 'U', name: 'alice' },
        { role: 'assistant', content: 'A', name: 'bot', refusal: null, audio: null, prefix: false },
        { role: 'tool', content: 'T', tool_call_id: 'abcdefghi', name: 'get_weather' },
      ],
    }));
    expect(out.messages).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'U' },
      { role: 'assistant', content: 'A', prefix: false },
      { role: 'tool', content: 'T', tool_call_id: 'abcdefghi', name: 'get_weather' },
    ]);
  });

  test('tool call ids that are not 9 letters or digits are replaced, the same way in the call and in its result', () => {
    const out = chat(base({
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_Xk2lq8Zp0aB', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
            { id: 'Ab3dE6gH9', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_Xk2lq8Zp0aB', content: '18C' },
        { role: 'tool', tool_call_id: 'Ab3dE6gH9', content: '10:00' },
      ],
    }));
    const [, assistant, first, second] = out.messages as JsonObject[];
    const [a, b] = (assistant as JsonObject).tool_calls as JsonObject[];
    expect(a?.id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(a?.id).not.toBe('call_Xk2lq8Zp0aB');
    expect(first?.tool_call_id).toBe(a?.id as string);
    expect(b?.id).toBe('Ab3dE6gH9');
    expect(second?.tool_call_id).toBe('Ab3dE6gH9');
  });

  test('mistralToolCallId: stable, 9 letters or digits, distinct for distinct ids', () => {
    expect(mistralToolCallId('toolu_01A09q90qw90lq917835lq9')).toBe(mistralToolCallId('toolu_01A09q90qw90lq917835lq9'));
    const ids = new Set(Array.from({ length: 500 }, (_, i) => mistralToolCallId(`call_${i}`)));
    expect(ids.size).toBe(500);
    for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(mistralToolCallId('abcDEF123')).toBe('abcDEF123');
  });

  test('OpenAI-only fields with no Mistral counterpart are dropped', () => {
    const extra: JsonObject = {};
    for (const field of DROPPED_FIELDS) extra[field] = field === 'stream_options' ? { include_usage: true } : true;
    const out = chat(base({ stream: true, ...extra }));
    expect(Object.keys(out).sort()).toEqual(['messages', 'model', 'stream']);
  });

  test('fields not known to differ pass on (Mistral answers for them itself)', () => {
    const body = base({ prompt_mode: 'reasoning', prediction: { type: 'content', content: 'x' }, some_new_field: 1 });
    expect(chat(body)).toBe(body);
  });

  test('pure: the OpenAI body is never changed', () => {
    const body = base({
      seed: 1,
      max_completion_tokens: 2,
      tool_choice: 'required',
      stream_options: { include_usage: true },
      messages: [
        { role: 'developer', content: 'x', name: 'n' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'r' },
      ],
    });
    const before = structuredClone(body);
    const out = chat(body);
    expect(body).toEqual(before);
    expect(chat(body)).toEqual(out);
  });
});

describe('chat answer', () => {
  const answer = (finish: string, content: unknown = 'Hi'): JsonObject => ({
    id: 'x',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: content as string, tool_calls: null }, finish_reason: finish }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });

  test('an OpenAI-shaped answer is returned as it is', () => {
    const json = answer('stop');
    expect(mistralChatResponse(json, ctx())).toBe(json);
  });

  test('finish_reason "model_length" → "length"', () => {
    const out = mistralChatResponse(answer('model_length'), ctx());
    expect(((out.choices as JsonObject[])[0] as JsonObject).finish_reason).toBe('length');
  });

  test('content as a list of chunks → its text; thinking as reasoning_content only when strict wire compliance is off', () => {
    const chunks = [{ type: 'thinking', thinking: [{ type: 'text', text: 'Hmm.' }] }, { type: 'text', text: 'Yes' }];
    const strict = ((mistralChatResponse(answer('stop', chunks), ctx()).choices as JsonObject[])[0] as JsonObject).message as JsonObject;
    expect(strict.content).toBe('Yes');
    expect(strict.reasoning_content).toBeUndefined();
    const loose = ((mistralChatResponse(answer('stop', chunks), ctx({ strictWireCompliance: false })).choices as JsonObject[])[0] as JsonObject).message as JsonObject;
    expect(loose).toMatchObject({ content: 'Yes', reasoning_content: 'Hmm.' });
  });

  test('an answer that is not a JSON object throws (the core makes it a 502)', () => {
    expect(() => mistralChatResponse([1], ctx())).toThrow();
    expect(() => mistralChatResponse('x', ctx())).toThrow();
  });
});

describe('embeddings request', () => {
  test('dimensions → output_dimension; user left out; otherwise the same object', () => {
    expect(mistralEmbedRequest({ model: 'mistral-embed', input: 'a', dimensions: 256, user: 'u' }, {}, ctx({ endpoint: 'embed' })))
      .toEqual({ model: 'mistral-embed', input: 'a', output_dimension: 256 });
    const body: JsonObject = { model: 'mistral-embed', input: ['a'], encoding_format: 'base64' };
    expect(mistralEmbedRequest(body, {}, ctx({ endpoint: 'embed' }))).toBe(body);
  });
});

describe('errors', () => {
  test('validation details become "loc: msg"', () => {
    const info = mistralError({
      object: 'error',
      message: { detail: [{ type: 'extra_forbidden', loc: ['body', 'max_completion_tokens'], msg: 'Extra inputs are not permitted', input: 5 }] },
      type: 'invalid_request_error',
      param: null,
      code: null,
    });
    expect(info).toEqual({ message: 'body.max_completion_tokens: Extra inputs are not permitted', type: 'invalid_request_error', code: null, param: null });
  });

  test('a plain message, details JSON inside the message, a top-level detail, a numeric code', () => {
    expect(mistralError({ object: 'error', message: 'Invalid model: x', type: 'invalid_model', code: '1500' })?.message).toBe('Invalid model: x');
    const inner = JSON.stringify({ detail: [{ loc: ['body', 'frequency_penalty'], msg: 'Extra inputs are not permitted' }] });
    expect(mistralError({ object: 'error', message: inner, type: 'internal_error_proxy', code: 1000 })).toMatchObject({ message: 'body.frequency_penalty: Extra inputs are not permitted', code: '1000' });
    expect(mistralError({ detail: 'Not Found' })?.message).toBe('Not Found');
    expect(mistralError({ message: 'Unauthorized', request_id: 'r' })?.message).toBe('Unauthorized');
  });

  test("OpenAI's own error shape is left to the core", () => {
    expect(mistralError({ error: { message: 'x' } })).toBeUndefined();
    expect(mistralError('x')).toBeUndefined();
  });
});
