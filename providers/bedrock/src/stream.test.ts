import { describe, expect, test } from 'bun:test';
import { GatewayError, type JsonObject, type StreamState, type TranslateContext } from '@gateway/sdk';
import { JSON_TOOL } from './chat.ts';
import { converseStreamChunks } from './stream.ts';

const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const ctx = (extra: Partial<TranslateContext> = {}): TranslateContext => ({ endpoint: 'chatComplete', model: MODEL, strictWireCompliance: true, now: 42, ...extra });
const ev = (event: string, payload: unknown) => ({ event, data: JSON.stringify(payload) });

/** Runs events through one stream state; returns every chunk, and whether (and when) `done` came. */
function run(events: { event?: string; data: string }[], c = ctx()) {
  const state: StreamState = {};
  const chunks: JsonObject[] = [];
  let doneAt = -1;
  /** The last usage the adapter recorded for the completion. */
  let usage: JsonObject | undefined;
  events.forEach((e, i) => {
    const out = converseStreamChunks(e, state, c);
    chunks.push(...out.chunks);
    if (out.done) doneAt = i;
    if (out.usage) usage = out.usage;
  });
  return { chunks, doneAt, usage, deltas: chunks.map((c) => ((c.choices as JsonObject[])[0] as JsonObject | undefined)?.delta) };
}

const text = [
  ev('messageStart', { p: 'abc', role: 'assistant' }),
  ev('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello ' }, p: 'x' }),
  ev('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'world' } }),
  ev('contentBlockStop', { contentBlockIndex: 0 }),
  ev('messageStop', { stopReason: 'end_turn' }),
  ev('metadata', { usage: { inputTokens: 4, outputTokens: 2, totalTokens: 8, cacheReadInputTokens: 2 }, metrics: { latencyMs: 5 }, p: 'pp' }),
];

