import { describe, expect, test } from 'bun:test';
import { GatewayError, type JsonObject, type StreamState, type TranslateContext } from '@gateway/sdk';
import { toAnthropicRequest } from './request.ts';
import { JSON_TOOL_NAME } from './shared.ts';
import { anthropicEventToChunks } from './stream.ts';

type Ev = [string, JsonObject];
const ctx = (strictWireCompliance = true): TranslateContext => ({ endpoint: 'chatComplete', model: 'asked', strictWireCompliance, now: 1700000000 });

/** A context on which the request was translated (so the stream knows include_usage / legacy functions). */
function ctxFor(body: JsonObject, strictWireCompliance = true): TranslateContext {
  const c = ctx(strictWireCompliance);
  toAnthropicRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true, ...body }, {}, c);
  return c;
}

function run(events: Ev[], c: TranslateContext = ctx()) {
  const state: StreamState = {};
  const chunks: JsonObject[] = [];
  let done = false;
  /** The last usage the adapter recorded for the completion. */
  let usage: JsonObject | undefined;
  for (const [event, data] of events) {
    expect(done).toBe(false); // nothing after the end
    const out = anthropicEventToChunks({ event, data: JSON.stringify({ type: event, ...data }) }, state, c);
    chunks.push(...out.chunks);
    done = out.done === true;
    if (out.usage) usage = out.usage;
  }
  return { chunks, done, usage };
}

const deltas = (chunks: JsonObject[]) => chunks.filter((c) => (c.choices as JsonObject[]).length).map((c) => ((c.choices as JsonObject[])[0] as JsonObject).delta as JsonObject);
const finishes = (chunks: JsonObject[]) => chunks.flatMap((c) => (c.choices as JsonObject[]).map((ch) => ch.finish_reason)).filter(Boolean);

