import { ruleSuite, type FailCase, type Patch } from './test-support.ts';

const user = { role: 'user', content: 'Hello' };
const base = { model: 'gpt-4o-mini', messages: [user] };
const tool = (name: unknown = 'get_weather') => ({
  type: 'function',
  function: { name, parameters: { type: 'object' } },
});
const fns = (count: number) => Array.from({ length: count }, () => ({ name: 'f' }));
const imagePart = { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } };
const range = (field: string, low: number, high: number, extra: Patch = {}) => ({
  pass: [{ ...extra, [field]: low }, { ...extra, [field]: high }],
  fail: [
    [{ ...extra, [field]: high + 0.5 }, field, `must be <= ${high}`],
    [{ ...extra, [field]: low - 0.5 }, field, `must be >= ${low}`],
    [{ ...extra, [field]: '1' }, field, 'must be a number'],
  ] as FailCase[],
});
const tokenCount = (field: string) => ({
  pass: [{ [field]: 0 }, { [field]: 4096 }],
  fail: [
    [{ [field]: -1 }, field, 'must be >= 0'],
    [{ [field]: 1.5 }, field, 'must be an integer'],
  ] as FailCase[],
});
const boolean = (field: string) => ({
  pass: [{ [field]: true }, { [field]: false }],
  fail: [[{ [field]: 'true' }, field, 'must be a boolean']] as FailCase[],
});

