import { describe, expect, test } from 'bun:test';
import type { JsonObject, TranslateContext } from '@gateway/sdk';
import { toAnthropicRequest } from './request.ts';
import { fromAnthropicModelList, fromAnthropicResponse, toFinishReason, toOpenAIUsage } from './response.ts';
import { JSON_TOOL_NAME } from './shared.ts';

const ctx = (strictWireCompliance = true): TranslateContext => ({ endpoint: 'chatComplete', model: 'asked-model', strictWireCompliance, now: 1700000000 });
const usage = { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
const message = (content: JsonObject[], stop_reason = 'end_turn', extra: JsonObject = {}): JsonObject => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content,
  stop_reason,
  stop_sequence: null,
  usage,
  ...extra,
});

describe('fromAnthropicResponse', () => {
  test('a text answer: OpenAI shape, Anthropic id and model, created from the context', () => {
    expect(fromAnthropicResponse(message([{ type: 'text', text: 'Hello' }, { type: 'text', text: ' world' }]), ctx())).toEqual({
      id: 'msg_1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'claude-sonnet-4-5',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello world', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 0 } },
    });
  });

  test('tool_use blocks → tool_calls with JSON arguments, finish reason tool_calls, content null without text', () => {
    const out = fromAnthropicResponse(
      message(
        [
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: { city: 'Rome' } },
        ],
        'tool_use',
      ),
      ctx(),
    );
    const choice = (out.choices as JsonObject[])[0] as JsonObject;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message).toEqual({
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [
        { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '{"city":"Rome"}' } },
      ],
    });
  });

  test('text before a tool call is kept as content', () => {
    const out = fromAnthropicResponse(message([{ type: 'text', text: 'Let me check.' }, { type: 'tool_use', id: 't', name: 'f', input: {} }], 'tool_use'), ctx());
    expect(((out.choices as JsonObject[])[0]?.message as JsonObject).content).toBe('Let me check.');
  });

  test('the JSON-mode tool call is the content, with finish reason stop', () => {
    const out = fromAnthropicResponse(message([{ type: 'tool_use', id: 't', name: JSON_TOOL_NAME, input: { answer: 'Give JSON' } }], 'tool_use'), ctx());
    const choice = (out.choices as JsonObject[])[0] as JsonObject;
    expect(choice.message).toEqual({ role: 'assistant', content: '{"answer":"Give JSON"}', refusal: null });
    expect(choice.finish_reason).toBe('stop');
  });

  test('legacy functions: the call comes back as function_call, finish reason function_call', () => {
    const c = ctx();
    toAnthropicRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], functions: [{ name: 'lookup' }] }, {}, c);
    const out = fromAnthropicResponse(message([{ type: 'tool_use', id: 't', name: 'lookup', input: { q: 1 } }], 'tool_use'), c);
    const choice = (out.choices as JsonObject[])[0] as JsonObject;
    expect(choice.message).toEqual({ role: 'assistant', content: null, refusal: null, function_call: { name: 'lookup', arguments: '{"q":1}' } });
    expect(choice.finish_reason).toBe('function_call');
  });

  const thinking = message([
    { type: 'thinking', thinking: 'Pondering.', signature: 'sig' },
    { type: 'redacted_thinking', data: 'enc' },
    { type: 'text', text: 'Answer' },
  ]);

  test('thinking, strict: dropped', () => {
    const msg = ((fromAnthropicResponse(thinking, ctx(true)).choices as JsonObject[])[0] as JsonObject).message as JsonObject;
    expect(msg).toEqual({ role: 'assistant', content: 'Answer', refusal: null });
  });

  test('thinking, not strict: reasoning_content, and content_blocks carrying the signatures', () => {
    const msg = ((fromAnthropicResponse(thinking, ctx(false)).choices as JsonObject[])[0] as JsonObject).message as JsonObject;
    expect(msg.content).toBe('Answer');
    expect(msg.reasoning_content).toBe('Pondering.');
    expect(msg.content_blocks).toEqual([
      { type: 'thinking', thinking: 'Pondering.', signature: 'sig' },
      { type: 'redacted_thinking', data: 'enc' },
      { type: 'text', text: 'Answer' },
    ]);
  });

  test('model falls back to the asked one', () => {
    const { model: _m, ...rest } = message([{ type: 'text', text: 'x' }]);
    expect(fromAnthropicResponse(rest, ctx()).model).toBe('asked-model');
  });

  test('anything that is not a message throws (the core answers 502 upstream_invalid_response)', () => {
    for (const bad of [null, 'text', [], {}, { type: 'message', content: 'x' }, { type: 'error', error: { type: 'x', message: 'y' }, content: [] }, message(['x' as unknown as JsonObject])])
      expect(() => fromAnthropicResponse(bad, ctx())).toThrow();
    expect(() => fromAnthropicResponse(message([{ type: 'tool_use', id: 't', input: {} }]), ctx())).toThrow('no name');
  });
});

