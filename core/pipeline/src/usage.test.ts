import { describe, expect, test } from 'bun:test';
import { extractUsage, normaliseUsage, usageObjectOf } from './usage.ts';

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

  test("Anthropic's cache writes and the part of them written for an hour (cache_creation)", () => {
    const usage = { prompt_tokens: 127, completion_tokens: 9, cache_creation_input_tokens: 20, cache_creation: { ephemeral_1h_input_tokens: 15 } };
    expect(extractUsage(JSON.stringify({ usage }))).toEqual({ promptTokens: 127, completionTokens: 9, totalTokens: 136, cacheWriteInputTokens: 20, cacheWrite1hInputTokens: 15 });
  });

  test("Anthropic's Messages usage: input_tokens excludes the cache, so the prompt is input + cache reads + writes", () => {
    const usage = { input_tokens: 45, output_tokens: 120, cache_read_input_tokens: 3000, cache_creation_input_tokens: 1500, cache_creation: { ephemeral_1h_input_tokens: 500 } };
    expect(extractUsage(JSON.stringify({ type: 'message', usage }))).toEqual({
      promptTokens: 4545,
      completionTokens: 120,
      totalTokens: 4665,
      cachedInputTokens: 3000,
      cacheWriteInputTokens: 1500,
      cacheWrite1hInputTokens: 500,
    });
    // A native stream's usage, as streams/passthrough-usage.ts merges message_start's and message_delta's.
    expect(normaliseUsage({ input_tokens: 25, output_tokens: 15, cache_read_input_tokens: 3 })).toEqual({
      promptTokens: 28,
      completionTokens: 15,
      totalTokens: 43,
      cachedInputTokens: 3,
    });
    // Null counts (the SDK types allow them) add nothing.
    expect(normaliseUsage({ input_tokens: 7, output_tokens: 1, cache_read_input_tokens: null, cache_creation_input_tokens: null })?.promptTokens).toBe(7);
  });

  test('the cache counts are not added where the prompt already holds them: OpenAI names, the responses API', () => {
    // An adapter's translation of Anthropic's usage: prompt_tokens is the whole prompt already.
    expect(normaliseUsage({ prompt_tokens: 4545, completion_tokens: 120, cache_read_input_tokens: 3000, cache_creation_input_tokens: 1500 })?.promptTokens).toBe(4545);
    // The responses API: input_tokens includes input_tokens_details.cached_tokens.
    expect(normaliseUsage({ input_tokens: 100, output_tokens: 5, input_tokens_details: { cached_tokens: 60 } })).toEqual({
      promptTokens: 100,
      completionTokens: 5,
      totalTokens: 105,
      cachedInputTokens: 60,
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

  test('a large JSON answer: only the usage object is parsed, not the whole body', () => {
    const usage = { prompt_tokens: 120, completion_tokens: 80_000, total_tokens: 80_120, completion_tokens_details: { reasoning_tokens: 5 } };
    const content = 'word "quoted" {brace} [bracket] \\ usage '.repeat(100_000); // ~4 MB
    const body = JSON.stringify({ id: 'x', choices: [{ message: { role: 'assistant', content } }], usage, system_fingerprint: 'fp_{"usage":1}' });
    expect(body.length).toBeGreaterThan(4_000_000);
    const parse = JSON.parse;
    let longest = 0;
    JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
      longest = Math.max(longest, text.length);
      return parse(text, reviver);
    }) as typeof JSON.parse;
    let result: ReturnType<typeof extractUsage>;
    try {
      result = extractUsage(body);
    } finally {
      JSON.parse = parse;
    }
    expect(result).toEqual({ promptTokens: 120, completionTokens: 80_000, totalTokens: 80_120, reasoningTokens: 5 });
    expect(longest).toBeLessThan(200); // JSON.parse saw the usage object alone, never the 4 MB body
  });

  test('a nested "usage" after the top-level one is not taken for it; usage first still works', () => {
    const nestedLast = JSON.stringify({ usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }, data: [{ usage: { prompt_tokens: 9 } }] });
    expect(extractUsage(nestedLast)).toEqual({ promptTokens: 1, completionTokens: 2, totalTokens: 3 });
    const nestedOnly = JSON.stringify({ data: [{ usage: { prompt_tokens: 9, completion_tokens: 9, total_tokens: 18 } }] });
    expect(extractUsage(nestedOnly)).toBeUndefined();
    const first = JSON.stringify({ usage: { input_tokens: 3, output_tokens: 4 }, output: [{ content: 'x'.repeat(50_000) }] });
    expect(extractUsage(first)).toEqual({ promptTokens: 3, completionTokens: 4, totalTokens: 7 });
    // A key that only contains "usage" as escaped text, and spacing around the colon.
    expect(extractUsage('{"note":"say \\"usage\\": {}","usage" :\n {"prompt_tokens": 2}}')).toEqual({ promptTokens: 2, completionTokens: null, totalTokens: null });
    expect(extractUsage('{"usage":null}')).toBeUndefined();
    expect(extractUsage('{"usage":{"prompt_tokens":1}} trailing')).toBeUndefined();
  });

  test('a large SSE stream: the last usage event, found from the end', () => {
    const chunks = Array.from({ length: 20_000 }, (_, i) => ({ choices: [{ delta: { content: `tok${i} ` } }], usage: null }));
    const body = sse(...chunks, { choices: [], usage: { prompt_tokens: 12, completion_tokens: 20_000, total_tokens: 20_012 } }, '[DONE]');
    expect(extractUsage(body)).toEqual({ promptTokens: 12, completionTokens: 20_000, totalTokens: 20_012 });
  });
});

describe('usageObjectOf: the usage of an answer parsed anyway is the one extractUsage reads from its text', () => {
  const answers = [
    { id: 'x', choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18, prompt_tokens_details: { cached_tokens: 2 } } },
    { object: 'response', response: { usage: { input_tokens: 3, output_tokens: 4 } } },
    // A usage without counts: the nested one is read, as from the text.
    { usage: { note: 'none' }, response: { usage: { input_tokens: 1, output_tokens: 2 } } },
    { usage: null },
    { choices: [{ message: { content: 'no usage here' } }] },
  ];
  for (const answer of answers)
    test(JSON.stringify(answer).slice(0, 60), () => {
      expect(normaliseUsage(usageObjectOf(answer))).toEqual(extractUsage(JSON.stringify(answer)));
    });
});
