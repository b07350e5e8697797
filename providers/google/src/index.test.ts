import { describe, expect, test } from 'bun:test';
import { GatewayError, type JsonObject, type ProviderCall, type TranslateContext } from '@gateway/sdk';
import { fromGeminiModelList, google, safeModel } from './index.ts';
import { embeddingInputs, fromGeminiEmbedResponse, toGeminiEmbedRequest } from './embed.ts';

const ctx = (over: Partial<TranslateContext> = {}): TranslateContext => ({ endpoint: 'chatComplete', model: 'gemini-2.5-flash', strictWireCompliance: true, now: 1, ...over });
const call = (): ProviderCall => ({ url: 'https://generativelanguage.googleapis.com/v1beta/models/x:generateContent', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

describe('google adapter', () => {
  test('base URL, endpoints and paths', () => {
    expect(google.id).toBe('google');
    expect(google.baseUrl({})).toBe('https://generativelanguage.googleapis.com');
    expect(Object.keys(google.endpoints).sort()).toEqual(['chatComplete', 'embed', 'listModels']);
    const chat = google.endpoints.chatComplete!;
    expect(chat.path({}, { model: 'gemini-2.5-flash' }, ctx())).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(chat.path({}, { model: 'gemini-2.5-flash', stream: true }, ctx())).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(chat.path({}, { model: 'models/gemini-2.5-flash' }, ctx())).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(chat.path({}, { model: 'tunedModels/my-model-1' }, ctx())).toBe('/v1beta/tunedModels/my-model-1:generateContent');
    expect(google.endpoints.embed!.path({}, { model: 'text-embedding-004' }, ctx({ endpoint: 'embed' }))).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
    expect(google.endpoints.listModels!.path({}, {}, ctx({ endpoint: 'listModels', model: undefined }))).toBe('/v1beta/models?pageSize=1000');
  });

  test('model names that could leave the model path are refused', () => {
    for (const bad of ['../files', 'gemini:countTokens', 'a?b', 'a#b', 'a b', 'models//x', '', 'x/./y']) {
      expect(() => google.endpoints.chatComplete!.path({}, { model: bad }, ctx())).toThrow(GatewayError);
    }
    expect(() => safeModel(undefined)).toThrow('model is required');
    expect(safeModel('claude-3@2024')).toBe('claude-3@2024');
  });

  test('the key goes in x-goog-api-key, from api_key or Authorization; never in the URL', async () => {
    const a = await google.authorize(call(), { api_key: 'k1' });
    expect(a.headers['x-goog-api-key']).toBe('k1');
    expect(a.headers.authorization).toBeUndefined();
    expect(a.url).not.toContain('k1');
    expect((await google.authorize(call(), { Authorization: 'Bearer k2' })).headers['x-goog-api-key']).toBe('k2');
    const none = call();
    expect(await google.authorize(none, {})).toBe(none);
  });

  test('the chat request translator sends a Gemini body', () => {
    const c = ctx();
    const wire = google.endpoints.chatComplete!.request!({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } }, {}, c);
    expect(wire).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
  });

  test('errors use Google’s body', () => {
    expect(google.error!({ error: { code: 404, message: 'models/x is not found', status: 'NOT_FOUND' } }, 404)).toEqual({
      message: 'models/x is not found',
      type: 'not_found_error',
      code: 'NOT_FOUND',
      param: null,
    });
  });
});

describe('embeddings', () => {
  test('one request per input, dimensions as outputDimensionality', () => {
    expect(toGeminiEmbedRequest({ input: ['a', 'b'], dimensions: 8 }, 'text-embedding-004')).toEqual({
      requests: [
        { model: 'models/text-embedding-004', content: { parts: [{ text: 'a' }] }, outputDimensionality: 8 },
        { model: 'models/text-embedding-004', content: { parts: [{ text: 'b' }] }, outputDimensionality: 8 },
      ],
    });
    expect(embeddingInputs({ input: 'one' })).toEqual(['one']);
    expect(() => embeddingInputs({ input: [1, 2, 3] })).toThrow(GatewayError);
    expect(() => embeddingInputs({ input: [] })).toThrow(GatewayError);
  });

  test('floats or base64 as the client asked', () => {
    const json = { embeddings: [{ values: [0.5, -1] }, { values: [2] }] };
    const floats = ctx({ endpoint: 'embed', model: 'text-embedding-004', body: { input: ['a', 'b'], encoding_format: 'float' } });
    expect(fromGeminiEmbedResponse(json, floats)).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.5, -1] },
        { object: 'embedding', index: 1, embedding: [2] },
      ],
      model: 'text-embedding-004',
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
    const b64 = ctx({ endpoint: 'embed', body: { input: 'a', encoding_format: 'base64' } });
    const encoded = (fromGeminiEmbedResponse(json, b64).data as JsonObject[])[0]?.embedding as string;
    const bytes = Buffer.from(encoded, 'base64');
    expect([bytes.readFloatLE(0), bytes.readFloatLE(4)]).toEqual([0.5, -1]);
    // an unseen context: floats
    expect((fromGeminiEmbedResponse(json, ctx()).data as JsonObject[])[0]?.embedding).toEqual([0.5, -1]);
    expect(() => fromGeminiEmbedResponse({ embeddings: [{ values: 'x' }] }, ctx())).toThrow();
    expect(() => fromGeminiEmbedResponse({}, ctx())).toThrow();
  });
});

test('model list', () => {
  expect(fromGeminiModelList({ models: [{ name: 'models/gemini-2.5-flash', displayName: 'Gemini 2.5 Flash', inputTokenLimit: 100 }] })).toEqual({
    object: 'list',
    data: [{ id: 'gemini-2.5-flash', object: 'model', created: 0, owned_by: 'google', display_name: 'Gemini 2.5 Flash', context_window: 100 }],
  });
  expect(fromGeminiModelList({})).toEqual({ object: 'list', data: [] });
  expect(() => fromGeminiModelList({ models: 'x' })).toThrow();
});