ruleSuite('chatComplete', base, {
  'messages is required': { pass: [], fail: [[{ messages: undefined }, 'messages', 'is required']] },
  'messages has at least 1 item': {
    pass: [{ messages: [user, { role: 'assistant', content: 'Hi' }] }],
    fail: [
      [{ messages: [] }, 'messages', 'must contain at least 1 item'],
      [{ messages: 'Hello' }, 'messages', 'must be an array'],
    ],
  },
  'each message is an object with a known role': {
    pass: ['system', 'developer', 'user', 'assistant', 'tool', 'function'].map((role) => ({
      messages: [{ role, content: 'x' }],
    })),
    fail: [
      [{ messages: ['Hello'] }, 'messages[0]', 'must be an object'],
      [{ messages: [user, { role: 'bot', content: 'x' }] }, 'messages[1].role'],
      [{ messages: [{ content: 'x' }] }, 'messages[0].role', 'is required'],
    ],
  },
  'content is a string, an array of parts, or null': {
    pass: [
      { messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }, imagePart] }] },
      { messages: [user, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function' }] }] },
    ],
    fail: [
      [{ messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
      [{ messages: [{ role: 'user', content: ['text'] }] }, 'messages[0].content[0]', 'must be an object'],
    ],
  },
  'model is a string': { pass: [{ model: undefined }], fail: [[{ model: 4 }, 'model', 'must be a string']] },
  'frequency_penalty is -2..2': range('frequency_penalty', -2, 2),
  'presence_penalty is -2..2': range('presence_penalty', -2, 2),
  'logit_bias values are -100..100': {
    pass: [{ logit_bias: { '50256': -100, '1': 100 } }, { logit_bias: {} }],
    fail: [
      [{ logit_bias: { '50256': 101 } }, 'logit_bias.50256', 'must be <= 100'],
      [{ logit_bias: { '50256': -100.5 } }, 'logit_bias.50256', 'must be >= -100'],
      [{ logit_bias: { 'a b': 'x' } }, 'logit_bias["a b"]', 'must be a number'],
      [{ logit_bias: [1] }, 'logit_bias', 'must be an object'],
    ],
  },
  'logprobs is a boolean': boolean('logprobs'),
  'top_logprobs is an integer 0..20': {
    pass: [{ logprobs: true, top_logprobs: 0 }, { logprobs: true, top_logprobs: 20 }],
    fail: [
      [{ logprobs: true, top_logprobs: 21 }, 'top_logprobs', 'must be <= 20'],
      [{ logprobs: true, top_logprobs: -1 }, 'top_logprobs', 'must be >= 0'],
      [{ logprobs: true, top_logprobs: 2.5 }, 'top_logprobs', 'must be an integer'],
    ],
  },
  'top_logprobs needs logprobs true': {
    pass: [{ logprobs: false }, { logprobs: false, top_logprobs: null }],
    fail: [
      [{ top_logprobs: 2 }, 'top_logprobs', 'requires logprobs to be true'],
      [{ logprobs: false, top_logprobs: 2 }, 'top_logprobs', 'requires logprobs to be true'],
    ],
  },
  'max_tokens is an integer >= 0 (deprecated, accepted)': tokenCount('max_tokens'),
  'max_completion_tokens is an integer >= 0': tokenCount('max_completion_tokens'),
  'n is an integer 1..128': {
    pass: [{ n: 1 }, { n: 128 }],
    fail: [
      [{ n: 0 }, 'n', 'must be >= 1'],
      [{ n: 129 }, 'n', 'must be <= 128'],
      [{ n: 2.5 }, 'n', 'must be an integer'],
    ],
  },
  'response_format type is text, json_object or json_schema': {
    pass: [
      { response_format: { type: 'text' } },
      { response_format: { type: 'json_object' } },
      { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } },
    ],
    fail: [
      [{ response_format: { type: 'xml' } }, 'response_format.type'],
      [{ response_format: {} }, 'response_format.type', 'is required'],
      [{ response_format: 'json_object' }, 'response_format', 'must be an object'],
    ],
  },
  'seed is an integer in the int64 range': {
    // biome-ignore lint/correctness/noPrecisionLoss: a seed beyond 2^53, as a client may send one, is still accepted.
    pass: [{ seed: -42 }, { seed: 9007199254740993 }, { seed: -(2 ** 63) }],
    fail: [
      [{ seed: 1.5 }, 'seed', 'must be an integer'],
      [{ seed: '42' }, 'seed', 'must be an integer'],
      [{ seed: 1e20 }, 'seed'],
    ],
  },
  'stop is a string or up to 4 strings': {
    pass: [{ stop: '\n' }, { stop: ['a', 'b', 'c', 'd'] }, { stop: [] }],
    fail: [
      [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop', 'must contain at most 4 items'],
      [{ stop: ['a', 1] }, 'stop[1]', 'must be a string'],
      [{ stop: 5 }, 'stop', 'must be a string or an array of at most 4 strings'],
    ],
  },
  'stream is a boolean': boolean('stream'),
  'stream_options is an object, only with stream true': {
    pass: [{ stream: true, stream_options: { include_usage: true } }, { stream: false, stream_options: null }],
    fail: [
      [{ stream_options: { include_usage: true } }, 'stream_options', 'only allowed when stream is true'],
      [{ stream: false, stream_options: {} }, 'stream_options', 'only allowed when stream is true'],
      [{ stream: true, stream_options: 'usage' }, 'stream_options', 'must be an object'],
    ],
  },
  'thinking is {type: enabled, budget_tokens: integer}': {
    pass: [{ thinking: { type: 'enabled', budget_tokens: 2048 } }],
    fail: [
      [{ thinking: { type: 'disabled', budget_tokens: 2048 } }, 'thinking.type', 'must be "enabled"'],
      [{ thinking: { type: 'enabled' } }, 'thinking.budget_tokens', 'is required'],
      [{ thinking: { type: 'enabled', budget_tokens: 'lots' } }, 'thinking.budget_tokens', 'must be an integer'],
      [{ thinking: true }, 'thinking', 'must be an object'],
    ],
  },
  'temperature is 0..2': range('temperature', 0, 2),
  'top_p is 0..1': range('top_p', 0, 1),
  'tools are at most 128 functions with a name': {
    pass: [{ tools: [tool()] }, { tools: Array.from({ length: 128 }, () => tool()) }],
    fail: [
      [{ tools: Array.from({ length: 129 }, () => tool()) }, 'tools', 'must contain at most 128 items'],
      [
        { tools: [tool(), tool(), tool(), { type: 'function', function: {} }] },
        'tools[3].function.name',
        'is required',
      ],
      [{ tools: [tool(7)] }, 'tools[0].function.name', 'must be a string'],
      [{ tools: [{ type: 'code_interpreter', function: { name: 'x' } }] }, 'tools[0].type', 'must be "function"'],
      [{ tools: [{ type: 'function' }] }, 'tools[0].function', 'is required'],
      [{ tools: { type: 'function' } }, 'tools', 'must be an array'],
    ],
  },
  'tool_choice is none, auto, required or a named function': {
    pass: [
      { tool_choice: 'none' },
      { tool_choice: 'auto' },
      { tool_choice: 'required' },
      { tools: [tool()], tool_choice: { type: 'function', function: { name: 'get_weather' } } },
    ],
    fail: [
      [{ tool_choice: 'any' }, 'tool_choice'],
      [{ tool_choice: { type: 'function', function: {} } }, 'tool_choice.function.name', 'is required'],
      [{ tool_choice: { type: 'tool', function: { name: 'x' } } }, 'tool_choice.type', 'must be "function"'],
    ],
  },
  'parallel_tool_calls is a boolean': boolean('parallel_tool_calls'),
  'user is a string': { pass: [{ user: 'user-1234' }], fail: [[{ user: 1234 }, 'user', 'must be a string']] },
  'function_call is none, auto or {name} (deprecated)': {
    pass: [{ function_call: 'none' }, { function_call: 'auto' }, { function_call: { name: 'f' } }],
    fail: [
      [{ function_call: 'required' }, 'function_call', 'must be "none", "auto" or {name}'],
      [{ function_call: {} }, 'function_call.name', 'is required'],
    ],
  },
  'functions has 1..128 items (deprecated)': {
    pass: [{ functions: [{ name: 'f', parameters: {} }] }, { functions: fns(128) }],
    fail: [
      [{ functions: [] }, 'functions', 'must contain at least 1 item'],
      [{ functions: fns(129) }, 'functions', 'must contain at most 128 items'],
      [{ functions: [{ description: 'no name' }] }, 'functions[0].name', 'is required'],
    ],
  },
  'unknown fields pass through, at every level': {
    pass: [
      {
        svcA_guardrail: { id: 'x' },
        metadata: { a: 1 },
        reasoning_effort: 'high',
        messages: [{ role: 'assistant', content: null, tool_calls: [], name: 'bob', refusal: null }],
        tools: [{ ...tool(), strict: true, cache_control: { type: 'ephemeral' } }],
        response_format: { type: 'json_schema', json_schema: { strict: true } },
      },
    ],
    fail: [],
  },
  'null means "not set" for optional fields': {
    pass: [
      Object.fromEntries(
        ['model', 'temperature', 'top_p', 'n', 'stop', 'stream', 'stream_options', 'tools', 'tool_choice', 'user'].map(
          (field) => [field, null],
        ),
      ),
    ],
    fail: [[{ messages: null }, 'messages', 'must be an array']],
  },
});
