import { describe, expect, test } from 'bun:test';
import type { JsonObject, StreamState, TranslateContext } from '@gateway/sdk';
import { geminiStreamChunks } from './stream.ts';

const newCtx = (over: Partial<TranslateContext> = {}): TranslateContext => ({ endpoint: 'chatComplete', model: 'gemini-2.5-flash', strictWireCompliance: true, now: 1700000000, ...over });
const usageMetadata = { promptTokenCount: 4, candidatesTokenCount: 2, thoughtsTokenCount: 1, totalTokenCount: 7 };

function run(events: object[], ctx = newCtx()) {
  const state: StreamState = {};
  const chunks: JsonObject[] = [];
  let done = false;
  /** The last usage the adapter recorded for the completion. */
  let usage: JsonObject | undefined;
  for (const e of events) {
    const out = geminiStreamChunks({ data: JSON.stringify(e) }, state, ctx, { provider: 'google' });
    chunks.push(...out.chunks);
    if (out.done) done = true;
    if (out.usage) usage = out.usage;
  }
  return { chunks, done, usage };
}

const text = (t: string, extra: object = {}) => ({ candidates: [{ content: { role: 'model', parts: [{ text: t }] }, index: 0, ...extra }], responseId: 'sr', usageMetadata: { promptTokenCount: 4 } });

describe('geminiStreamChunks', () => {
  test('text pieces, then the finish chunk; usage chunk only with include_usage', () => {
    const ctx = newCtx({ body: { stream: true, stream_options: { include_usage: true } } });
    const { chunks, done } = run([text('Hel'), text('lo'), { ...text('!', { finishReason: 'STOP' }), usageMetadata }], ctx);
    expect(done).toBe(true);
    expect(chunks.map((c) => (c.choices as JsonObject[])[0]?.delta ?? null)).toEqual([
      { role: 'assistant', content: 'Hel' },
      { content: 'lo' },
      { content: '!' },
      {},
      null,
    ]);
    expect((chunks[3]?.choices as JsonObject[])[0]?.finish_reason).toBe('stop');
    expect(chunks[4]).toEqual({
      id: 'chatcmpl-sr',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: 'gemini-2.5-flash',
      choices: [],
      usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 1 } },
    });
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set(['chatcmpl-sr']));
  });

  test('without include_usage no usage is sent; unknown request facts put usage on the last chunk', () => {
    const events = [{ ...text('Hi', { finishReason: 'STOP' }), usageMetadata }];
    const off = newCtx({ body: { stream: true } });
    expect(run(events, off).chunks.some((c) => c.usage !== undefined)).toBe(false);
    // Still recorded for the completion (tokens limits, cost).
    expect(run(events, off).usage).toEqual(run(events, newCtx({ body: { stream: true, stream_options: { include_usage: true } } })).chunks.at(-1)?.usage as JsonObject);
    expect(run(events, off).usage?.total_tokens).toBe(7);
    const unknown = run(events).chunks;
    expect(unknown[unknown.length - 1]?.usage).toBeDefined();
    expect((unknown[unknown.length - 1]?.choices as JsonObject[])[0]?.finish_reason).toBe('stop');
  });

  test('a whole function call goes out as one tool-call chunk with full arguments and a stable id', () => {
    const event = {
      responseId: 'tr',
      candidates: [
        {
          content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 's' }, { functionCall: { name: 'get_time', args: { city: 'Rome' } } }] },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata,
    };
    const { chunks, done } = run([event]);
    expect(done).toBe(true);
    expect((chunks[0]?.choices as JsonObject[])[0]?.delta).toEqual({
      role: 'assistant',
      tool_calls: [
        { index: 0, id: 'call_tr_0_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 's' } } },
        { index: 1, id: 'call_tr_0_1', type: 'function', function: { name: 'get_time', arguments: '{"city":"Rome"}' } },
      ],
    });
    expect((chunks[1]?.choices as JsonObject[])[0]?.finish_reason).toBe('tool_calls');
    // the same stream translated again gives the same ids
    expect(run([event]).chunks[0]).toEqual(chunks[0] as JsonObject);
  });

  test('calls spread over events keep counting their indices', () => {
    const call = (name: string, finish?: string) => ({ responseId: 'm', candidates: [{ content: { parts: [{ functionCall: { name, args: {} } }] }, ...(finish ? { finishReason: finish } : {}) }] });
    const { chunks } = run([call('a'), call('b', 'STOP')]);
    const calls = chunks.flatMap((c) => ((c.choices as JsonObject[])[0]?.delta as JsonObject | undefined)?.tool_calls ?? []) as JsonObject[];
    expect(calls.map((c) => [c.index, c.id])).toEqual([
      [0, 'call_m_0_0'],
      [1, 'call_m_0_1'],
    ]);
  });

  test('thoughts are streamed as reasoning_content only when allowed', () => {
    const events = [{ candidates: [{ content: { parts: [{ text: 'pondering', thought: true }] } }] }, text('Yes', { finishReason: 'STOP' })];
    const strict = run(events).chunks.map((c) => (c.choices as JsonObject[])[0]?.delta as JsonObject | undefined);
    expect(strict.some((d) => d && 'reasoning_content' in d)).toBe(false);
    const open = run(events, newCtx({ strictWireCompliance: false })).chunks.map((c) => (c.choices as JsonObject[])[0]?.delta);
    expect(open[0]).toEqual({ role: 'assistant', content: '', reasoning_content: 'pondering' });
  });

  test('MAX_TOKENS ends with length; a blocked prompt ends with content_filter', () => {
    const cut = run([text('abc', { finishReason: 'MAX_TOKENS' })]);
    expect(cut.done).toBe(true);
    expect((cut.chunks[1]?.choices as JsonObject[])[0]?.finish_reason).toBe('length');
    const blocked = run([{ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 2 } }]);
    expect(blocked.done).toBe(true);
    expect((blocked.chunks[0]?.choices as JsonObject[])[0]).toEqual({ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: 'content_filter' });
  });

  test('a stream without a finish reason is not done (the core then reports it cut)', () => {
    expect(run([text('a'), text('b')]).done).toBe(false);
  });

  test('two candidates: done when both finished', () => {
    const both = (a: object, b: object) => ({ candidates: [{ index: 0, content: { parts: [{ text: 'x' }] }, ...a }, { index: 1, content: { parts: [{ text: 'y' }] }, ...b }] });
    const state: StreamState = {};
    const ctx = newCtx();
    const first = geminiStreamChunks({ data: JSON.stringify(both({ finishReason: 'STOP' }, {})) }, state, ctx, { provider: 'google' });
    expect(first.done).toBeUndefined();
    const second = geminiStreamChunks({ data: JSON.stringify({ candidates: [{ index: 1, content: { parts: [{ text: 'z' }] }, finishReason: 'STOP' }] }) }, state, ctx, { provider: 'google' });
    expect(second.done).toBe(true);
  });

  test('malformed events and error events throw', () => {
    const state: StreamState = {};
    expect(() => geminiStreamChunks({ data: '{oops' }, state, newCtx(), { provider: 'google' })).toThrow('malformed stream event');
    expect(() => geminiStreamChunks({ data: '{"hello":1}' }, state, newCtx(), { provider: 'google' })).toThrow();
    expect(() => geminiStreamChunks({ data: '{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}' }, state, newCtx(), { provider: 'google' })).toThrow('overloaded');
    expect(geminiStreamChunks({ data: '' }, state, newCtx(), { provider: 'google' }).chunks).toEqual([]);
  });
});
