import { describe, expect, test } from 'bun:test';
import type { JsonObject } from '@gateway/sdk';
import { anthropicErrorBody, anthropicErrorType } from './errors.ts';
import { estimateInputTokens, IMAGE_TOKENS } from './count.ts';
import { chatToMessages, messagesUsageOf, stopReasonOf } from './response.ts';

describe('chatToMessages', () => {
  test('text, thinking and tool calls as content blocks; usage without the cached prompt', () => {
    const message = chatToMessages(
      {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: 'gpt-x',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              reasoning_content: 'Think first.',
              content: 'Checking.',
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
                { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '' } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 30 } },
      },
      'requested',
    );
    expect(message).toEqual({
      id: 'msg_chatcmpl-1',
      type: 'message',
      role: 'assistant',
      model: 'gpt-x',
      content: [
        { type: 'thinking', thinking: 'Think first.', signature: '' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 70, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 30 },
    });
  });

  test('the requested model when the answer names none; an empty answer has no blocks', () => {
    const message = chatToMessages({ choices: [{ message: { role: 'assistant', content: '' }, finish_reason: 'length' }] }, 'asked');
    expect(message).toMatchObject({ model: 'asked', content: [], stop_reason: 'max_tokens' });
    expect(String(message.id)).toStartWith('msg_');
  });

  test('stop reasons', () => {
    expect(['stop', 'length', 'tool_calls', 'function_call', 'content_filter', null].map(stopReasonOf)).toEqual([
      'end_turn',
      'max_tokens',
      'tool_use',
      'tool_use',
      'refusal',
      'end_turn',
    ]);
  });

  test('usage with Anthropic-style cache writes passed on by an adapter', () => {
    expect(messagesUsageOf({ prompt_tokens: 50, completion_tokens: 5, cache_read_input_tokens: 10, cache_creation_input_tokens: 15 })).toEqual({
      input_tokens: 25,
      output_tokens: 5,
      cache_creation_input_tokens: 15,
      cache_read_input_tokens: 10,
    });
  });

  test('not a chat completion: throws (the attempt answers 502)', () => {
    expect(() => chatToMessages({ object: 'list' }, 'm')).toThrow();
  });
});

describe('errors', () => {
  test("gateway and OpenAI error bodies in Anthropic's shape, the type from the status", () => {
    expect(anthropicErrorBody({ error: { message: 'No key', type: 'authentication_error', code: 'unauthorized', param: null } }, 401)).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'No key' },
    });
    expect(anthropicErrorBody({ error: { message: 'Slow down', type: 'requests', code: 'rate_limit_exceeded' } }, 429)).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Slow down' },
    });
    expect(anthropicErrorBody({ error: { message: 'Upstream said no', type: 'server_error' }, provider: 'google' }, 502)).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'Upstream said no' },
      provider: 'google',
    });
    // A guardrail denial's hook_results stay beside it too (docs/anthropic-messages.md, "Errors").
    const hookResults = { before_request_hooks: [{ id: 'no-codenames', verdict: false }], after_request_hooks: [] };
    expect(anthropicErrorBody({ error: { message: 'Denied by a guardrail', type: 'guardrail_denied', code: 'guardrail_denied' }, hook_results: hookResults }, 400)).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'Denied by a guardrail' },
      hook_results: hookResults,
    });
    expect(anthropicErrorBody({ message: 'not an error body' }, 500)).toBeUndefined();
    expect([400, 403, 404, 413, 500, 502, 503, 504, 529, 422].map(anthropicErrorType)).toEqual([
      'invalid_request_error',
      'permission_error',
      'not_found_error',
      'request_too_large',
      'api_error',
      'api_error',
      'api_error',
      'timeout_error',
      'overloaded_error',
      'invalid_request_error',
    ]);
  });
});

describe('count_tokens estimate', () => {
  test('a quarter of the characters read, and a fixed count per image', () => {
    const tools = [{ name: 'get_weather', input_schema: { type: 'object' } }];
    const body: JsonObject = {
      model: 'm',
      system: 'abcd', // 4
      messages: [
        { role: 'user', content: 'efghijkl' }, // 8
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'ab', input: { a: 1 } }] }, // 2 + 7
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'xyz' }] }, { type: 'image', source: {} }] }, // 3 + image
      ],
      tools,
    };
    const chars = 4 + 8 + 2 + '{"a":1}'.length + 3 + JSON.stringify(tools).length;
    expect(estimateInputTokens(body)).toBe(Math.ceil(chars / 4) + IMAGE_TOKENS);
  });
});
