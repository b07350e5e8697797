import { describe, expect, test } from 'bun:test';
import type { AttemptContinuation, JsonObject } from '@gateway/sdk';
import { ContinuationProcessor, DivergedAnswer, StreamBreak, sumUsage } from './continuation.ts';
import { OpenAiSsePassThrough } from './processors.ts';
import { SentAnswer } from './sent-answer.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

const chunk = (id: string, delta: JsonObject, finish: string | null = null, extra: JsonObject = {}) =>
  `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 2, model: 'other', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;

/** What the client already got: the first stream's role chunk and `text`. */
function sentSoFar(text: string): SentAnswer {
  const sent = new SentAnswer();
  sent.observe({ id: 'first', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] });
  sent.observe({ id: 'first', created: 1, model: 'm', choices: [{ index: 0, delta: { content: text } }] });
  return sent;
}

/** The frames a continuation writes for `input`, parsed (`[DONE]` kept as is). */
function frames(p: ContinuationProcessor, input: string): (JsonObject | string)[] {
  const out = dec.decode(p.push(enc.encode(input)) ?? new Uint8Array());
  return out
    .split('\n\n')
    .filter(Boolean)
    .map((f) => f.slice(6))
    .map((d) => (d === '[DONE]' ? d : (JSON.parse(d) as JsonObject)));
}

const prefill = (sent: string, prefilled = sent): AttemptContinuation => ({ mode: 'prefill', sent, prefilled });
const regenerate = (sent: string): AttemptContinuation => ({ mode: 'regenerate', sent, prefilled: '' });

describe('ContinuationProcessor', () => {
  test('prefill: the new text under the first stream id, created and model; no second role; [DONE] once', () => {
    const sent = sentSoFar('Hello ');
    const p = new ContinuationProcessor('x', sent, prefill('Hello '), undefined, false);
    const out = frames(p, `${chunk('second', { role: 'assistant', content: '' }) + chunk('second', { content: 'world' }) + chunk('second', {}, 'stop')}data: [DONE]\n\n`);
    expect(out).toEqual([
      { id: 'first', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'world' }, finish_reason: null }] },
      { id: 'first', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      '[DONE]',
    ]);
    expect(p.end().complete).toBe(true);
    expect(sent.text).toBe('Hello world');
  });

  test('prefill without the trailing whitespace: the repeated space is not sent twice, however the new text is split', () => {
    const p = new ContinuationProcessor('x', sentSoFar('Once upon a '), prefill('Once upon a ', 'Once upon a'), undefined, false);
    const out = frames(p, chunk('s', { content: '' }) + chunk('s', { content: ' ' }) + chunk('s', { content: 'time' }));
    expect(out.map((f) => (f as { choices: { delta: { content: string } }[] }).choices[0]!.delta.content)).toEqual(['time']);
    const whole = new ContinuationProcessor('x', sentSoFar('Once upon a '), prefill('Once upon a ', 'Once upon a'), undefined, false);
    expect(frames(whole, chunk('s', { content: ' time' })).map((f) => (f as { choices: { delta: { content: string } }[] }).choices[0]!.delta.content)).toEqual(['time']);
    const q = new ContinuationProcessor('x', sentSoFar('a\n'), prefill('a\n', 'a'), undefined, false);
    // Other whitespace than what was left out: the client has a line end already, the new leading space is dropped.
    expect(frames(q, chunk('s', { content: ' b' })).map((f) => (f as { choices: { delta: { content: string } }[] }).choices[0]!.delta.content)).toEqual(['b']);
  });

  test('regenerate: held until it covers the sent text, then only the remainder', () => {
    const sent = sentSoFar('Hello wor');
    const p = new ContinuationProcessor('x', sent, regenerate('Hello wor'), undefined, false);
    expect(frames(p, chunk('s', { role: 'assistant', content: '' }) + chunk('s', { content: 'Hel' }) + chunk('s', { content: 'lo ' }))).toEqual([]);
    const out = frames(p, chunk('s', { content: 'world' }) + chunk('s', { content: '!' }));
    expect(out.map((f) => (f as { choices: { delta: { content: string } }[] }).choices[0]!.delta.content)).toEqual(['ld', '!']);
    expect(sent.text).toBe('Hello world!');
  });

  test('regenerate: a different start, a tool call before the sent text is covered, or a shorter answer diverge', () => {
    const differs = new ContinuationProcessor('x', sentSoFar('Hello'), regenerate('Hello'), undefined, false);
    expect(() => differs.push(enc.encode(chunk('s', { content: 'Help' })))).toThrow(DivergedAnswer);
    const tool = new ContinuationProcessor('x', sentSoFar('Hello'), regenerate('Hello'), undefined, false);
    expect(() => tool.push(enc.encode(chunk('s', { tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '' } }] })))).toThrow(DivergedAnswer);
    const shorter = new ContinuationProcessor('x', sentSoFar('Hello there'), regenerate('Hello there'), undefined, false);
    expect(() => shorter.push(enc.encode(chunk('s', { content: 'Hello' }, 'stop')))).toThrow(DivergedAnswer);
    const ended = new ContinuationProcessor('x', sentSoFar('Hello there'), regenerate('Hello there'), undefined, false);
    expect(() => ended.push(enc.encode(`${chunk('s', { content: 'Hello' })}data: [DONE]\n\n`))).toThrow(DivergedAnswer);
  });

  test('the continuing attempt broke too: a StreamBreak with its error, after the chunks before it', () => {
    const p = new ContinuationProcessor('x', sentSoFar('a'), prefill('a'), undefined, false);
    let caught: unknown;
    try {
      p.push(enc.encode(`${chunk('s', { content: 'b' })}data: {"error":{"message":"gone","type":"upstream_error","code":"stream_interrupted","param":null},"provider":"y"}\n\n`));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StreamBreak);
    expect(caught).not.toBeInstanceOf(DivergedAnswer);
    expect((caught as StreamBreak).error.code).toBe('stream_interrupted');
    expect(dec.decode((caught as StreamBreak).validPrefix)).toContain('"content":"b"');
  });

  test('usage: the attempts added up, shown only to a client that asked; reasoning deltas are not repeated', () => {
    const before = { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 };
    const usage = { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14, completion_tokens_details: { reasoning_tokens: 1 } };
    const shown = new ContinuationProcessor('x', sentSoFar('a'), prefill('a'), before, true);
    const out = frames(shown, `${chunk('s', { reasoning_content: 'hmm', content: 'b' })}data: ${JSON.stringify({ id: 's', object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
    expect((out[0] as { choices: { delta: JsonObject }[] }).choices[0]!.delta).toEqual({ content: 'b' });
    expect((out[1] as { usage: JsonObject }).usage).toEqual({ prompt_tokens: 22, completion_tokens: 5, total_tokens: 27, completion_tokens_details: { reasoning_tokens: 1 } });
    expect(shown.usage).toEqual((out[1] as { usage: JsonObject }).usage);
    const hidden = new ContinuationProcessor('x', sentSoFar('a'), prefill('a'), before, false);
    expect(frames(hidden, `data: ${JSON.stringify({ id: 's', object: 'chat.completion.chunk', choices: [], usage })}\n\n`)).toEqual([]);
    expect(hidden.usage?.total_tokens).toBe(27);
  });

  test('sumUsage adds numbers and nested details, keeps one side when the other is missing', () => {
    expect(sumUsage(undefined, { a: 1 })).toEqual({ a: 1 });
    expect(sumUsage({ a: 1 }, undefined)).toEqual({ a: 1 });
    expect(sumUsage({ a: 1, d: { x: 1 } }, { a: 2, d: { x: 2, y: 1 }, s: 'k' })).toEqual({ a: 3, d: { x: 3, y: 1 }, s: 'k' });
  });
});