const start: Ev = [
  'message_start',
  {
    message: {
      id: 'msg_s',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, cache_read_input_tokens: 4, cache_creation_input_tokens: 1, output_tokens: 1 },
    },
  },
];
const end = (stop_reason: string, output_tokens = 6): Ev[] => [
  ['message_delta', { delta: { stop_reason, stop_sequence: null }, usage: { output_tokens } }],
  ['message_stop', {}],
];
const textBlock = (index: number, ...texts: string[]): Ev[] => [
  ['content_block_start', { index, content_block: { type: 'text', text: '' } }],
  ['ping', {}],
  ...texts.map((text): Ev => ['content_block_delta', { index, delta: { type: 'text_delta', text } }]),
  ['content_block_stop', { index }],
];
const toolBlock = (index: number, id: string, name: string, ...parts: string[]): Ev[] => [
  ['content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } }],
  ['content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } }],
  ...parts.map((partial_json): Ev => ['content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }]),
  ['content_block_stop', { index }],
];
const thinkingBlock: Ev[] = [
  ['content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }],
  ['content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } }],
  ['content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } }],
  ['content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig' } }],
  ['content_block_stop', { index: 0 }],
];

describe('anthropicEventToChunks: text', () => {
  test('role chunk first, one chunk per text delta, the finish chunk at message_stop, then done', () => {
    const { chunks, done } = run([start, ['ping', {}], ...textBlock(0, 'Hel', 'lo'), ...end('end_turn')]);
    expect(done).toBe(true);
    expect(chunks[0]).toEqual({
      id: 'msg_s',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: 'claude-sonnet-4-5',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
    });
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: '' }, { content: 'Hel' }, { content: 'lo' }, {}]);
    expect(finishes(chunks)).toEqual(['stop']);
    expect(chunks.every((c) => c.id === 'msg_s' && c.object === 'chat.completion.chunk')).toBe(true);
    // no usage chunk unless include_usage was asked for
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
  });

  test('without include_usage the usage is still recorded for the completion (message_start, then each update)', () => {
    const full = { prompt_tokens: 15, completion_tokens: 6, total_tokens: 21, prompt_tokens_details: { cached_tokens: 4 }, cache_creation_input_tokens: 1 };
    const whole = run([start, ...textBlock(0, 'Hi'), ...end('end_turn', 6)]);
    expect(whole.chunks.some((c) => 'usage' in c)).toBe(false);
    expect(whole.usage).toEqual(full);
    // A stream cut after message_start still says what its input cost.
    expect(run([start]).usage?.prompt_tokens).toBe(15);
  });

  test('include_usage: a last chunk with no choices and the mapped, cumulative usage', () => {
    const { chunks } = run([start, ...textBlock(0, 'Hi'), ...end('end_turn', 6)], ctxFor({ stream_options: { include_usage: true } }));
    const last = chunks[chunks.length - 1] as JsonObject;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 15, completion_tokens: 6, total_tokens: 21, prompt_tokens_details: { cached_tokens: 4 }, cache_creation_input_tokens: 1 });
    expect(finishes(chunks)).toEqual(['stop']);
  });

  test('a message_delta that repeats input counts (newer API) updates them', () => {
    const { chunks } = run(
      [start, ...textBlock(0, 'Hi'), ['message_delta', { delta: { stop_reason: 'end_turn' }, usage: { input_tokens: 12, output_tokens: 3 } }], ['message_stop', {}]],
      ctxFor({ stream_options: { include_usage: true } }),
    );
    expect((chunks[chunks.length - 1] as JsonObject).usage).toEqual({
      prompt_tokens: 17,
      completion_tokens: 3,
      total_tokens: 20,
      prompt_tokens_details: { cached_tokens: 4 },
      cache_creation_input_tokens: 1,
    });
  });

  test("the 1-hour cache writes of message_start's cache_creation reach the usage, updated by a later message_delta", () => {
    const message = (start[1] as { message: JsonObject }).message;
    const withTtl: Ev = ['message_start', { message: { ...message, usage: { ...(message.usage as JsonObject), cache_creation_input_tokens: 9, cache_creation: { ephemeral_5m_input_tokens: 1, ephemeral_1h_input_tokens: 8 } } } }];
    const { usage } = run([withTtl, ...textBlock(0, 'Hi'), ...end('end_turn', 6)]);
    expect(usage).toEqual({ prompt_tokens: 23, completion_tokens: 6, total_tokens: 29, prompt_tokens_details: { cached_tokens: 4 }, cache_creation_input_tokens: 9, cache_creation: { ephemeral_1h_input_tokens: 8 } });
    const later = run([
      withTtl,
      ['message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2, cache_creation_input_tokens: 11, cache_creation: { ephemeral_1h_input_tokens: 10 } } }],
      ['message_stop', {}],
    ]).usage;
    expect(later?.cache_creation).toEqual({ ephemeral_1h_input_tokens: 10 });
    expect(later?.cache_creation_input_tokens).toBe(11);
  });

  test('finish reasons: max_tokens → length, stop_sequence → stop, refusal → content_filter', () => {
    expect(finishes(run([start, ...textBlock(0, 'x'), ...end('max_tokens')]).chunks)).toEqual(['length']);
    expect(finishes(run([start, ...textBlock(0, 'x'), ...end('stop_sequence')]).chunks)).toEqual(['stop']);
    expect(finishes(run([start, ...textBlock(0, 'x'), ...end('refusal')]).chunks)).toEqual(['content_filter']);
  });

  test('unknown events and deltas are ignored', () => {
    const { chunks, done } = run([
      start,
      ['content_block_start', { index: 0, content_block: { type: 'server_tool_use', id: 's', name: 'web_search', input: {} } }],
      ['content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"q":1}' } }],
      ['content_block_stop', { index: 0 }],
      ['content_block_start', { index: 1, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { index: 1, delta: { type: 'citations_delta', citation: {} } }],
      ['something_new', {}],
      ['content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'ok' } }],
      ...end('end_turn'),
    ]);
    expect(done).toBe(true);
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: '' }, { content: 'ok' }, {}]);
  });

  test('a stream without message_start still opens with the role chunk', () => {
    const { chunks } = run([...textBlock(0, 'Hi'), ...end('end_turn')]);
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: '' }, { content: 'Hi' }, {}]);
    expect(chunks[0]?.model).toBe('asked');
  });
});

