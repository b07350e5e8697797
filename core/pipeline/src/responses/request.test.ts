import { describe, expect, test } from 'bun:test';
import { GatewayError, type JsonObject } from '@gateway/sdk';
import { itemsToMessages, responsesToChat } from './request.ts';

const OPENAI = { translates: false };
const ADAPTER = { translates: true };

function badParam(fn: () => unknown): string | null | undefined {
  try {
    fn();
  } catch (error) {
    return GatewayError.is(error) && error.status === 400 ? error.param : 'not a 400';
  }
  return undefined;
}

describe('Responses request → chat completion', () => {
  test('a string input is one user message; instructions go first as a system message', () => {
    expect(responsesToChat({ model: 'm', instructions: 'Be brief.', input: 'Hi' }, OPENAI)).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
    });
  });

  test('prior items (previous_response_id) come after the instructions and before this input', () => {
    const prior: JsonObject[] = [
      { type: 'message', role: 'user', content: 'First' },
      { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Answer', annotations: [] }] },
    ];
    const chat = responsesToChat({ model: 'm', instructions: 'Now.', input: 'Second' }, { ...OPENAI, prior });
    expect(chat.messages).toEqual([
      { role: 'system', content: 'Now.' },
      { role: 'user', content: 'First' },
      { role: 'assistant', content: 'Answer' },
      { role: 'user', content: 'Second' },
    ]);
  });

  test('function_call items join one assistant message with tool_calls; outputs become tool messages', () => {
    const messages = itemsToMessages([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', id: 'fc_2', call_id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'call_a', output: 'Sunny' },
      { type: 'function_call_output', call_id: 'call_b', output: 'Rain' },
      { type: 'reasoning', id: 'rs_1', summary: [] },
    ]);
    expect(messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'Sunny' },
      { role: 'tool', tool_call_id: 'call_b', content: 'Rain' },
    ]);
  });

  test('content parts: text joined, an image as image_url, developer as system', () => {
    const messages = itemsToMessages([
      { role: 'developer', content: [{ type: 'input_text', text: 'Rules' }] },
      { role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: 'data:image/png;base64,AA==', detail: 'low' }] },
    ]);
    expect(messages).toEqual([
      { role: 'system', content: 'Rules' },
      { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==', detail: 'low' } }] },
    ]);
  });

  test('function tools, tool_choice, sampling, max_output_tokens, text.format, stream with usage', () => {
    const chat = responsesToChat(
      {
        model: 'm',
        input: 'x',
        tools: [{ type: 'function', name: 'f', description: 'd', parameters: { type: 'object' }, strict: true }],
        tool_choice: { type: 'function', name: 'f' },
        parallel_tool_calls: false,
        temperature: 0.5,
        top_p: 0.9,
        user: 'u1',
        max_output_tokens: 100,
        text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
        stream: true,
        store: true,
        metadata: { a: 'b' },
        truncation: 'disabled',
      },
      OPENAI,
    );
    expect(chat).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 100,
      temperature: 0.5,
      top_p: 0.9,
      user: 'u1',
      tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  test('reasoning: reasoning_effort for an OpenAI-speaking server, the thinking extension for a translating adapter', () => {
    expect(responsesToChat({ model: 'm', input: 'x', reasoning: { effort: 'low' }, max_output_tokens: 50 }, OPENAI)).toMatchObject({
      reasoning_effort: 'low',
      max_completion_tokens: 50,
    });
    expect(responsesToChat({ model: 'm', input: 'x', reasoning: { effort: 'high' } }, ADAPTER)).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 24576 } });
  });

  test('what has no chat equivalent is a 400 naming the field', () => {
    expect(badParam(() => responsesToChat({ model: 'm', input: 'x', tools: [{ type: 'file_search', vector_store_ids: ['v'] }] }, OPENAI))).toBe('tools[0].type');
    expect(badParam(() => responsesToChat({ model: 'm', input: [{ type: 'item_reference', id: 'x' }] }, OPENAI))).toBe('input[0].type');
    expect(badParam(() => responsesToChat({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] }, OPENAI))).toBe('input[0].content[0].image_url');
    expect(badParam(() => responsesToChat({ model: 'm', input: [{ role: 'tool', content: 'x' }] }, OPENAI))).toBe('input[0].role');
    expect(badParam(() => responsesToChat({ model: 'm', input: 'x', text: { format: { type: 'yaml' } } }, OPENAI))).toBe('text.format.type');
  });
});
