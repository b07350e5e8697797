import { ruleSuite } from './test-support.ts';

const base = { model: 'text-embedding-3-small', input: 'The food was delicious' };

ruleSuite('embed', base, {
  'input is required': { pass: [], fail: [[{ input: undefined }, 'input', 'is required']] },
  'input is a string, string[], token array or token arrays': {
    pass: [{ input: ['a', 'b'] }, { input: [1, 2, 3] }, { input: [[1, 2], [3]] }],
    fail: [
      [{ input: 42 }, 'input'],
      [{ input: { text: 'x' } }, 'input'],
      [{ input: ['a', 2] }, 'input[1]', 'must be a string'],
      [{ input: [[1], [2, 'x']] }, 'input[1][1]', 'must be an integer'],
    ],
  },
  'input is not empty': {
    pass: [{ input: ' ' }, { input: [0] }],
    fail: [
      [{ input: '' }, 'input', 'must not be empty'],
      [{ input: [] }, 'input', 'must contain at least 1 item'],
      [{ input: ['a', ''] }, 'input[1]', 'must not be empty'],
      [{ input: [[1], []] }, 'input[1]', 'must contain at least 1 item'],
    ],
  },
  'input arrays have at most 2048 items': {
    pass: [{ input: Array.from({ length: 2048 }, () => 'x') }, { input: Array.from({ length: 2048 }, () => 1) }],
    fail: [
      [{ input: Array.from({ length: 2049 }, () => 'x') }, 'input', 'must contain at most 2048 items'],
      [{ input: Array.from({ length: 2049 }, () => [1]) }, 'input', 'must contain at most 2048 items'],
    ],
  },
  'model is a required string': {
    pass: [],
    fail: [
      [{ model: undefined }, 'model', 'is required'],
      [{ model: ['m'] }, 'model', 'must be a string'],
    ],
  },
  'dimensions is an integer >= 1': {
    pass: [{ dimensions: 1 }, { dimensions: 3072 }],
    fail: [
      [{ dimensions: 0 }, 'dimensions', 'must be >= 1'],
      [{ dimensions: 256.5 }, 'dimensions', 'must be an integer'],
    ],
  },
  'encoding_format is float or base64': {
    pass: [{ encoding_format: 'float' }, { encoding_format: 'base64' }],
    fail: [[{ encoding_format: 'hex' }, 'encoding_format', 'must be one of "float", "base64"']],
  },
  'user is a string': { pass: [{ user: 'u' }], fail: [[{ user: 1 }, 'user', 'must be a string']] },
  'unknown fields pass through': { pass: [{ input_type: 'query', truncate: 'END' }], fail: [] },
});
