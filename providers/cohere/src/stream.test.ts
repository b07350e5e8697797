import { describe, expect, test } from 'bun:test';
import type { JsonObject, StreamState, TranslateContext } from '@gateway/sdk';
import { chatRequest } from './chat.ts';
import { toChunks } from './stream.ts';

const ctx = (over: Partial<TranslateContext> = {}): TranslateContext => ({
  endpoint: 'chatComplete',
  model: 'command-a-03-2025',
  strictWireCompliance: true,
  now: 1_700_000_000,
  ...over,
});

/** Runs Cohere events (as the core decodes them: `event` name + `data`) through the translator. */
function run(events: JsonObject[], c = ctx(), raw: string[] = []) {
  const state: StreamState = {};
  const chunks: JsonObject[] = [];
  let done = false;
  /** The last usage the adapter recorded for the completion. */
  let usage: JsonObject | undefined;
  for (const data of [...events.map((e) => JSON.stringify(e)), ...raw]) {
    const out = toChunks({ event: undefined, data }, state, c);
    chunks.push(...out.chunks);
    if (out.done) done = true;
    if (out.usage) usage = out.usage;
  }
  return { chunks, done, usage };
}

const deltas = (chunks: JsonObject[]) => chunks.map((c) => ((c.choices as JsonObject[])[0] as JsonObject | undefined)?.delta);
const start = { id: 'msg-1', type: 'message-start', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } };
const end = (finish: string, extra: JsonObject = {}) => ({
  type: 'message-end',
  delta: { finish_reason: finish, usage: { billed_units: { input_tokens: 1, output_tokens: 3 }, tokens: { input_tokens: 9, output_tokens: 3 } }, ...extra },
});

describe('toChunks', () => {
  test('a text stream: role first, every text piece, the finish reason, the end', () => {
    const { chunks, done } = run([
      start,
      { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } },
      { type: 'content-delta', index: 0, delta: { message: { content: { text: 'Hello' } } } },
      { type: 'content-delta', index: 0, delta: { message: { content: { text: ' world' } } } },
      { type: 'content-end', index: 0 },
      end('COMPLETE'),
    ]);
    expect(done).toBe(true);
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: '' }, { content: 'Hello' }, { content: ' world' }, {}]);
    const last = chunks.at(-1) as JsonObject;
    expect(last).toEqual({
      id: 'msg-1',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'command-a-03-2025',
      choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }],
    });
    expect(chunks.every((c) => c.id === 'msg-1')).toBe(true);
  });

  test('tool calls: the plan as content, each call with index, id and name, argument deltas by index', () => {
    const { chunks } = run([
      start,
      { type: 'tool-plan-delta', delta: { message: { tool_plan: 'I will' } } },
      { type: 'tool-plan-delta', delta: { message: { tool_plan: ' check.' } } },
      { type: 'tool-call-start', index: 0, delta: { message: { tool_calls: { id: 'get_weather_a', type: 'function', function: { name: 'get_weather', arguments: '' } } } } },
      { type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: '{"city":' } } } } },
      { type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: '"Paris"}' } } } } },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-start', index: 1, delta: { message: { tool_calls: { id: 'get_time_b', type: 'function', function: { name: 'get_time', arguments: '{"ci' } } } } },
      { type: 'tool-call-delta', index: 1, delta: { message: { tool_calls: { function: { arguments: 'ty":"Rome"}' } } } } },
      { type: 'tool-call-end', index: 1 },
      end('TOOL_CALL'),
    ]);
    expect(deltas(chunks)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'I will' },
      { content: ' check.' },
      { tool_calls: [{ index: 0, id: 'get_weather_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      { tool_calls: [{ index: 1, id: 'get_time_b', type: 'function', function: { name: 'get_time', arguments: '{"ci' } }] },
      { tool_calls: [{ index: 1, function: { arguments: 'ty":"Rome"}' } }] },
      {},
    ]);
    expect(((chunks.at(-1)?.choices as JsonObject[])[0] as JsonObject).finish_reason).toBe('tool_calls');
  });

  test('with include_usage, a last chunk with no choices carries usage from tokens; without it, no usage at all', () => {
    const c = ctx();
    chatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true, stream_options: { include_usage: true } }, {}, c);
    const withUsage = run([start, end('MAX_TOKENS')], c).chunks;
    expect(withUsage.at(-1)).toEqual({
      id: 'msg-1',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'command-a-03-2025',
      choices: [],
      usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
    });
    expect(((withUsage.at(-2)?.choices as JsonObject[])[0] as JsonObject).finish_reason).toBe('length');
    const c2 = ctx();
    chatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }, {}, c2);
    expect(run([start, end('COMPLETE')], c2).chunks.some((chunk) => 'usage' in chunk)).toBe(false);
    // Still recorded for the completion (tokens limits, cost).
    expect(run([start, end('COMPLETE')], c2).usage).toEqual({ prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
  });

  test('events named only by the SSE event line are understood too', () => {
    const state: StreamState = {};
    const out = toChunks({ event: 'content-delta', data: JSON.stringify({ delta: { message: { content: { text: 'x' } } } }) }, state, ctx());
    expect(deltas(out.chunks)).toEqual([{ content: 'x' }]);
  });

  test('thinking deltas: dropped under strict wire compliance, reasoning_content otherwise', () => {
    const thinking = { type: 'content-delta', index: 0, delta: { message: { content: { thinking: 'Hmm' } } } };
    expect(run([start, thinking]).chunks).toHaveLength(1);
    expect(deltas(run([start, thinking], ctx({ strictWireCompliance: false })).chunks)[1]).toEqual({ reasoning_content: 'Hmm' });
  });

  test('citation and other events, empty data and [DONE] produce nothing', () => {
    const { chunks, done } = run([start, { type: 'citation-start', index: 0 }, { type: 'citation-end', index: 0 }, { type: 'debug' }], ctx(), ['', '[DONE]']);
    expect(chunks).toHaveLength(1);
    expect(done).toBe(false);
  });

  test('ERROR and TIMEOUT endings, malformed JSON and stray tool deltas throw (the core ends the stream with an error frame)', () => {
    expect(() => run([start, end('ERROR', { error: 'overloaded' })])).toThrow('overloaded');
    expect(() => run([start, end('TIMEOUT')])).toThrow('TIMEOUT');
    expect(() => run([start], ctx(), ['{not json'])).toThrow();
    expect(() => run([start], ctx(), ['[1,2]'])).toThrow();
    expect(() => run([start, { type: 'tool-call-delta', index: 3, delta: { message: { tool_calls: { function: { arguments: 'x' } } } } }])).toThrow('index 3');
    expect(() => run([start, { type: 'tool-call-start', index: 0, delta: { message: { tool_calls: { id: 'x' } } } }])).toThrow();
  });
});