describe('SentAnswer and completion without [DONE]', () => {
  test('tool calls, several choices or a finish make an answer not continuable', () => {
    const tool = new SentAnswer();
    tool.observe({ id: 'a', choices: [{ index: 0, delta: { tool_calls: [{ index: 0 }] } }] });
    expect(tool.continuable).toBe(false);
    const many = new SentAnswer();
    many.observe({ id: 'a', choices: [{ index: 1, delta: { content: 'x' } }] });
    expect(many.continuable).toBe(false);
    const finished = new SentAnswer();
    finished.observe({ id: 'a', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    expect(finished.continuable).toBe(false);
    const text = new SentAnswer();
    text.observe({ id: 'a', choices: [{ index: 0, delta: { content: 'x' } }] });
    expect(text.continuable && text.started).toBe(true);
  });

  test('a pass-through stream with its finish and usage but no [DONE] ends complete, with one [DONE] added', () => {
    const p = new OpenAiSsePassThrough();
    p.push(enc.encode(chunk('a', { content: 'x' }) + chunk('a', {}, 'stop') + chunk('a', {}, null, { choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })));
    const end = p.end();
    expect(end.complete).toBe(true);
    expect(dec.decode(end.bytes)).toBe('data: [DONE]\n\n');
    // Without the usage it stays a break.
    const q = new OpenAiSsePassThrough();
    q.push(enc.encode(chunk('a', { content: 'x' }) + chunk('a', {}, 'stop')));
    expect(q.end().complete).toBe(false);
  });

  test('a last event without its blank line gets one before the added [DONE]', () => {
    const p = new OpenAiSsePassThrough();
    p.push(enc.encode(`${chunk('a', {}, 'stop')}data: ${JSON.stringify({ id: 'a', choices: [], usage: { total_tokens: 2 } })}`));
    const end = p.end();
    expect(end.complete).toBe(true);
    expect(dec.decode(end.bytes)).toBe(`data: ${JSON.stringify({ id: 'a', choices: [], usage: { total_tokens: 2 } })}\n\ndata: [DONE]\n\n`);
  });
});
