import { describe, expect, test } from 'bun:test';
import type { JsonObject } from '@gateway/sdk';
import { deepFreeze, input, output, testRequest } from './testing.ts';
import { contentText, judgedText, mapTexts, requestModel, requestText, responseText } from './text.ts';

describe('judged text', () => {
  test('chat: the last user message, string or text parts', () => {
    const body: JsonObject = {
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'reply' },
        { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'https://x.test/i.png' } }, { type: 'text', text: 'b' }] },
        { role: 'tool', content: 'tool output' },
      ],
    };
    expect(requestText(body)).toEqual({ text: 'a\nb', source: 'lastUserMessage' });
    expect(requestText({ messages: [{ role: 'system', content: 'x' }] })).toEqual({ text: undefined, source: 'lastUserMessage' });
    expect(requestText({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'u' } }] }] }).text).toBeUndefined();
  });

  test('completions, embeddings, moderations, nothing', () => {
    expect(requestText({ prompt: 'p' })).toEqual({ text: 'p', source: 'prompt' });
    expect(requestText({ prompt: ['a', 'b', [1, 2]] })).toEqual({ text: 'a\nb', source: 'prompt' });
    expect(requestText({ input: 'i' })).toEqual({ text: 'i', source: 'input' });
    expect(requestText({ input: [{ type: 'text', text: 'm' }] })).toEqual({ text: 'm', source: 'input' });
    expect(requestText({ input: [[1, 2, 3]] }).text).toBeUndefined();
    expect(requestText({ model: 'x' })).toEqual({ text: undefined, source: 'none' });
    expect(requestText(undefined)).toEqual({ text: undefined, source: 'none' });
  });

  test('answers: first choice of a chat or text completion', () => {
    expect(responseText({ choices: [{ message: { content: 'one' } }, { message: { content: 'two' } }] })).toEqual({ text: 'one', source: 'chatCompletion' });
    expect(responseText({ choices: [{ message: { content: null, tool_calls: [] } }] })).toEqual({ text: undefined, source: 'chatCompletion' });
    expect(responseText({ choices: [{ text: 'done' }] })).toEqual({ text: 'done', source: 'textCompletion' });
    expect(responseText({ error: { message: 'x' } })).toEqual({ text: undefined, source: 'none' });
    expect(responseText(undefined).source).toBe('none');
    expect(judgedText(output('answer')).text).toBe('answer');
    expect(judgedText(input('question')).text).toBe('question');
  });

  test('contentText skips non-text parts', () => {
    expect(contentText(null)).toBeUndefined();
    expect(contentText([{ type: 'input_audio', input_audio: {} }])).toBeUndefined();
  });
});

describe('mapTexts', () => {
  test('input: every message, copy on write, original untouched', () => {
    const body = deepFreeze({
      model: 'm',
      messages: [
        { role: 'system', content: 'keep' },
        { role: 'user', content: [{ type: 'text', text: 'secret' }, { type: 'image_url', image_url: { url: 'u' } }] },
        { role: 'assistant', content: 'secret again' },
      ],
    } as JsonObject);
    const ctx = input(body);
    const seen: string[] = [];
    const { body: out, visited } = mapTexts(ctx, (t, where) => {
      seen.push(where);
      return t.replaceAll('secret', 'X');
    });
    expect(visited).toBe(3);
    expect(seen).toEqual(['messages[0].content', 'messages[1].content[0].text', 'messages[2].content']);
    const messages = out?.messages as JsonObject[];
    expect(messages[0]).toBe((body.messages as JsonObject[])[0] as JsonObject); // unchanged: same object
    expect(messages[1]?.content).toEqual([{ type: 'text', text: 'X' }, { type: 'image_url', image_url: { url: 'u' } }]);
    expect(messages[2]?.content).toBe('X again');
    expect((body.messages as JsonObject[])[2]?.content).toBe('secret again');
  });

  test('roles filter, nothing changed → no body', () => {
    const ctx = input('hello');
    expect(mapTexts(ctx, (t) => t).body).toBeUndefined();
    const { body } = mapTexts(ctx, (t) => t.toUpperCase(), new Set(['user']));
    expect((body?.messages as JsonObject[]).map((m) => m.content)).toEqual(['You are terse.', 'HELLO']);
  });

  test('prompt / input arrays and outputs', () => {
    expect(mapTexts(input({ prompt: ['a', 'b'] }), (t) => `${t}!`).body).toEqual({ prompt: ['a!', 'b!'] });
    expect(mapTexts(input({ input: 'e' }), (t) => `${t}!`).body).toEqual({ input: 'e!' });
    const out = mapTexts(output({ choices: [{ message: { role: 'assistant', content: 'a' } }, { text: 'b' }] }), (t) => `${t}!`);
    expect(out.body).toEqual({ choices: [{ message: { role: 'assistant', content: 'a!' } }, { text: 'b!' }] });
    expect(mapTexts({ request: testRequest(), phase: 'output' }, (t) => t).body).toBeUndefined();
  });

  test('requestModel: body, then override_params', () => {
    expect(requestModel(input('x'))).toBe('gpt-4o');
    expect(requestModel(input({ messages: [] }, { config: { override_params: { model: 'o' } } }))).toBe('o');
    expect(requestModel(input({ messages: [] }))).toBeUndefined();
  });
});

describe('the Responses API', () => {
  test('input items: the last user item text (input_text parts); a Response: its output_text parts', () => {
    const body: JsonObject = {
      model: 'm',
      input: [
        { role: 'user', content: 'first' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'input_image', image_url: 'data:,' }, { type: 'input_text', text: 'b' }] },
        { type: 'function_call_output', call_id: 'c', output: 'x' },
      ],
    };
    expect(requestText(body)).toEqual({ text: 'a\nb', source: 'lastUserMessage' });
    expect(requestText({ model: 'm', input: 'plain' })).toEqual({ text: 'plain', source: 'input' });
    const response: JsonObject = { object: 'response', output: [{ type: 'reasoning', summary: [] }, { type: 'message', content: [{ type: 'output_text', text: 'Answer', annotations: [] }] }] };
    expect(responseText(response)).toEqual({ text: 'Answer', source: 'response' });
  });
});
