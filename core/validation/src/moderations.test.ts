import { ruleSuite } from './test-support.ts';

const base = { input: 'I want to hug everyone' };

ruleSuite('moderate', base, {
  'input is required': { pass: [], fail: [[{ input: undefined }, 'input', 'is required']] },
  'input is a string, string[] or multimodal parts': {
    pass: [
      { input: ['a', 'b'] },
      { input: [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
    ],
    fail: [
      [{ input: 5 }, 'input', 'must be a string, an array of strings or an array of content parts'],
      [{ input: [{ text: 'x' }] }, 'input[0].type', 'is required'],
      [{ input: ['a', 7] }, 'input[1]', 'must be a string'],
    ],
  },
  'model is an optional string': {
    pass: [{ model: 'text-moderation-stable' }, { model: 'text-moderation-latest' }, { model: null }],
    fail: [[{ model: 1 }, 'model', 'must be a string']],
  },
  'unknown fields pass through': { pass: [{ svcB_policy: 'strict' }], fail: [] },
});
