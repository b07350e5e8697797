import { describe, expect, test } from 'bun:test';
import { GatewayError, type JsonObject, type TranslateContext } from '@gateway/sdk';
import { toAnthropicRequest } from './request.ts';
import { DEFAULT_MAX_TOKENS, factsOf, JSON_TOOL_NAME } from './shared.ts';

const strict = (): TranslateContext => ({ endpoint: 'chatComplete', model: 'claude-x', strictWireCompliance: true, now: 1700000000 });
const loose = (): TranslateContext => ({ ...strict(), strictWireCompliance: false });
const build = (body: JsonObject, ctx = strict()) => toAnthropicRequest(body, {}, ctx);
const user = (content: JsonObject['x']) => ({ role: 'user', content }) as JsonObject;
const PNG = 'data:image/png;base64,iVBORw0KGgo=';

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

describe('toAnthropicRequest: the basics', () => {
  test('model, messages, default max_tokens; nothing else is invented', () => {
    expect(build({ model: 'claude-x', messages: [user('Hi')] })).toEqual({
      model: 'claude-x',
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: DEFAULT_MAX_TOKENS,
    });
  });

  test('max_completion_tokens wins over max_tokens; either replaces the default', () => {
    expect(build({ model: 'm', messages: [user('x')], max_tokens: 50 }).max_tokens).toBe(50);
    expect(build({ model: 'm', messages: [user('x')], max_tokens: 50, max_completion_tokens: 70 }).max_tokens).toBe(70);
  });

  test('sampling, stop, user, stream map to their Anthropic names; OpenAI-only fields are not sent', () => {
    const out = build({
      model: 'm',
      messages: [user('x')],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      stop: 'END',
      user: 'user-42',
      stream: true,
      stream_options: { include_usage: true },
      n: 1,
      seed: 7,
      frequency_penalty: 0.5,
      presence_penalty: 0.5,
      logit_bias: { '1': 2 },
      logprobs: false,
    });
    expect(out).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: DEFAULT_MAX_TOKENS,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['END'],
      metadata: { user_id: 'user-42' },
      stream: true,
    });
    expect(build({ model: 'm', messages: [user('x')], stop: ['a', 'b'] }).stop_sequences).toEqual(['a', 'b']);
  });

  test('the body it is given is never changed', () => {
    const body: JsonObject = {
      model: 'm',
      messages: [
        { role: 'system', content: 'S' },
        user([{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: PNG } }]),
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      response_format: { type: 'json_object' },
      parallel_tool_calls: false,
    };
    const before = structuredClone(body);
    build(body);
    build(body, loose());
    expect(body).toEqual(before);
  });

  test('Vertex AI: no model, anthropic_version in the body; another body version likewise', () => {
    const vertex = toAnthropicRequest({ model: 'claude-x', messages: [user('x')] }, {}, strict(), { vertex: true });
    expect(vertex.model).toBeUndefined();
    expect(vertex.anthropic_version).toBe('vertex-2023-10-16');
    const other = toAnthropicRequest({ model: 'claude-x', messages: [user('x')] }, {}, strict(), { anthropicVersion: 'bedrock-2023-05-31' });
    expect(other.model).toBeUndefined();
    expect(other.anthropic_version).toBe('bedrock-2023-05-31');
  });
});