describe('toFinishReason', () => {
  test('every stop reason', () => {
    expect(toFinishReason('end_turn')).toBe('stop');
    expect(toFinishReason('stop_sequence')).toBe('stop');
    expect(toFinishReason('pause_turn')).toBe('stop');
    expect(toFinishReason('max_tokens')).toBe('length');
    expect(toFinishReason('model_context_window_exceeded')).toBe('length');
    expect(toFinishReason('tool_use')).toBe('tool_calls');
    expect(toFinishReason('refusal')).toBe('content_filter');
    expect(toFinishReason(null)).toBeNull();
    expect(toFinishReason('something_new')).toBe('stop');
  });

  test('in an answer: max_tokens → length, stop_sequence → stop', () => {
    const finish = (reason: string) => ((fromAnthropicResponse(message([{ type: 'text', text: 'x' }], reason), ctx()).choices as JsonObject[])[0] as JsonObject).finish_reason;
    expect(finish('max_tokens')).toBe('length');
    expect(finish('stop_sequence')).toBe('stop');
  });
});

describe('toOpenAIUsage', () => {
  test('prompt = input + cache reads + cache writes; cached_tokens = cache reads; cache writes kept beside', () => {
    expect(toOpenAIUsage({ input_tokens: 7, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 9 })).toEqual({
      prompt_tokens: 127,
      completion_tokens: 9,
      total_tokens: 136,
      prompt_tokens_details: { cached_tokens: 100 },
      cache_creation_input_tokens: 20,
    });
  });

  test('the cache writes made for an hour are kept as Anthropic names them (they cost more than 5-minute writes)', () => {
    const cache_creation = { ephemeral_5m_input_tokens: 5, ephemeral_1h_input_tokens: 15 };
    expect(toOpenAIUsage({ input_tokens: 7, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, cache_creation, output_tokens: 9 })).toEqual({
      prompt_tokens: 127,
      completion_tokens: 9,
      total_tokens: 136,
      prompt_tokens_details: { cached_tokens: 100 },
      cache_creation_input_tokens: 20,
      cache_creation: { ephemeral_1h_input_tokens: 15 },
    });
    // Only 5-minute writes: nothing more than before.
    expect(toOpenAIUsage({ input_tokens: 1, cache_creation_input_tokens: 5, cache_creation: { ephemeral_5m_input_tokens: 5, ephemeral_1h_input_tokens: 0 } }).cache_creation).toBeUndefined();
  });

  test('missing fields count as zero', () => {
    expect(toOpenAIUsage(undefined)).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, prompt_tokens_details: { cached_tokens: 0 } });
    expect(toOpenAIUsage({ input_tokens: 3, output_tokens: 1 }).total_tokens).toBe(4);
  });
});

describe('fromAnthropicModelList', () => {
  test("Anthropic's list → OpenAI's", () => {
    expect(
      fromAnthropicModelList({
        data: [{ type: 'model', id: 'claude-a', display_name: 'A', created_at: '2025-02-19T00:00:00Z' }, { type: 'model', id: 'claude-b' }],
        has_more: false,
        first_id: 'claude-a',
        last_id: 'claude-b',
      }),
    ).toEqual({
      object: 'list',
      data: [
        { id: 'claude-a', object: 'model', created: 1739923200, owned_by: 'anthropic' },
        { id: 'claude-b', object: 'model', created: 0, owned_by: 'anthropic' },
      ],
    });
    expect(() => fromAnthropicModelList({ models: [] })).toThrow();
  });
});
