import { describe, expect, test } from 'bun:test';
import { output } from '../testing.ts';
import { containsCode } from './containsCode.ts';

const answer = 'Try this:\n```py\nprint("hi")\n```\nand\n~~~sql\nSELECT 1;\n~~~\n';

describe('default.containsCode', () => {
  test('finds fenced code of the format, by alias', async () => {
    const r = await containsCode.run(output(answer), { format: 'Python' });
    expect(r.verdict).toBe(true);
    expect(r.data).toMatchObject({ foundFormats: ['Python', 'SQL'] });
    expect((await containsCode.run(output(answer), { format: 'SQL' })).verdict).toBe(true);
    expect((await containsCode.run(output('```TypeScript\nlet a = 1\n```'), { format: 'TypeScript' })).verdict).toBe(true);
  });

  test('fails without it; `not` inverts', async () => {
    expect((await containsCode.run(output(answer), { format: 'Rust' })).verdict).toBe(false);
    expect((await containsCode.run(output('print("hi") without a fence'), { format: 'Python' })).verdict).toBe(false);
    expect((await containsCode.run(output(answer), { format: 'Rust', not: true })).verdict).toBe(true);
    expect((await containsCode.run(output(answer), { format: 'SQL', not: true })).verdict).toBe(false);
    expect((await containsCode.run(output({ choices: [] }), { format: 'SQL' })).verdict).toBe(false);
  });

  test('bad parameters', () => {
    expect(containsCode.validate({})).toEqual(['format: is required']);
    expect(containsCode.validate({ format: 'python' })[0]).toStartWith('format: must be one of SQL, Python,');
  });
});
