import { describe, expect, test } from 'bun:test';
import { answer, input, output } from '../testing.ts';
import { notNull } from './notNull.ts';

describe('default.notNull', () => {
  test('output: text, tool calls pass; empty, blank, absent fail', async () => {
    expect((await notNull.run(output('hi'), {})).verdict).toBe(true);
    const tools = answer(null);
    (tools.choices as { message: Record<string, unknown> }[])[0]!.message.tool_calls = [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }];
    expect((await notNull.run(output(tools), {})).verdict).toBe(true);
    expect((await notNull.run(output({ choices: [{ text: 'done' }] }), {})).verdict).toBe(true);
    expect((await notNull.run(output(''), {})).verdict).toBe(false);
    expect((await notNull.run(output('  \n'), {})).verdict).toBe(false);
    expect((await notNull.run(output(answer(null)), {})).verdict).toBe(false);
    expect((await notNull.run(output({ error: { message: 'boom' } }), {})).verdict).toBe(false);
  });

  test('input: last user message with text or an image; prompts', async () => {
    expect((await notNull.run(input('q'), {})).verdict).toBe(true);
    expect((await notNull.run(input(''), {})).verdict).toBe(false);
    const image = { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] }] };
    expect((await notNull.run(input(image), {})).verdict).toBe(true);
    expect((await notNull.run(input({ messages: [{ role: 'system', content: 's' }] }), {})).verdict).toBe(false);
    expect((await notNull.run(input({ prompt: 'p' }), {})).verdict).toBe(true);
    expect((await notNull.run(input({ prompt: ' ' }), {})).verdict).toBe(false);
  });

  test('bad parameters', () => {
    expect(notNull.validate({ x: 1 })).toEqual(['x: is not a known parameter']);
  });
});
