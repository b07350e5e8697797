import { ruleSuite, type FailCase } from './test-support.ts';

const base = { model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test' };
const range = (field: string, low: number, high: number) => ({
  pass: [{ [field]: low }, { [field]: high }],
  fail: [
    [{ [field]: high + 0.5 }, field, `must be <= ${high}`],
    [{ [field]: low - 0.5 }, field, `must be >= ${low}`],
  ] as FailCase[],
});

ruleSuite('complete', base, {
  'model is a required string': {
    pass: [],
    fail: [
      [{ model: undefined }, 'model', 'is required'],
      [{ model: 3 }, 'model', 'must be a string'],
    ],
  },
  'prompt is required: string, string[], token array or token arrays': {
    pass: [{ prompt: '' }, { prompt: ['a', 'b'] }, { prompt: [1, 2, 3] }, { prompt: [[1, 2], [3]] }],
    fail: [
      [{ prompt: undefined }, 'prompt', 'is required'],
      [{ prompt: 5 }, 'prompt'],
      [{ prompt: [1, 2, 'x'] }, 'prompt[2]', 'must be an integer'],
      [{ prompt: ['a', 'b', 3] }, 'prompt[2]', 'must be a string'],
      [{ prompt: [[1], [2, 'x']] }, 'prompt[1][1]', 'must be an integer'],
    ],
  },
  'best_of is an integer 0..20': {
    pass: [{ best_of: 0 }, { best_of: 20 }],
    fail: [
      [{ best_of: 21 }, 'best_of', 'must be <= 20'],
      [{ best_of: -1 }, 'best_of', 'must be >= 0'],
      [{ best_of: 1.5 }, 'best_of', 'must be an integer'],
    ],
  },
  'best_of is at least n when both are given': {
    pass: [{ best_of: 2, n: 2 }, { best_of: 5, n: 2 }, { best_of: 1, n: null }],
    fail: [[{ best_of: 1, n: 2 }, 'best_of', 'must be greater than or equal to n']],
  },
  'best_of above 1 cannot stream': {
    pass: [{ best_of: 1, stream: true }, { best_of: 3, stream: false }],
    fail: [[{ best_of: 3, stream: true }, 'best_of', 'cannot be greater than 1 when stream is true']],
  },
  'echo is a boolean': { pass: [{ echo: true }], fail: [[{ echo: 'yes' }, 'echo', 'must be a boolean']] },
  'frequency_penalty is -2..2': range('frequency_penalty', -2, 2),
  'presence_penalty is -2..2': range('presence_penalty', -2, 2),
  'logit_bias values are -100..100': {
    pass: [{ logit_bias: { '50256': -100 } }],
    fail: [[{ logit_bias: { '50256': 100.5 } }, 'logit_bias.50256', 'must be <= 100']],
  },
  'logprobs is an integer 0..5': {
    pass: [{ logprobs: 0 }, { logprobs: 5 }],
    fail: [
      [{ logprobs: 6 }, 'logprobs', 'must be <= 5'],
      [{ logprobs: true }, 'logprobs', 'must be an integer'],
    ],
  },
  'max_tokens is an integer >= 0': {
    pass: [{ max_tokens: 0 }, { max_tokens: 16 }],
    fail: [
      [{ max_tokens: -1 }, 'max_tokens', 'must be >= 0'],
      [{ max_tokens: '16' }, 'max_tokens', 'must be an integer'],
    ],
  },
  'n is an integer 1..128': {
    pass: [{ n: 1 }, { n: 128, best_of: null }],
    fail: [
      [{ n: 0 }, 'n', 'must be >= 1'],
      [{ n: 129 }, 'n', 'must be <= 128'],
    ],
  },
  'seed is an integer': { pass: [{ seed: 7 }], fail: [[{ seed: 7.5 }, 'seed', 'must be an integer']] },
  'stop is up to 4 sequences': {
    pass: [{ stop: 'END' }, { stop: ['a', 'b', 'c', 'd'] }],
    fail: [[{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop', 'must contain at most 4 items']],
  },
  'stream is a boolean': { pass: [{ stream: true }], fail: [[{ stream: 1 }, 'stream', 'must be a boolean']] },
  'stream_options only with stream true': {
    pass: [{ stream: true, stream_options: { include_usage: true } }],
    fail: [
      [{ stream_options: { include_usage: true } }, 'stream_options', 'only allowed when stream is true'],
      [{ stream: true, stream_options: [] }, 'stream_options', 'must be an object'],
    ],
  },
  'suffix is a string': { pass: [{ suffix: '\n' }], fail: [[{ suffix: 0 }, 'suffix', 'must be a string']] },
  'temperature is 0..2': range('temperature', 0, 2),
  'top_p is 0..1': range('top_p', 0, 1),
  'user is a string': { pass: [{ user: 'u' }], fail: [[{ user: {} }, 'user', 'must be a string']] },
  'unknown fields pass through': { pass: [{ svcD_raw: { x: [1] }, metadata: null }], fail: [] },
});
