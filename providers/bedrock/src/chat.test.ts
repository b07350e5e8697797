import { describe, expect, test } from 'bun:test';
import type { JsonObject, TranslateContext } from '@gateway/sdk';
import { converseRequest, converseResponse, finishReason, JSON_TOOL, usageOf } from './chat.ts';

const ctx = (extra: Partial<TranslateContext> = {}): TranslateContext => ({
  endpoint: 'chatComplete',
  model: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
  strictWireCompliance: true,
  now: 1_700_000_000,
  ...extra,
});
const CLAUDE = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const LLAMA = 'meta.llama3-1-70b-instruct-v1:0';
const req = (body: JsonObject) => converseRequest({ model: CLAUDE, ...body });
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const weather = { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

describe('converseRequest: messages', () => {
  test('system and developer messages become system blocks; user and assistant text become turns', () => {
    const out = req({
      messages: [
        { role: 'system', content: 'Be brief' },
        { role: 'developer', content: [{ type: 'text', text: 'Be kind' }] },
        { role: 'user', content: 'One' },
        { role: 'assistant', content: 'Two' },
        { role: 'user', content: 'Three' },
      ],
    });
    expect(out).toEqual({
      system: [{ text: 'Be brief' }, { text: 'Be kind' }],
      messages: [
        { role: 'user', content: [{ text: 'One' }] },
        { role: 'assistant', content: [{ text: 'Two' }] },
        { role: 'user', content: [{ text: 'Three' }] },
      ],
    });
    // Never model or stream in the body: the model is in the path.
    expect(out.model).toBeUndefined();
  });

  test('images: data URLs become image blocks with raw base64 bytes; other URLs are refused', () => {
    const out = req({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
      ],
    });
    expect(out.messages).toEqual([{ role: 'user', content: [{ text: 'Look' }, { image: { format: 'png', source: { bytes: PNG } } }] }]);
    const jpeg = req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/jpg;base64,AAAA' } }] }] });
    expect((jpeg.messages as JsonObject[])[0]).toEqual({ role: 'user', content: [{ image: { format: 'jpeg', source: { bytes: 'AAAA' } } }] });
    expect(() => req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] })).toThrow('base64 data URL');
    expect(() => req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AAAA' } }] }] })).toThrow('image/tiff');
    expect(() => req({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] })).toThrow('not supported');
  });

  test('file parts with inline data become document blocks with a valid name', () => {
    const out = req({
      messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'Q3 report (final).v2.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }] }],
    });
    expect(out.messages).toEqual([{ role: 'user', content: [{ document: { format: 'pdf', name: 'Q3 report (final)-v2', source: { bytes: 'JVBERi0=' } } }] }]);
  });

  test('assistant tool calls become toolUse blocks; tool results become one user turn of toolResult blocks', () => {
    const out = req({
      tools: [weather],
      messages: [
        { role: 'user', content: 'Weather in both?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call.2:x', type: 'function', function: { name: 'get_weather', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C' },
        { role: 'tool', tool_call_id: 'call.2:x', content: [{ type: 'text', text: '21C' }] },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(out.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in both?' }] },
      {
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } },
          { toolUse: { toolUseId: 'call_2_x', name: 'get_weather', input: {} } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'call_1', content: [{ text: '18C' }] } },
          { toolResult: { toolUseId: 'call_2_x', content: [{ text: '21C' }] } },
          { text: 'Thanks' },
        ],
      },
    ]);
  });

  test('assistant text beside tool calls is kept; blank text is dropped (Bedrock refuses blank blocks)', () => {
    const out = req({
      tools: [weather],
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Let me check.', tool_calls: [{ id: 'c', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c', content: 'ok' },
        { role: 'assistant', content: '  ' },
      ],
    });
    expect((out.messages as JsonObject[])[1]).toEqual({
      role: 'assistant',
      content: [{ text: 'Let me check.' }, { toolUse: { toolUseId: 'c', name: 'get_weather', input: {} } }],
    });
    expect(out.messages as JsonObject[]).toHaveLength(3);
  });

  test('legacy function messages map to toolUse / toolResult with a shared id', () => {
    const out = req({
      functions: [weather.function],
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        { role: 'function', name: 'get_weather', content: 'sunny' },
      ],
    });
    expect(out.messages).toEqual([
      { role: 'user', content: [{ text: 'Hi' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'function_get_weather', name: 'get_weather', input: { city: 'Rome' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'function_get_weather', content: [{ text: 'sunny' }] } }] },
    ]);
    expect((out.toolConfig as JsonObject).tools).toHaveLength(1);
  });

  test('bad input is a 400: unknown roles, non-JSON arguments, n > 1', () => {
    expect(() => req({ messages: [{ role: 'critic', content: 'x' }] })).toThrow('not supported');
    expect(() =>
      req({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{oops' } }] }] }),
    ).toThrow('not valid JSON');
    expect(() => req({ n: 2, messages: [{ role: 'user', content: 'x' }] })).toThrow('n must be 1');
    expect(() => req({ messages: 'nope' })).toThrow('messages must be an array');
  });

  test('models without system prompts (Mistral 7B / Mixtral Instruct, Titan Text) get it in the first user turn', () => {
    const out = converseRequest({ model: 'mistral.mixtral-8x7b-instruct-v0:1', messages: [{ role: 'system', content: 'Be brief' }, { role: 'user', content: 'Hi' }] });
    expect(out.system).toBeUndefined();
    expect(out.messages).toEqual([{ role: 'user', content: [{ text: 'Be brief' }, { text: 'Hi' }] }]);
  });

  test('the input body is never mutated', () => {
    const body: JsonObject = {
      model: CLAUDE,
      messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'Hi' }],
      tools: [weather],
      response_format: { type: 'json_object' },
    };
    const before = structuredClone(body);
    converseRequest(body);
    converseRequest(body);
    expect(body).toEqual(before);
  });
});

