import { describe, expect, test } from 'bun:test';
import { chatToResponse, type ResponseFrame } from './response.ts';

const frame = (body: Record<string, unknown> = {}): ResponseFrame => ({ id: 'resp_1', createdAt: 1700000000, body: { model: 'm', input: 'x', ...body } });

describe('chat completion → Response', () => {
  test('text, usage with cached and reasoning tokens, the request fields echoed', () => {
    const res = chatToResponse(
      {
        id: 'chatcmpl-1',
        model: 'claude-x',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14, prompt_tokens_details: { cached_tokens: 2 }, completion_tokens_details: { reasoning_tokens: 1 } },
      },
      frame({ instructions: 'Be brief.', metadata: { a: 'b' }, temperature: 0.2, previous_response_id: 'resp_0' }),
    );
    expect(res).toMatchObject({
      id: 'resp_1',
      object: 'response',
      created_at: 1700000000,
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: 'Be brief.',
      model: 'claude-x',
      metadata: { a: 'b' },
      temperature: 0.2,
      top_p: 1,
      previous_response_id: 'resp_0',
      truncation: 'disabled',
      tool_choice: 'auto',
      usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 2 }, output_tokens: 4, output_tokens_details: { reasoning_tokens: 1 }, total_tokens: 14 },
    });
    expect(res.output).toEqual([{ id: expect.stringMatching(/^msg_[0-9a-f]{48}$/), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello', annotations: [] }] }]);
  });

  test('tool calls become function_call items with the provider call id; reasoning a reasoning item first', () => {
    const res = chatToResponse(
      {
        model: 'm',
        choices: [
          {
            message: {
              role: 'assistant',
              content: null,
              reasoning_content: 'Thinking',
              tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
      frame(),
    );
    expect(res.output).toEqual([
      { id: expect.stringMatching(/^rs_/), type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking' }] },
      { id: expect.stringMatching(/^fc_/), type: 'function_call', status: 'completed', call_id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    ]);
    expect(res.status).toBe('completed');
  });

  test('cut by the token limit: incomplete, reason max_output_tokens', () => {
    const res = chatToResponse({ choices: [{ message: { content: 'Par' }, finish_reason: 'length' }] }, frame({ max_output_tokens: 1 }));
    expect(res.status).toBe('incomplete');
    expect(res.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(res.max_output_tokens).toBe(1);
  });
});
