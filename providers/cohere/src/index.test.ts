import { describe, expect, test } from 'bun:test';
import { float32Base64, GatewayError, type JsonObject, type ProviderCall, type TranslateContext } from '@gateway/sdk';
import { cohere, cohereError } from './index.ts';
import { DEFAULT_INPUT_TYPE, embedRequest, embedResponse } from './embed.ts';
import { modelsResponse } from './models.ts';

const ctx = (endpoint: TranslateContext['endpoint'], model?: string): TranslateContext => ({ endpoint, model, strictWireCompliance: true, now: 1 });

describe('the cohere adapter', () => {
  test('base URL, paths, endpoints offered', () => {
    expect(cohere.id).toBe('cohere');
    expect(cohere.baseUrl({})).toBe('https://api.cohere.com');
    const c = ctx('chatComplete');
    expect(cohere.endpoints.chatComplete?.path({}, {}, c)).toBe('/v2/chat');
    expect(cohere.endpoints.embed?.path({}, {}, c)).toBe('/v2/embed');
    expect(cohere.endpoints.listModels?.path({}, {}, c)).toBe('/v1/models?page_size=1000');
    expect(cohere.endpoints.chatComplete?.stream?.framing).toBe('sse');
    expect(cohere.endpoints.complete).toBeUndefined();
    expect(cohere.endpoints.moderate).toBeUndefined();
  });

  test('bearer authorization from the target key, without touching the call it is given', async () => {
    const call: ProviderCall = { url: 'https://api.cohere.com/v2/chat', method: 'POST', headers: { 'content-type': 'application/json' } };
    const out = await cohere.authorize(call, { Authorization: 'Bearer co-key' });
    expect(out.headers.authorization).toBe('Bearer co-key');
    expect(call.headers.authorization).toBeUndefined();
    expect((await cohere.authorize(call, { api_key: 'k2' })).headers.authorization).toBe('Bearer k2');
  });

  test("errors keep Cohere's message", () => {
    expect(cohereError({ id: 'x', message: 'invalid request: p must be between 0.01 and 0.99' })).toEqual({ message: 'invalid request: p must be between 0.01 and 0.99' });
    expect(cohereError({ error: 'x' })).toBeUndefined();
    expect(cohereError('text')).toBeUndefined();
  });
});

describe('embeddings', () => {
  test('input → texts, float vectors asked for, dimensions → output_dimension, a default input_type', () => {
    const out = embedRequest({ model: 'embed-v4.0', input: 'hello', dimensions: 256, encoding_format: 'float', user: 'u' }, {}, ctx('embed'));
    expect(out).toEqual({ model: 'embed-v4.0', texts: ['hello'], input_type: DEFAULT_INPUT_TYPE, embedding_types: ['float'], output_dimension: 256 });
    const custom = embedRequest({ model: 'm', input: ['a', 'b'], input_type: 'search_query', truncate: 'END' }, {}, ctx('embed'));
    expect(custom).toMatchObject({ texts: ['a', 'b'], input_type: 'search_query', truncate: 'END' });
  });

  test('token-id input is refused', () => {
    expect(() => embedRequest({ model: 'm', input: [1, 2, 3] }, {}, ctx('embed'))).toThrow(GatewayError);
    expect(() => embedRequest({ model: 'm', input: [[1, 2]] }, {}, ctx('embed'))).toThrow('token-id');
  });

  const answer = { id: 'e', embeddings: { float: [[0.5, -1], [0.25, 2]] }, texts: ['a', 'b'], meta: { billed_units: { input_tokens: 4 } }, response_type: 'embeddings_by_type' };

  test('the answer as an OpenAI list: floats when asked for floats, usage from the tokens Cohere reports', () => {
    const c = ctx('embed', 'embed-v4.0');
    embedRequest({ model: 'embed-v4.0', input: ['a', 'b'], encoding_format: 'float' }, {}, c);
    expect(embedResponse(answer, c)).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.5, -1] }, { object: 'embedding', index: 1, embedding: [0.25, 2] }],
      model: 'embed-v4.0',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    });
    const withTokens = { ...answer, meta: { billed_units: { input_tokens: 4 }, tokens: { input_tokens: 6 } } };
    expect(embedResponse(withTokens, c).usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
  });

  test('base64 when the client asked for it (little-endian float32, as OpenAI sends it)', () => {
    const c = ctx('embed', 'embed-v4.0');
    embedRequest({ model: 'embed-v4.0', input: ['a', 'b'], encoding_format: 'base64' }, {}, c);
    const data = embedResponse(answer, c).data as JsonObject[];
    expect(data.map((d) => d.embedding)).toEqual([float32Base64([0.5, -1]), float32Base64([0.25, 2])]);
    const decoded = new Float32Array(Buffer.from(data[0]?.embedding as string, 'base64').buffer.slice(0));
    expect([...decoded]).toEqual([0.5, -1]);
  });

  test('an answer without float embeddings throws', () => {
    expect(() => embedResponse({ embeddings: { int8: [[1]] } }, ctx('embed'))).toThrow();
    expect(() => embedResponse({ embeddings: { float: [['x']] } }, ctx('embed'))).toThrow('embeddings.float[0]');
  });
});

describe('model list', () => {
  test("Cohere's models as OpenAI's list", () => {
    expect(modelsResponse({ models: [{ name: 'command-a-03-2025', endpoints: ['chat'], context_length: 256000 }], next_page_token: null })).toEqual({
      object: 'list',
      data: [{ id: 'command-a-03-2025', object: 'model', created: 0, owned_by: 'cohere', context_length: 256000, endpoints: ['chat'] }],
    });
    expect(() => modelsResponse({ data: [] })).toThrow();
  });
});
