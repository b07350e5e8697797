import { describe, expect, test } from 'bun:test';
import { GatewayError, type JsonObject, type TranslateContext } from '@gateway/sdk';
import { chatRequest, chatResponse, finishReason, usageOf, wantsUsageChunk } from './chat.ts';

const ctx = (over: Partial<TranslateContext> = {}): TranslateContext => ({
  endpoint: 'chatComplete',
  model: 'command-a-03-2025',
  strictWireCompliance: true,
  now: 1_700_000_000,
  ...over,
});
const translate = (body: JsonObject, c = ctx()) => chatRequest(body, {}, c);
const base = (extra: JsonObject = {}): JsonObject => ({ model: 'command-a-03-2025', messages: [{ role: 'user', content: 'Hi' }], ...extra });

function badRequest(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(400);
    return error as GatewayError;
  }
  throw new Error('expected a 400');
}

describe('chatRequest: messages', () => {
  test('system and developer messages become system messages; user text stays a string', () => {
    const out = translate({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief' },
        { role: 'developer', content: [{ type: 'text', text: 'Be kind' }] },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(out.messages).toEqual([
      { role: 'system', content: 'Be brief' },
      { role: 'system', content: [{ type: 'text', text: 'Be kind' }] },
      { role: 'user', content: 'Hi' },
    ]);
    expect(out.model).toBe('m');
  });

  test('text and image parts become Cohere content items (data URLs and detail kept, string image_url accepted)', () => {
    const out = translate(base({
      messages: [{
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
          { type: 'image_url', image_url: 'https://example.com/cat.png' },
        ],
      }],
    }));
    expect(out.messages).toEqual([{
      role: 'user',
      content: [
        { type: 'text', text: 'Look' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      ],
    }]);
  });

  test('content parts Cohere cannot take are refused with the part named', () => {
    const err = badRequest(() => translate(base({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] })));
    expect(err.message).toContain('messages[0].content[0]');
    expect(err.message).toContain('input_audio');
    badRequest(() => translate(base({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] })));
    badRequest(() => translate(base({ messages: [{ role: 'critic', content: 'x' }] })));
  });

  test('an assistant turn with tool calls: calls kept, its text becomes tool_plan; tool results are text items', () => {
    const out = translate(base({
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: { city: 'Rome' } } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '10:00' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Done' }] },
      ],
    }));
    expect(out.messages).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        tool_plan: 'Let me check.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '18C' }] },
      { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '10:00' }] },
      { role: 'assistant', content: 'Done' },
    ]);
  });

  test('an assistant turn with tool calls and no text carries no tool_plan; a tool message needs its call id', () => {
    const out = translate(base({
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      ],
    }));
    expect((out.messages as JsonObject[])[1]).toEqual({ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] });
    badRequest(() => translate(base({ messages: [{ role: 'tool', content: 'x' }] })));
  });

  test('the deprecated function_call / function messages become a tool call and its result', () => {
    const out = translate(base({
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { role: 'function', name: 'get_weather', content: '18C' },
      ],
    }));
    const [, call, result] = out.messages as JsonObject[];
    expect(call).toEqual({ role: 'assistant', tool_calls: [{ id: 'function_call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] });
    expect(result).toEqual({ role: 'tool', tool_call_id: 'function_call_1', content: [{ type: 'text', text: '18C' }] });
  });
});

describe('chatRequest: tools and tool_choice', () => {
  const weather = { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } } };
  const time = { type: 'function', function: { name: 'get_time', parameters: { type: 'object' }, strict: true } };

  test('tools keep the function form; auto sends no tool_choice', () => {
    const out = translate(base({ tools: [weather], tool_choice: 'auto' }));
    expect(out.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } } }]);
    expect(out.tool_choice).toBeUndefined();
    expect(out.strict_tools).toBeUndefined();
  });

  test('required → REQUIRED, none → NONE, a named tool → REQUIRED over that tool alone', () => {
    expect(translate(base({ tools: [weather], tool_choice: 'required' })).tool_choice).toBe('REQUIRED');
    expect(translate(base({ tools: [weather], tool_choice: 'none' })).tool_choice).toBe('NONE');
    const named = translate(base({ tools: [weather, time], tool_choice: { type: 'function', function: { name: 'get_time' } } }));
    expect(named.tool_choice).toBe('REQUIRED');
    expect((named.tools as JsonObject[]).map((t) => (t.function as JsonObject).name)).toEqual(['get_time']);
    badRequest(() => translate(base({ tools: [weather], tool_choice: { type: 'function', function: { name: 'nope' } } })));
    badRequest(() => translate(base({ tool_choice: 'required' })));
    expect(translate(base({ tool_choice: 'none' })).tool_choice).toBeUndefined();
  });

  test('a strict tool asks for strict_tools; deprecated functions / function_call are tools too', () => {
    expect(translate(base({ tools: [weather, time] })).strict_tools).toBe(true);
    const out = translate(base({ functions: [{ name: 'get_weather', parameters: { type: 'object' } }], function_call: { name: 'get_weather' } }));
    expect(out.tools).toEqual([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }]);
    expect(out.tool_choice).toBe('REQUIRED');
  });

  test('non-function tools are refused', () => {
    badRequest(() => translate(base({ tools: [{ type: 'custom', custom: { name: 'x' } }] })));
  });
});

