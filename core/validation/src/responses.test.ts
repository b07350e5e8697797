import { expect, test } from 'bun:test';
import { validateBody } from './index.ts';
import { ruleSuite } from './test-support.ts';

const base = { model: 'gpt-4o', input: 'Hi' };
const pairs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));

ruleSuite('responses', base, {
  'model is a required string': { pass: [], fail: [[{ model: undefined }, 'model', 'is required']] },
  'metadata: at most 16 pairs, keys up to 64 and values up to 512 characters': {
    pass: [{ metadata: pairs(16) }, { metadata: { ['k'.repeat(64)]: 'v'.repeat(512) } }, { metadata: null }],
    fail: [
      [{ metadata: pairs(17) }, 'metadata'],
      [{ metadata: { a: 'v'.repeat(513) } }, 'metadata.a'],
      [{ metadata: { ['k'.repeat(65)]: 'v' } }, 'metadata'],
      [{ metadata: { a: 1 } }, 'metadata.a'],
    ],
  },
  'temperature 0..2, top_p 0..1': {
    pass: [{ temperature: 0 }, { temperature: 2 }, { top_p: 0 }, { top_p: 1 }],
    fail: [
      [{ temperature: 2.01 }, 'temperature'],
      [{ temperature: -0.1 }, 'temperature'],
      [{ top_p: 1.5 }, 'top_p'],
    ],
  },
  'truncation is auto or disabled': {
    pass: [{ truncation: 'auto' }, { truncation: 'disabled' }],
    fail: [[{ truncation: 'sometimes' }, 'truncation']],
  },
  'tools are of the kinds SPEC.md lists': {
    pass: [
      { tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }] },
      { tools: [{ type: 'file_search', vector_store_ids: ['vs_1'], max_num_results: 5 }] },
      { tools: [{ type: 'web_search_preview' }, { type: 'computer_use_preview', display_width: 1, display_height: 1, environment: 'browser' }] },
    ],
    fail: [
      [{ tools: [{ type: 'code_interpreter' }] }, 'tools[0].type'],
      [{ tools: [{ type: 'function' }] }, 'tools[0].name', 'is required for a function tool'],
      [{ tools: [{ type: 'file_search' }] }, 'tools[0].vector_store_ids', 'is required for a file_search tool'],
    ],
  },
  'input: a string or items, required unless previous_response_id': {
    pass: [{ input: [{ role: 'user', content: 'x' }] }, { input: undefined, previous_response_id: 'resp_1' }],
    fail: [
      [{ input: undefined }, 'input', 'is required'],
      [{ input: [] }, 'input', 'must not be empty'],
      [{ input: 5 }, 'input'],
    ],
  },
  'unknown fields pass through': { pass: [{ service_tier: 'auto', include: ['reasoning.encrypted_content'] }], fail: [] },
});

test('a violation is a 400 naming the parameter', () => {
  expect(() => validateBody('responses', { ...base, temperature: 3 })).toThrow(/temperature/);
});
