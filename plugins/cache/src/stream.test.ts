import { describe, expect, test } from 'bun:test';
import { assembleStream, replayAsStream, sseEvents } from './stream.ts';

const sse = (...events: unknown[]) => events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');
const meta = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', system_fingerprint: 'fp' };

describe('assembling a chat stream', () => {
  test('content, finish reason and usage', () => {
    const text = sse(
      { ...meta, choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }], usage: null },
      { ...meta, choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: null }], usage: null },
      { ...meta, choices: [{ index: 0, delta: { content: ' world' }, finish_reason: null }], usage: null },
      { ...meta, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null },
      { ...meta, choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
      '[DONE]',
    );
    const out = assembleStream('chat', text);
    expect(out?.usage).toBe(true);
    expect(JSON.parse(out?.body as string)).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini',
      system_fingerprint: 'fp',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello world', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    });
  });

  test('tool calls, several choices, no usage', () => {
    const text = sse(
      { ...meta, choices: [{ index: 1, delta: { role: 'assistant', content: 'B' }, finish_reason: null }] },
      { ...meta, choices: [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }, finish_reason: null }] },
      { ...meta, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }, finish_reason: null }] },
      { ...meta, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '1}' } }] }, finish_reason: 'tool_calls' }] },
      { ...meta, choices: [{ index: 1, delta: {}, finish_reason: 'stop' }] },
      '[DONE]',
    );
    const out = assembleStream('chat', text);
    expect(out?.usage).toBe(false);
    const body = JSON.parse(out?.body as string);
    expect(body.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
    expect(body.choices[1].message.content).toBe('B');
    expect(body.usage).toBeUndefined();
  });

  test('streams that may not be stored', () => {
    const chunk = { ...meta, choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 'stop' }] };
    expect(assembleStream('chat', sse(chunk))).toBeUndefined(); // no [DONE]
    expect(assembleStream('chat', sse(chunk, { error: { message: 'cut' } }))).toBeUndefined(); // error frame
    expect(assembleStream('chat', `${sse(chunk)}data: {not json\n\n${sse('[DONE]')}`)).toBeUndefined();
    expect(assembleStream('chat', sse('[DONE]'))).toBeUndefined();
  });

  test('text completion streams', () => {
    const c = { id: 'cmpl-1', object: 'text_completion', created: 1, model: 'gpt-3.5-turbo-instruct' };
    const out = assembleStream(
      'text',
      sse({ ...c, choices: [{ index: 0, text: 'Hel', finish_reason: null, logprobs: null }] }, { ...c, choices: [{ index: 0, text: 'lo', finish_reason: 'length', logprobs: null }] }, '[DONE]'),
    );
    expect(JSON.parse(out?.body as string)).toEqual({ id: 'cmpl-1', object: 'text_completion', created: 1, model: 'gpt-3.5-turbo-instruct', choices: [{ text: 'Hello', index: 0, logprobs: null, finish_reason: 'length' }] });
  });
});

describe('replaying a stored answer as a stream', () => {
  const answer = {
    id: 'chatcmpl-9',
    object: 'chat.completion',
    created: 5,
    model: 'gpt-4o-mini',
    choices: [
      { index: 0, message: { role: 'assistant', content: 'Hi there', refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' },
      { index: 1, message: { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, logprobs: null, finish_reason: 'tool_calls' },
    ],
    usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
  };

  test('valid SSE that ends with [DONE] and assembles back to the same answer', () => {
    const text = replayAsStream('chat', JSON.stringify(answer), true) as string;
    const events = sseEvents(text);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === 'chatcmpl-9')).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: answer.usage });
    expect(chunks.find((c) => c.choices[0]?.delta.tool_calls)?.choices[0].delta.tool_calls[0].index).toBe(0);
    const back = JSON.parse(assembleStream('chat', text)?.body as string);
    expect(back.choices[0].message.content).toBe('Hi there');
    expect(back.choices[1].message.tool_calls).toEqual(answer.choices[1]?.message.tool_calls);
    expect(back.usage).toEqual(answer.usage);
  });

  test('no usage chunk unless asked; no replay when usage is asked for and missing', () => {
    const text = replayAsStream('chat', JSON.stringify(answer), false) as string;
    expect(text).not.toContain('"usage"');
    const { usage: _, ...noUsage } = answer;
    expect(replayAsStream('chat', JSON.stringify(noUsage), true)).toBeUndefined();
    expect(replayAsStream('chat', 'not json', false)).toBeUndefined();
  });

  test('text completions', () => {
    const text = replayAsStream('text', JSON.stringify({ id: 'cmpl-1', object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text: 'Hello', finish_reason: 'stop', logprobs: null }] }), false) as string;
    const chunks = sseEvents(text).slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.map((c) => c.choices[0].text).join('')).toBe('Hello');
    expect(chunks.every((c) => c.object === 'text_completion')).toBe(true);
  });
});