describe('chatRequest: parameters', () => {
  test('JSON mode and JSON schema become Cohere response formats', () => {
    expect(translate(base({ response_format: { type: 'json_object' } })).response_format).toEqual({ type: 'json_object' });
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(translate(base({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema, strict: true } } })).response_format)
      .toEqual({ type: 'json_object', json_schema: schema });
    expect(translate(base({ response_format: { type: 'text' } })).response_format).toEqual({ type: 'text' });
  });

  test('stop, max tokens, temperature, top_p, seed and penalties under Cohere names and ranges', () => {
    const out = translate(base({ stop: 'END', max_tokens: 10, temperature: 0.4, top_p: 0.9, seed: 7, frequency_penalty: 0.5, presence_penalty: -1 }));
    expect(out).toMatchObject({ stop_sequences: ['END'], max_tokens: 10, temperature: 0.4, p: 0.9, seed: 7, frequency_penalty: 0.5, presence_penalty: 0 });
    expect(out.stop).toBeUndefined();
    expect(out.top_p).toBeUndefined();
    expect(translate(base({ stop: ['a', 'b'] })).stop_sequences).toEqual(['a', 'b']);
    expect(translate(base({ max_tokens: 10, max_completion_tokens: 20 })).max_tokens).toBe(20);
    expect(translate(base({ top_p: 1 })).p).toBe(0.99);
    expect(translate(base({ top_p: 0 })).p).toBe(0.01);
    expect(translate(base({ frequency_penalty: 2 })).frequency_penalty).toBe(1);
  });

  test('null means absent; n other than 1 is refused; Cohere-native fields and thinking go on', () => {
    const out = translate(base({ stop: null, temperature: null, n: 1, k: 40, safety_mode: 'STRICT', thinking: { type: 'enabled', budget_tokens: 512 } }));
    expect(out.stop_sequences).toBeUndefined();
    expect(out.temperature).toBeUndefined();
    expect(out.n).toBeUndefined();
    expect(out).toMatchObject({ k: 40, safety_mode: 'STRICT', thinking: { type: 'enabled', token_budget: 512 } });
    expect(badRequest(() => translate(base({ n: 2 }))).param).toBe('n');
  });

  test('OpenAI-only fields are not sent (logprobs, user, stream_options, parallel_tool_calls…)', () => {
    const out = translate(base({ logprobs: true, top_logprobs: 2, user: 'u', logit_bias: { 1: 2 }, parallel_tool_calls: false, store: true }));
    expect(Object.keys(out).sort()).toEqual(['messages', 'model']);
  });

  test('stream and include_usage: stream: true goes out; include_usage is remembered for the answer only', () => {
    const c = ctx();
    const out = translate(base({ stream: true, stream_options: { include_usage: true } }), c);
    expect(out.stream).toBe(true);
    expect(out.stream_options).toBeUndefined();
    expect(wantsUsageChunk(c)).toBe(true);
    const c2 = ctx();
    translate(base({ stream: true }), c2);
    expect(wantsUsageChunk(c2)).toBe(false);
    expect(wantsUsageChunk(ctx())).toBe(false);
  });

  test('pure: the OpenAI body is never changed, and the same body translates the same way twice', () => {
    const body = base({
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      messages: [{ role: 'developer', content: 'x' }, { role: 'user', content: [{ type: 'text', text: 'y' }] }],
      stop: 'END',
    });
    const before = structuredClone(body);
    const first = translate(body);
    expect(body).toEqual(before);
    expect(translate(body)).toEqual(first);
  });
});

