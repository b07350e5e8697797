import { describe, expect, test } from 'bun:test';
import type { JsonObject } from '@gateway/sdk';
import { input, output } from '../testing.ts';
import { addPrefix } from './addPrefix.ts';

const contents = (body: JsonObject | undefined) => (body?.messages as JsonObject[]).map((m) => [m.role, m.content]);

describe('default.addPrefix', () => {
  test('prefixes the last user message (default) and returns a new body', async () => {
    const ctx = input({ model: 'm', messages: [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'a' }, { role: 'user', content: 'last' }] });
    const r = await addPrefix.run(ctx, { prefix: 'Answer in French: ' });
    expect(r.verdict).toBe(true);
    expect(contents(r.transformed)).toEqual([['user', 'first'], ['assistant', 'a'], ['user', 'Answer in French: last']]);
    expect(ctx.request.body?.messages).toEqual([{ role: 'user', content: 'first' }, { role: 'assistant', content: 'a' }, { role: 'user', content: 'last' }]);
  });

  test('system: first system message, or a new one at the start', async () => {
    const r = await addPrefix.run(input('q'), { prefix: 'Be kind. ', applyToRole: 'system' });
    expect(contents(r.transformed)).toEqual([['system', 'Be kind. You are terse.'], ['user', 'q']]);
    const none = await addPrefix.run(input({ messages: [{ role: 'user', content: 'q' }] }), { prefix: 'Rules.', applyToRole: 'system' });
    expect(contents(none.transformed)).toEqual([['system', 'Rules.'], ['user', 'q']]);
  });

  test('addToExisting false inserts a message; onlyIfEmpty leaves an existing one alone', async () => {
    const r = await addPrefix.run(input('q'), { prefix: 'Context.', addToExisting: false });
    expect(contents(r.transformed)).toEqual([['system', 'You are terse.'], ['user', 'Context.'], ['user', 'q']]);
    const kept = await addPrefix.run(input('q'), { prefix: 'x', applyToRole: 'system', onlyIfEmpty: true });
    expect(kept.transformed).toBeUndefined();
    expect(kept.data).toMatchObject({ applied: false });
  });

  test('array content, prompts, answers, bodies without text', async () => {
    const parts = input({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'u' } }, { type: 'text', text: 'what?' }] }] });
    expect(contents((await addPrefix.run(parts, { prefix: '> ' })).transformed)).toEqual([
      ['user', [{ type: 'image_url', image_url: { url: 'u' } }, { type: 'text', text: '> what?' }]],
    ]);
    const imageOnly = input({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'u' } }] }] });
    expect(contents((await addPrefix.run(imageOnly, { prefix: '> ' })).transformed)).toEqual([
      ['user', [{ type: 'text', text: '> ' }, { type: 'image_url', image_url: { url: 'u' } }]],
    ]);
    expect((await addPrefix.run(input({ prompt: 'p' }), { prefix: 'Q: ' })).transformed).toEqual({ prompt: 'Q: p' });
    const answered = await addPrefix.run(output('hello'), { prefix: '[bot] ' });
    expect(((answered.transformed?.choices as JsonObject[])[0]?.message as JsonObject).content).toBe('[bot] hello');
    const embedding = await addPrefix.run(input({ input: 'x' }, { endpoint: 'embed' }), { prefix: 'q: ' });
    expect(embedding).toMatchObject({ verdict: true, data: { applied: false } });
    expect(embedding.transformed).toBeUndefined();
  });

  test('bad parameters', () => {
    expect(addPrefix.validate({})).toEqual(['prefix: is required']);
    expect(addPrefix.validate({ prefix: '' })).toEqual(['prefix: must not be empty']);
    expect(addPrefix.validate({ prefix: 'x', applyToRole: 'tool' })).toEqual(['applyToRole: must be one of user, system, assistant, developer']);
  });
});
