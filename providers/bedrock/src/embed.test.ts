import { describe, expect, test } from 'bun:test';
import { float32Base64, type JsonObject, type TranslateContext } from '@gateway/sdk';
import { embedRequest, embedResponse } from './embed.ts';

const TITAN = 'amazon.titan-embed-text-v2:0';
const COHERE = 'cohere.embed-english-v3';
const ctx = (model: string, body?: JsonObject): TranslateContext => ({ endpoint: 'embed', model, strictWireCompliance: true, now: 0, body });

describe('embeddings: requests', () => {
  test('Titan: one inputText; dimensions on v2 only', () => {
    expect(embedRequest({ model: TITAN, input: 'hello' })).toEqual({ inputText: 'hello' });
    expect(embedRequest({ model: TITAN, input: ['hello'], dimensions: 256 })).toEqual({ inputText: 'hello', dimensions: 256 });
    expect(() => embedRequest({ model: 'amazon.titan-embed-text-v1', input: 'x', dimensions: 256 })).toThrow('dimensions');
  });

  test('Titan with several inputs is refused with a 400 that says why', () => {
    let caught: unknown;
    try {
      embedRequest({ model: TITAN, input: ['a', 'bb'] });
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ status: 400, param: 'input' });
    expect((caught as Error).message).toContain('one text per call');
  });

  test('Cohere: texts batched, input_type search_document by default (or as the client says)', () => {
    expect(embedRequest({ model: COHERE, input: ['a', 'bb'] })).toEqual({ texts: ['a', 'bb'], input_type: 'search_document' });
    expect(embedRequest({ model: COHERE, input: 'q', input_type: 'search_query', truncate: 'END' })).toEqual({
      texts: ['q'],
      input_type: 'search_query',
      truncate: 'END',
    });
    expect(embedRequest({ model: 'cohere.embed-v4:0', input: 'q', dimensions: 512 })).toMatchObject({ output_dimension: 512 });
    expect(() => embedRequest({ model: COHERE, input: 'q', dimensions: 512 })).toThrow('dimensions');
    expect(() => embedRequest({ model: COHERE, input: Array.from({ length: 97 }, () => 'x') })).toThrow('96');
  });

  test('token ids and unknown models are refused', () => {
    expect(() => embedRequest({ model: TITAN, input: [1, 2, 3] })).toThrow('token ids');
    expect(() => embedRequest({ model: 'anthropic.claude-3-haiku-20240307-v1:0', input: 'x' })).toThrow('not an embedding model');
  });
});

describe('embeddings: answers', () => {
  test('Titan: one vector, token count as usage; floats or base64 as the client asked', () => {
    const c = ctx(TITAN, { model: TITAN, input: 'hi there', encoding_format: 'float' });
    expect(embedResponse({ embedding: [0.5, -1, 2], inputTextTokenCount: 2, embeddingsByType: { float: [0.5, -1, 2] } }, c)).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.5, -1, 2] }],
      model: TITAN,
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });
    const b = ctx(TITAN, { model: TITAN, input: 'hi', encoding_format: 'base64' });
    expect(((embedResponse({ embedding: [0.5, -1, 2], inputTextTokenCount: 1 }, b).data as JsonObject[])[0] as JsonObject).embedding).toBe(float32Base64([0.5, -1, 2]));
  });

  test('Cohere: one vector per text, in order; both answer shapes', () => {
    const c = ctx(COHERE, { model: COHERE, input: ['a', 'b'] });
    const plain = embedResponse({ id: 'x', texts: ['a', 'b'], embeddings: [[1], [2]], response_type: 'embeddings_floats' }, c);
    expect(plain.data).toEqual([
      { object: 'embedding', index: 0, embedding: [1] },
      { object: 'embedding', index: 1, embedding: [2] },
    ]);
    const byType = embedResponse({ id: 'x', embeddings: { float: [[3], [4]] }, response_type: 'embeddings_by_type' }, c);
    expect((byType.data as JsonObject[]).map((d) => d.embedding)).toEqual([[3], [4]]);
  });

  test('an answer without vectors throws (the core answers 502)', () => {
    for (const json of [null, {}, { embedding: 'x' }, { embedding: [] }, { embedding: [1, 'a'] }, { embedding: [1], inputTextTokenCount: -3 }]) {
      expect(() => embedResponse(json, ctx(TITAN))).toThrow();
    }
    for (const json of [{}, { embeddings: [] }, { embeddings: [[1], 'x'] }, { embeddings: { int8: [[1]] } }]) {
      expect(() => embedResponse(json, ctx(COHERE))).toThrow();
    }
  });
});