describe('toAnthropicRequest: every message kind', () => {
  test('system and developer messages are lifted into system text blocks, in order', () => {
    const out = build({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief' },
        { role: 'developer', content: [{ type: 'text', text: 'Be kind' }] },
        user('Hi'),
        { role: 'system', content: 'Late note' },
      ],
    });
    expect(out.system).toEqual([
      { type: 'text', text: 'Be brief' },
      { type: 'text', text: 'Be kind' },
      { type: 'text', text: 'Late note' },
    ]);
    expect(out.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  test('user text and image parts: data URL → base64 source, http URL → url source; cache_control kept', () => {
    const out = build({
      model: 'm',
      messages: [
        user([
          { type: 'text', text: 'Look', cache_control: { type: 'ephemeral' } },
          { type: 'image_url', image_url: { url: PNG, detail: 'low' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        ]),
      ],
    });
    expect(out.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look', cache_control: { type: 'ephemeral' } },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
    ]);
  });

  test('a PDF file part becomes a document block', () => {
    const out = build({ model: 'm', messages: [user([{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }])] });
    expect((out.messages as JsonObject[])[0]?.content).toEqual([
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' },
    ]);
  });

  test('unsupported parts and image URLs are refused with a 400 that names the part', () => {
    expect(badRequest(() => build({ model: 'm', messages: [user([{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }])] })).param).toBe('messages[0].content[0].type');
    expect(badRequest(() => build({ model: 'm', messages: [user([{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }])] })).message).toContain('data URL');
    expect(badRequest(() => build({ model: 'm', messages: [user([{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,AA==' } }])] })).message).toContain('image/bmp');
  });

  test('assistant text stays a string; text with tool calls becomes text + tool_use blocks', () => {
    const out = build({
      model: 'm',
      messages: [
        user('One'),
        { role: 'assistant', content: 'Two' },
        user('Three'),
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '18C' },
        { role: 'tool', tool_call_id: 'call_b', content: [{ type: 'text', text: 'noon' }] },
        user('Thanks'),
      ],
      tools: [
        { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'get_time' } },
      ],
    });
    expect(out.messages).toEqual([
      { role: 'user', content: 'One' },
      { role: 'assistant', content: 'Two' },
      { role: 'user', content: 'Three' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_a', content: '18C' },
          { type: 'tool_result', tool_use_id: 'call_b', content: [{ type: 'text', text: 'noon' }] },
        ],
      },
      { role: 'user', content: 'Thanks' },
    ]);
  });

  test('tool arguments that are not a JSON object are refused', () => {
    const err = badRequest(() =>
      build({ model: 'm', messages: [user('x'), { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1' } }] }] }),
    );
    expect(err.param).toBe('messages[1].tool_calls[0].function.arguments');
  });

  test('an empty assistant turn is left out', () => {
    const out = build({ model: 'm', messages: [user('a'), { role: 'assistant', content: '' }, user('b')] });
    expect(out.messages).toEqual([{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }]);
  });

  test('legacy functions, function_call and function messages map to tools, tool_use and tool_result', () => {
    const ctx = strict();
    const out = toAnthropicRequest(
      {
        model: 'm',
        functions: [{ name: 'lookup', description: 'Look up', parameters: { type: 'object', properties: { q: { type: 'string' } } } }],
        function_call: { name: 'lookup' },
        messages: [
          user('find it'),
          { role: 'assistant', content: null, function_call: { name: 'lookup', arguments: '{"q":"x"}' } },
          { role: 'function', name: 'lookup', content: 'found' },
        ],
      },
      {},
      ctx,
    );
    expect(out.tools).toEqual([{ name: 'lookup', description: 'Look up', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }]);
    expect(out.tool_choice).toEqual({ type: 'tool', name: 'lookup' });
    expect(out.messages).toEqual([
      { role: 'user', content: 'find it' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_function_1', name: 'lookup', input: { q: 'x' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_function_1', content: 'found' }] },
    ]);
    expect(factsOf(ctx).legacyFunctions).toBe(true);
  });

  test('an unknown role is refused', () => {
    expect(badRequest(() => build({ model: 'm', messages: [{ role: 'narrator', content: 'x' }] })).param).toBe('messages[0].role');
  });
});

describe('toAnthropicRequest: tools and tool_choice', () => {
  const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} }, strict: true } }];

  test('tools become name / description / input_schema (strict dropped, missing parameters an empty object)', () => {
    expect(build({ model: 'm', messages: [user('x')], tools }).tools).toEqual([{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: {} } }]);
    expect(build({ model: 'm', messages: [user('x')], tools: [{ type: 'function', function: { name: 'f' } }] }).tools).toEqual([
      { name: 'f', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  test('auto / none / required / a named function', () => {
    const choice = (tool_choice: JsonObject['x']) => build({ model: 'm', messages: [user('x')], tools, tool_choice }).tool_choice;
    expect(choice('auto')).toEqual({ type: 'auto' });
    expect(choice('none')).toEqual({ type: 'none' });
    expect(choice('required')).toEqual({ type: 'any' });
    expect(choice({ type: 'function', function: { name: 'get_weather' } })).toEqual({ type: 'tool', name: 'get_weather' });
    expect(build({ model: 'm', messages: [user('x')], tools }).tool_choice).toBeUndefined();
    // no tools, no tool_choice
    expect(build({ model: 'm', messages: [user('x')], tool_choice: 'auto' }).tool_choice).toBeUndefined();
  });

  test('parallel_tool_calls false → disable_parallel_tool_use on the choice (auto when none was given)', () => {
    expect(build({ model: 'm', messages: [user('x')], tools, parallel_tool_calls: false }).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(build({ model: 'm', messages: [user('x')], tools, tool_choice: 'required', parallel_tool_calls: false }).tool_choice).toEqual({
      type: 'any',
      disable_parallel_tool_use: true,
    });
    expect(build({ model: 'm', messages: [user('x')], tools, tool_choice: 'none', parallel_tool_calls: false }).tool_choice).toEqual({ type: 'none' });
    expect(build({ model: 'm', messages: [user('x')], tools, parallel_tool_calls: true }).tool_choice).toBeUndefined();
  });
});

describe('toAnthropicRequest: JSON mode', () => {
  test('json_object → the json_response tool, forced', () => {
    const out = build({ model: 'm', messages: [user('Give JSON')], response_format: { type: 'json_object' } });
    expect(out.tools).toEqual([{ name: JSON_TOOL_NAME, description: expect.any(String), input_schema: { type: 'object' } }]);
    expect(out.tool_choice).toEqual({ type: 'tool', name: JSON_TOOL_NAME });
    expect(out.system).toBeUndefined();
  });

  test('json_schema → the schema is the tool input schema', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const out = build({ model: 'm', messages: [user('x')], response_format: { type: 'json_schema', json_schema: { name: 'reply', strict: true, schema } } });
    expect((out.tools as JsonObject[])[0]).toEqual({ name: JSON_TOOL_NAME, description: expect.stringContaining('reply'), input_schema: schema });
    expect(out.tool_choice).toEqual({ type: 'tool', name: JSON_TOOL_NAME });
  });

  test('text format changes nothing', () => {
    expect(build({ model: 'm', messages: [user('x')], response_format: { type: 'text' } }).tools).toBeUndefined();
  });

  test("with the client's own tools, the JSON tool joins them and the model is asked to use it", () => {
    const out = build({
      model: 'm',
      messages: [user('x')],
      tools: [{ type: 'function', function: { name: 'f' } }],
      response_format: { type: 'json_object' },
    });
    expect((out.tools as JsonObject[]).map((t) => t.name)).toEqual(['f', JSON_TOOL_NAME]);
    expect(out.tool_choice).toEqual({ type: 'auto' });
    expect(JSON.stringify(out.system)).toContain(JSON_TOOL_NAME);
  });

  test("tool_choice none with the client's tools still forces the JSON tool", () => {
    const out = build({ model: 'm', messages: [user('x')], tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'none', response_format: { type: 'json_object' } });
    expect(out.tool_choice).toEqual({ type: 'tool', name: JSON_TOOL_NAME });
  });
});

describe('toAnthropicRequest: thinking and strict_wire_compliance', () => {
  const body: JsonObject = { model: 'm', messages: [user('x')], thinking: { type: 'enabled', budget_tokens: 2048 } };

  test('strict (the default): thinking is not sent', () => {
    expect(build(body).thinking).toBeUndefined();
  });

  test('strict_wire_compliance false: thinking is sent as given', () => {
    expect(build(body, loose()).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });

  test('max_tokens stays above a large thinking budget when the client gave none', () => {
    const out = build({ ...body, thinking: { type: 'enabled', budget_tokens: 8000 } }, loose());
    expect(out.max_tokens).toBe(8000 + DEFAULT_MAX_TOKENS);
  });

  test('thinking with JSON mode: the JSON tool is asked for, not forced (Anthropic forbids forcing with thinking)', () => {
    const out = build({ ...body, response_format: { type: 'json_object' } }, loose());
    expect(out.tool_choice).toEqual({ type: 'auto' });
  });

  test('thinking blocks handed back in an assistant turn travel first, only when not strict', () => {
    const messages: JsonObject[] = [
      user('x'),
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'redacted_thinking', data: 'enc' },
          { type: 'text', text: 'Answer' },
        ],
      },
      user('y'),
    ];
    expect((build({ model: 'm', messages }, loose()).messages as JsonObject[])[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'redacted_thinking', data: 'enc' },
        { type: 'text', text: 'Answer' },
      ],
    });
    expect((build({ model: 'm', messages }).messages as JsonObject[])[1]).toEqual({ role: 'assistant', content: 'Answer' });
  });
});

describe('toAnthropicRequest: request facts for the answer', () => {
  test('include_usage is remembered per translation context', () => {
    const a = strict();
    const b = strict();
    build({ model: 'm', messages: [user('x')], stream: true, stream_options: { include_usage: true } }, a);
    build({ model: 'm', messages: [user('x')], stream: true }, b);
    expect(factsOf(a).includeUsage).toBe(true);
    expect(factsOf(b).includeUsage).toBe(false);
    expect(factsOf(strict()).includeUsage).toBe(false);
  });
});
