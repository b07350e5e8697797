// The stream time limits of issue #15 in the closed config schema (docs/streaming.md).
import { describe, expect, test } from 'bun:test';
import { useWorkspaceFields } from './testing/workspace-fields.ts';
import { validateConfig } from './validate.ts';

useWorkspaceFields();

const violations = (value: unknown) => {
  const result = validateConfig(value);
  return result.ok ? [] : result.violations;
};
const target = (extra: Record<string, unknown> = {}) => ({ provider: 'openai', api_key: 'sk-test', ...extra });

describe('first_token_timeout and stream_idle_timeout', () => {
  test('positive integers of milliseconds, at the root and on any target', () => {
    expect(violations(target({ first_token_timeout: 5000, stream_idle_timeout: 300 }))).toEqual([]);
    expect(violations({ strategy: { mode: 'fallback' }, first_token_timeout: 1, targets: [target({ stream_idle_timeout: 10_000 }), target()] })).toEqual([]);
  });

  test('zero, fractions and strings are refused, naming the path', () => {
    expect(violations(target({ first_token_timeout: 0 }))).toEqual(['first_token_timeout: must be >= 1']);
    expect(violations(target({ stream_idle_timeout: 1.5 }))).toEqual(['stream_idle_timeout: must be an integer']);
    expect(violations({ strategy: { mode: 'fallback' }, targets: [target({ first_token_timeout: '500' })] })).toEqual([
      'targets[0].first_token_timeout: must be an integer',
    ]);
  });

  test('the schema stays closed: a near miss is an unknown field', () => {
    expect(violations(target({ first_token_timeout_ms: 5000 })).join()).toContain('first_token_timeout_ms');
  });
});