describe('anthropicEventToChunks: tool calls', () => {
  test('each call starts with index, id, name and empty arguments, then argument deltas at the same index', () => {
    const { chunks } = run([
      start,
      ...textBlock(0, 'Checking.'),
      ...toolBlock(1, 'toolu_a', 'get_weather', '{"city"', ':"Paris"}'),
      ...toolBlock(2, 'toolu_b', 'get_time', '{"city":', '"Rome"}'),
      ...end('tool_use'),
    ]);
    expect(deltas(chunks)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Checking.' },
      { tool_calls: [{ index: 0, id: 'toolu_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city"' } }] },
      { tool_calls: [{ index: 0, function: { arguments: ':"Paris"}' } }] },
      { tool_calls: [{ index: 1, id: 'toolu_b', type: 'function', function: { name: 'get_time', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '"Rome"}' } }] },
      {},
    ]);
    expect(finishes(chunks)).toEqual(['tool_calls']);
  });

  test('legacy functions: function_call deltas and finish reason function_call', () => {
    const { chunks } = run([start, ...toolBlock(0, 'toolu_a', 'lookup', '{"q"', ':1}'), ...end('tool_use')], ctxFor({ functions: [{ name: 'lookup' }] }));
    expect(deltas(chunks)).toEqual([
      { role: 'assistant', content: '' },
      { function_call: { name: 'lookup', arguments: '' } },
      { function_call: { arguments: '{"q"' } },
      { function_call: { arguments: ':1}' } },
      {},
    ]);
    expect(finishes(chunks)).toEqual(['function_call']);
  });

  test('the JSON-mode tool streams as content, finish reason stop', () => {
    const { chunks } = run([start, ...toolBlock(0, 'toolu_j', JSON_TOOL_NAME, '{"answer"', ':"x"}'), ...end('tool_use')]);
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: '' }, { content: '{"answer"' }, { content: ':"x"}' }, {}]);
    expect(finishes(chunks)).toEqual(['stop']);
  });
});

describe('anthropicEventToChunks: thinking', () => {
  test('strict: thinking deltas are dropped', () => {
    const { chunks } = run([start, ...thinkingBlock, ...textBlock(1, 'Answer'), ...end('end_turn')], ctx(true));
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: '' }, { content: 'Answer' }, {}]);
  });

  test('strict_wire_compliance false: thinking deltas become reasoning_content', () => {
    const { chunks } = run([start, ...thinkingBlock, ...textBlock(1, 'Answer'), ...end('end_turn')], ctx(false));
    expect(deltas(chunks)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'Let me ' },
      { reasoning_content: 'think.' },
      { content: 'Answer' },
      {},
    ]);
  });
});

describe('anthropicEventToChunks: errors', () => {
  test('an error event throws a provider error carrying the message and type', () => {
    const state: StreamState = {};
    anthropicEventToChunks({ event: 'message_start', data: JSON.stringify({ type: 'message_start', ...start[1] }) }, state, ctx());
    let caught: unknown;
    try {
      anthropicEventToChunks({ event: 'error', data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' }, state, ctx());
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GatewayError);
    const err = caught as GatewayError;
    expect(err.message).toBe('Overloaded');
    expect(err.type).toBe('overloaded_error');
    expect(err.status).toBe(529);
    expect(err.toBody().provider).toBe('anthropic');
  });

  test('the provider named in the error can be set (Vertex AI)', () => {
    expect(() =>
      anthropicEventToChunks({ event: 'error', data: '{"type":"error","error":{"type":"api_error","message":"boom"}}' }, {}, ctx(), { provider: 'vertex-ai' }),
    ).toThrow('boom');
    try {
      anthropicEventToChunks({ data: '{"type":"error","error":{"type":"api_error","message":"boom"}}' }, {}, ctx(), { provider: 'vertex-ai' });
    } catch (error) {
      expect((error as GatewayError).toBody().provider).toBe('vertex-ai');
    }
  });

  test('an event that is not JSON throws', () => {
    expect(() => anthropicEventToChunks({ event: 'content_block_delta', data: '{not json' }, {}, ctx())).toThrow();
  });
});