describe('converseRequest: parameters, tools, JSON mode', () => {
  const user = [{ role: 'user', content: 'Hi' }];

  test('max tokens, temperature, top_p and stop go to inferenceConfig', () => {
    expect(req({ messages: user, max_tokens: 100, temperature: 0.2, top_p: 0.9, stop: 'END' }).inferenceConfig).toEqual({
      maxTokens: 100,
      temperature: 0.2,
      topP: 0.9,
      stopSequences: ['END'],
    });
    expect(req({ messages: user, max_completion_tokens: 50, max_tokens: 100, stop: ['a', 'b'] }).inferenceConfig).toEqual({ maxTokens: 50, stopSequences: ['a', 'b'] });
    expect(req({ messages: user }).inferenceConfig).toBeUndefined();
  });

  test('tools become toolSpecs; auto is left out, required → any, a function → tool, none → no tools', () => {
    const auto = req({ messages: user, tools: [weather], tool_choice: 'auto' });
    expect(auto.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: weather.function.parameters } } }],
    });
    expect((req({ messages: user, tools: [weather], tool_choice: 'required' }).toolConfig as JsonObject).toolChoice).toEqual({ any: {} });
    expect((req({ messages: user, tools: [weather], tool_choice: { type: 'function', function: { name: 'get_weather' } } }).toolConfig as JsonObject).toolChoice).toEqual({
      tool: { name: 'get_weather' },
    });
    expect(req({ messages: user, tools: [weather], tool_choice: 'none' }).toolConfig).toBeUndefined();
    const bare = req({ messages: user, tools: [{ type: 'function', function: { name: 'ping' } }] });
    expect(bare.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'ping', inputSchema: { json: { type: 'object', properties: {} } } } }] });
    expect(() => req({ messages: user, tools: [{ type: 'web_search' }] })).toThrow('not supported');
  });

  test('a history of tool calls without tools (or with tool_choice none) still declares them, as Bedrock requires', () => {
    const history: JsonObject[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'found' },
    ];
    for (const extra of [{}, { tools: [weather], tool_choice: 'none' }] as JsonObject[]) {
      const out = req({ messages: history, ...extra });
      expect(out.toolConfig).toEqual({
        tools: [{ toolSpec: { name: 'lookup', description: 'A tool used earlier in this conversation.', inputSchema: { json: { type: 'object' } } } }],
      });
    }
  });

  test('json_object: a forced JSON tool for families with toolChoice', () => {
    const claude = req({ messages: user, response_format: { type: 'json_object' } });
    expect(claude.toolConfig).toEqual({
      tools: [{ toolSpec: { name: JSON_TOOL, description: expect.any(String), inputSchema: { json: { type: 'object' } } } }],
      toolChoice: { tool: { name: JSON_TOOL } },
    });
    const mistralLarge = converseRequest({ model: 'mistral.mistral-large-2407-v1:0', messages: user, response_format: { type: 'json_object' } });
    expect((mistralLarge.toolConfig as JsonObject).toolChoice).toEqual({ any: {} });
    // With tools of its own, the model must call one of them or the JSON tool.
    const both = req({ messages: user, tools: [weather], response_format: { type: 'json_object' } });
    expect(((both.toolConfig as JsonObject).tools as JsonObject[]).map((t) => (t.toolSpec as JsonObject).name)).toEqual(['get_weather', JSON_TOOL]);
    expect((both.toolConfig as JsonObject).toolChoice).toEqual({ any: {} });
  });

  test('json_object for families without toolChoice, and json_schema: native outputConfig.textFormat', () => {
    const llama = converseRequest({ model: LLAMA, messages: user, response_format: { type: 'json_object' } });
    expect(llama.toolConfig).toBeUndefined();
    expect(llama.outputConfig).toEqual({ textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: '{"type":"object"}', name: 'json_object' } } } });
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    const out = req({ messages: user, response_format: { type: 'json_schema', json_schema: { name: 'thing', description: 'A thing', schema, strict: true } } });
    expect(out.outputConfig).toEqual({
      textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(schema), name: 'thing', description: 'A thing' } } },
    });
    expect(req({ messages: user, response_format: { type: 'text' } }).outputConfig).toBeUndefined();
    expect(() => req({ messages: user, response_format: { type: 'yaml' } })).toThrow('response_format');
  });

  test('Meta Llama: tool_choice auto is never sent (the family rejects the field)', () => {
    const out = converseRequest({ model: LLAMA, messages: user, tools: [weather], tool_choice: 'auto' });
    expect((out.toolConfig as JsonObject).toolChoice).toBeUndefined();
  });
});

