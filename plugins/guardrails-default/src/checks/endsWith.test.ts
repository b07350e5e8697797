import { describe, expect, test } from 'bun:test';
import { input, output } from '../testing.ts';
import { endsWith } from './endsWith.ts';

describe('default.endsWith', () => {
  test('pass (trailing whitespace ignored), fail, missing text', async () => {
    expect((await endsWith.run(output('Thanks. END'), { suffix: 'END' })).verdict).toBe(true);
    expect((await endsWith.run(output('Thanks. END \n'), { suffix: 'END' })).verdict).toBe(true);
    expect((await endsWith.run(output('Thanks. end'), { suffix: 'END' })).verdict).toBe(false);
    expect((await endsWith.run(input('line\n'), { suffix: '\n' })).verdict).toBe(true);
    expect((await endsWith.run(output({ choices: [] }), { suffix: 'x' })).verdict).toBe(false);
  });

  test('bad parameters', () => {
    expect(endsWith.validate({})).toEqual(['suffix: is required']);
    expect(endsWith.validate({ suffix: '' })).toEqual(['suffix: must not be empty']);
  });
});
