import { describe, expect, test } from 'bun:test';
import { extractUsage } from './usage.ts';

const sse = (...events: unknown[]) => events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');

describe('extractUsage', () => {
  test('a JSON answer', () => {
    const body = JSON.stringify({ id: 'x', choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } });
    expect(extractUsage(body)).toEqual({ promptTokens: 11, completionTokens: 7, totalTokens: 18 });
  });

  test('a responses-API answer (input/output names); total computed when absent', () => {
    expect(extractUsage(JSON.stringify({ object: 'response', usage: { input_tokens: 3, output_tokens: 4 } }))).toEqual({
      promptTokens: 3,
      completionTokens: 4,
      totalTokens: 7,
    });
  });

  test('an embeddings answer has no completion tokens', () => {
    expect(extractUsage(JSON.stringify({ object: 'list', data: [], usage: { prompt_tokens: 5, total_tokens: 5 } }))).toEqual({
      promptTokens: 5,
      completionTokens: null,
      totalTokens: 5,
    });
  });

  test('an SSE stream: the last data event that carries usage', () => {
    const body = sse(
      { choices: [{ delta: { content: 'he' } }], usage: null },
      { choices: [{ delta: { content: 'llo "usage"' } }], usage: null },
      { choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } },
      '[DONE]',
    );
    expect(extractUsage(body)).toEqual({ promptTokens: 9, completionTokens: 2, totalTokens: 11 });
  });

  test('an SSE stream of the responses API (usage inside response.completed)', () => {
    const body =
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"hi"}\n\n' +
      'event: response.completed\ndata: ' +
      JSON.stringify({ type: 'response.completed', response: { usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } } }) +
      '\n\n';
    expect(extractUsage(body)).toEqual({ promptTokens: 1, completionTokens: 2, totalTokens: 3 });
  });

  test('no usage, not JSON, cut JSON, empty: undefined', () => {
    expect(extractUsage(JSON.stringify({ choices: [] }))).toBeUndefined();
    expect(extractUsage(sse({ choices: [], usage: null }, '[DONE]'))).toBeUndefined();
    expect(extractUsage('{"usage": {"prompt_tokens": 1')).toBeUndefined();
    expect(extractUsage('plain text with "usage" in it')).toBeUndefined();
    expect(extractUsage('')).toBeUndefined();
    expect(extractUsage(undefined)).toBeUndefined();
  });
});