describe('converseResponse', () => {
  const answer = (content: unknown[], stopReason = 'end_turn', usage: unknown = { inputTokens: 10, outputTokens: 5, totalTokens: 15 }) => ({
    output: { message: { role: 'assistant', content } },
    stopReason,
    usage,
    metrics: { latencyMs: 100 },
  });

  test('text, finish reason, model, created, usage', () => {
    const out = converseResponse(answer([{ text: 'Hello' }, { text: ' there' }]), ctx());
    expect(out).toEqual({
      id: expect.stringMatching(/^chatcmpl-[0-9a-f]{32}$/),
      object: 'chat.completion',
      created: 1_700_000_000,
      model: CLAUDE,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 0 } },
    });
  });

  test('tool calls: OpenAI shape, content null, finish tool_calls', () => {
    const out = converseResponse(
      answer([{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } }, { toolUse: { toolUseId: 'tooluse_2', name: 'get_time', input: {} } }], 'tool_use'),
      ctx(),
    );
    const choice = (out.choices as JsonObject[])[0] as JsonObject;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'tooluse_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
      ],
    });
  });

  test('JSON mode: the JSON tool input is the content, the finish reason is stop', () => {
    const out = converseResponse(answer([{ text: 'Here you go:' }, { toolUse: { toolUseId: 't', name: JSON_TOOL, input: { answer: 'x' } } }], 'tool_use'), ctx());
    const choice = (out.choices as JsonObject[])[0] as JsonObject;
    expect(choice.message).toEqual({ role: 'assistant', content: '{"answer":"x"}' });
    expect(choice.finish_reason).toBe('stop');
  });

  test('reasoning content, and the blocks with their signatures (as the anthropic provider gives them), only when strict wire compliance is off', () => {
    const content = [{ reasoningContent: { reasoningText: { text: 'thinking…', signature: 's' } } }, { reasoningContent: { redactedContent: 'cmVk' } }, { text: 'Done' }];
    expect(((converseResponse(answer(content), ctx()).choices as JsonObject[])[0] as JsonObject).message).toEqual({ role: 'assistant', content: 'Done' });
    expect(((converseResponse(answer(content), ctx({ strictWireCompliance: false })).choices as JsonObject[])[0] as JsonObject).message).toEqual({
      role: 'assistant',
      content: 'Done',
      reasoning_content: 'thinking…',
      content_blocks: [
        { type: 'thinking', thinking: 'thinking…', signature: 's' },
        { type: 'redacted_thinking', data: 'cmVk' },
        { type: 'text', text: 'Done' },
      ],
    });
    // No reasoning: no blocks.
    expect(((converseResponse(answer([{ text: 'Done' }]), ctx({ strictWireCompliance: false })).choices as JsonObject[])[0] as JsonObject).message).toEqual({ role: 'assistant', content: 'Done' });
  });

  test('cached tokens: prompt tokens include cache reads and writes; cached_tokens is the reads; cache writes kept beside', () => {
    expect(usageOf({ inputTokens: 3, outputTokens: 7, totalTokens: 10, cacheReadInputTokens: 100, cacheWriteInputTokens: 20 })).toEqual({
      prompt_tokens: 123,
      completion_tokens: 7,
      total_tokens: 130,
      prompt_tokens_details: { cached_tokens: 100 },
      cache_creation_input_tokens: 20,
    });
  });

  test('stop reasons', () => {
    expect(finishReason('end_turn', false)).toBe('stop');
    expect(finishReason('stop_sequence', false)).toBe('stop');
    expect(finishReason('tool_use', false)).toBe('tool_calls');
    expect(finishReason('tool_use', true)).toBe('stop');
    expect(finishReason('max_tokens', false)).toBe('length');
    expect(finishReason('model_context_window_exceeded', false)).toBe('length');
    expect(finishReason('guardrail_intervened', false)).toBe('content_filter');
    expect(finishReason('content_filtered', false)).toBe('content_filter');
    expect(finishReason('something_new', false)).toBe('stop');
  });

  test('an answer that is not what Converse promises throws (the core answers 502)', () => {
    const broken: unknown[] = [
      null,
      [],
      { stopReason: 'end_turn' },
      { output: {}, stopReason: 'end_turn' },
      { output: { message: { content: 'text' } }, stopReason: 'end_turn' },
      { output: { message: { content: [] } } },
      { output: { message: { content: [{ text: 5 }] } }, stopReason: 'end_turn' },
      { output: { message: { content: [{ toolUse: { input: {} } }] } }, stopReason: 'tool_use' },
      { output: { message: { content: [] } }, stopReason: 'end_turn', usage: { inputTokens: 'many' } },
    ];
    for (const json of broken) expect(() => converseResponse(json, ctx())).toThrow();
  });
});