describe('chatResponse', () => {
  test('text items joined into content; id kept; created and model from the context; usage from tokens, not billed units', () => {
    const out = chatResponse({
      id: 'abc',
      message: { role: 'assistant', content: [{ type: 'text', text: 'Hello ' }, { type: 'text', text: 'there' }] },
      finish_reason: 'COMPLETE',
      usage: { billed_units: { input_tokens: 1, output_tokens: 2 }, tokens: { input_tokens: 60, output_tokens: 2 } },
    }, ctx());
    expect(out).toEqual({
      id: 'abc',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'command-a-03-2025',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 60, completion_tokens: 2, total_tokens: 62 },
    });
  });

  test('tool calls in OpenAI shape, with the tool plan as content', () => {
    const out = chatResponse({
      id: 'x',
      message: {
        role: 'assistant',
        tool_plan: 'I will check.',
        tool_calls: [{ id: 'get_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      finish_reason: 'TOOL_CALL',
      usage: { tokens: { input_tokens: 3, output_tokens: 5 } },
    }, ctx());
    const choice = (out.choices as JsonObject[])[0] as JsonObject;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message).toEqual({
      role: 'assistant',
      content: 'I will check.',
      refusal: null,
      tool_calls: [{ id: 'get_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
    });
  });

  test('tool calls without a plan have null content; no usage reads as zeros', () => {
    const out = chatResponse({ message: { tool_calls: [{ id: 'a', function: { name: 'f', arguments: {} } }] }, finish_reason: 'TOOL_CALL' }, ctx());
    const message = ((out.choices as JsonObject[])[0] as JsonObject).message as JsonObject;
    expect(message.content).toBeNull();
    expect((message.tool_calls as JsonObject[])[0]).toEqual({ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } });
    expect(out.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  test('thinking shows as reasoning_content only when strict wire compliance is off', () => {
    const json = { message: { content: [{ type: 'thinking', thinking: 'Hmm.' }, { type: 'text', text: 'Yes' }] }, finish_reason: 'COMPLETE' };
    const strict = ((chatResponse(json, ctx()).choices as JsonObject[])[0] as JsonObject).message as JsonObject;
    expect(strict).toEqual({ role: 'assistant', content: 'Yes', refusal: null });
    const loose = ((chatResponse(json, ctx({ strictWireCompliance: false })).choices as JsonObject[])[0] as JsonObject).message as JsonObject;
    expect(loose.reasoning_content).toBe('Hmm.');
  });

  test('finish reasons: COMPLETE/STOP_SEQUENCE → stop, MAX_TOKENS → length, TOOL_CALL → tool_calls; ERROR/TIMEOUT fail', () => {
    expect(finishReason('COMPLETE')).toBe('stop');
    expect(finishReason('STOP_SEQUENCE')).toBe('stop');
    expect(finishReason('MAX_TOKENS')).toBe('length');
    expect(finishReason('TOOL_CALL')).toBe('tool_calls');
    expect(() => finishReason('ERROR', 'boom')).toThrow('ERROR: boom');
    expect(() => finishReason('TIMEOUT')).toThrow('TIMEOUT');
    expect(() => finishReason(undefined)).toThrow('finish_reason');
  });

  test('an answer that is not a Cohere chat answer throws (the core makes it a 502)', () => {
    expect(() => chatResponse({ id: 'x' }, ctx())).toThrow();
    expect(() => chatResponse([1, 2], ctx())).toThrow();
    expect(() => chatResponse({ message: { tool_calls: [{ id: 'a' }] }, finish_reason: 'TOOL_CALL' }, ctx())).toThrow('tool_calls[0]');
  });

  test('usageOf ignores billed units entirely', () => {
    expect(usageOf({ billed_units: { input_tokens: 5, output_tokens: 5 } })).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });
});