describe('ConverseStream → OpenAI chunks', () => {
  test('without include_usage no chunk carries usage, but the metadata usage is recorded for the completion', () => {
    const asked = run(text, ctx({ body: { model: MODEL, messages: [], stream: true, stream_options: { include_usage: true } } }));
    const quiet = run(text, ctx({ body: { model: MODEL, messages: [], stream: true } }));
    expect(quiet.chunks.some((c) => 'usage' in c)).toBe(false);
    expect(quiet.usage).toEqual(asked.chunks.at(-1)?.usage as JsonObject);
    expect(quiet.usage?.total_tokens).toBe(8);
  });

  test('text: role first, content pieces, finish chunk, usage chunk, done at metadata', () => {
    const c = ctx({ body: { model: MODEL, messages: [], stream: true, stream_options: { include_usage: true } } });
    const { chunks, doneAt, deltas } = run(text, c);
    expect(deltas.slice(0, 4)).toEqual([{ role: 'assistant', content: '' }, { content: 'Hello ' }, { content: 'world' }, {}]);
    expect(chunks[0]).toEqual({ id: expect.stringMatching(/^chatcmpl-/), object: 'chat.completion.chunk', created: 42, model: MODEL, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    expect(((chunks[3] as JsonObject).choices as JsonObject[])[0]?.finish_reason).toBe('stop');
    expect(chunks[4]).toEqual({
      id: chunks[0]?.id as string,
      object: 'chat.completion.chunk',
      created: 42,
      model: MODEL,
      choices: [],
      usage: { prompt_tokens: 6, completion_tokens: 2, total_tokens: 8, prompt_tokens_details: { cached_tokens: 2 } },
    });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(doneAt).toBe(text.length - 1);
  });

  test('no usage chunk when the client did not ask for it', () => {
    for (const body of [{ stream: true }, { stream: true, stream_options: { include_usage: false } }] as JsonObject[]) {
      const { chunks, doneAt } = run(text, ctx({ body: { model: MODEL, messages: [], ...body } }));
      expect(chunks.some((ch) => 'usage' in ch)).toBe(false);
      expect(doneAt).toBe(text.length - 1);
    }
  });

  test('tool calls: a start chunk with id and name, then argument deltas, finish tool_calls', () => {
    const { deltas, chunks } = run([
      ev('messageStart', { role: 'assistant' }),
      ev('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Checking.' } }),
      ev('contentBlockStop', { contentBlockIndex: 0 }),
      ev('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tooluse_a', name: 'get_weather' } } }),
      ev('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":' } } }),
      ev('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '"Paris"}' } } }),
      ev('contentBlockStop', { contentBlockIndex: 1 }),
      ev('contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tooluse_b', name: 'get_time' } } }),
      ev('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{}' } } }),
      ev('messageStop', { stopReason: 'tool_use' }),
      ev('metadata', { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }),
    ]);
    expect(deltas.slice(1, 7)).toEqual([
      { content: 'Checking.' },
      { tool_calls: [{ index: 0, id: 'tooluse_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      { tool_calls: [{ index: 1, id: 'tooluse_b', type: 'function', function: { name: 'get_time', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
    ]);
    expect(((chunks[7] as JsonObject).choices as JsonObject[])[0]?.finish_reason).toBe('tool_calls');
  });

  test('JSON mode: the JSON tool input streams as content, finish stop', () => {
    const { deltas, chunks } = run([
      ev('messageStart', { role: 'assistant' }),
      ev('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't', name: JSON_TOOL } } }),
      ev('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{"answer"' } } }),
      ev('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: ':"x"}' } } }),
      ev('messageStop', { stopReason: 'tool_use' }),
      ev('metadata', { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }),
    ]);
    expect(deltas.slice(1, 3)).toEqual([{ content: '{"answer"' }, { content: ':"x"}' }]);
    expect(((chunks[3] as JsonObject).choices as JsonObject[])[0]?.finish_reason).toBe('stop');
  });

  test('reasoning deltas only when strict wire compliance is off', () => {
    const events = [ev('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'hmm' } } })];
    expect(run(events).chunks).toEqual([]);
    expect(run(events, ctx({ strictWireCompliance: false })).deltas).toEqual([{ reasoning_content: 'hmm' }]);
  });

  test('finish reasons: max_tokens → length, guardrail → content_filter', () => {
    const finish = (stopReason: string) => ((run([ev('messageStop', { stopReason })]).chunks[0]?.choices as JsonObject[])[0] as JsonObject).finish_reason;
    expect(finish('max_tokens')).toBe('length');
    expect(finish('guardrail_intervened')).toBe('content_filter');
    expect(finish('stop_sequence')).toBe('stop');
  });

  test('unknown events are ignored; the answer is not done without metadata', () => {
    const { chunks, doneAt } = run([ev('somethingNew', { a: 1 }), ev('messageStop', { stopReason: 'end_turn' })]);
    expect(chunks).toHaveLength(1);
    expect(doneAt).toBe(-1);
  });

  test('an exception event throws a provider error with its status and message', () => {
    let caught: unknown;
    try {
      run([ev('messageStart', { role: 'assistant' }), { event: 'throttlingException', data: '{"message":"Too many tokens"}' }]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GatewayError);
    expect(caught).toMatchObject({ status: 429, message: 'Too many tokens', code: 'ThrottlingException', extra: { provider: 'bedrock' } });
    expect(() => run([{ event: 'modelStreamErrorException', data: 'not json' }])).toThrow('not json');
    expect(() => run([{ event: 'internalServerException', data: '{}' }])).toThrow('internalServerException');
  });

  test('payloads that are not what the format promises throw', () => {
    expect(() => run([{ event: 'contentBlockDelta', data: 'not json' }])).toThrow('not JSON');
    expect(() => run([ev('contentBlockDelta', [1, 2])])).toThrow('not an object');
    expect(() => run([ev('contentBlockDelta', { delta: { text: 'x' } })])).toThrow('contentBlockIndex');
    expect(() => run([ev('contentBlockDelta', { contentBlockIndex: 0 })])).toThrow('without a delta');
    expect(() => run([ev('contentBlockDelta', { contentBlockIndex: 3, delta: { toolUse: { input: '{}' } } })])).toThrow('never started');
    expect(() => run([ev('messageStop', {})])).toThrow('stopReason');
    expect(() => run([ev('metadata', { usage: { inputTokens: -1, outputTokens: 0 } })])).toThrow('token count');
  });
});
