import { describe, expect, test } from 'bun:test';
import type { StreamEvent, StreamState, TranslateContext } from '@gateway/sdk';
import { OpenAiSsePassThrough, TranslatingProcessor } from './processors.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();
const ctx: TranslateContext = { endpoint: 'chatComplete', model: 'm', strictWireCompliance: true, now: 1 };

describe('OpenAiSsePassThrough', () => {
  test('returns each chunk unchanged (same bytes, same object)', () => {
    const p = new OpenAiSsePassThrough();
    const chunk = enc.encode('data: {"id":"1"}\n\n');
    expect(p.push(chunk)).toBe(chunk);
  });

  test('complete only once `data: [DONE]` was seen, also when split across chunks', () => {
    const text = 'data: {"id":"1"}\n\ndata: [DONE]\n\n';
    for (let i = 0; i <= text.length; i++) {
      const p = new OpenAiSsePassThrough();
      p.push(enc.encode(text.slice(0, i)));
      p.push(enc.encode(text.slice(i)));
      expect(p.end()).toEqual({ complete: true });
    }
    const bytewise = new OpenAiSsePassThrough();
    for (const ch of text) bytewise.push(enc.encode(ch));
    expect(bytewise.end().complete).toBe(true);
  });

  test('`data:[DONE]` without the space counts too', () => {
    const p = new OpenAiSsePassThrough();
    p.push(enc.encode('data:[DO'));
    p.push(enc.encode('NE]\n\n'));
    expect(p.end().complete).toBe(true);
  });

  test('a stream without [DONE] is incomplete', () => {
    const p = new OpenAiSsePassThrough();
    p.push(enc.encode('data: {"id":"1"}\n\n'));
    expect(p.end()).toEqual({ complete: false });
  });

  test('"data: [DONE]" inside a chunk payload (model text) is not the end marker', () => {
    // The marker is a whole SSE line. A model that writes about SSE can emit the text `data: [DONE]` inside a JSON
    // string; a stream cut after that must still be reported as cut.
    const p = new OpenAiSsePassThrough();
    p.push(enc.encode('data: {"choices":[{"delta":{"content":"end your stream with data: [DONE] and a blank line"}}]}\n\n'));
    expect(p.end().complete).toBe(false);
  });
});

describe('TranslatingProcessor', () => {
  const translator = {
    framing: 'ndjson' as const,
    toChunks(event: StreamEvent, state: StreamState) {
      const json = JSON.parse(event.data) as { text?: string; done?: boolean };
      state.n = ((state.n as number) ?? 0) + 1;
      if (json.done) return { chunks: [{ n: state.n as number, finish: true }], done: true };
      return { chunks: [{ n: state.n as number, text: json.text ?? '' }] };
    },
  };

  test('decodes the framing, maps events to OpenAI SSE chunks, ends with [DONE] when the adapter says done', () => {
    const p = new TranslatingProcessor(translator, ctx);
    const a = p.push(enc.encode('{"text":"he'));
    expect(a).toBeUndefined();
    const b = p.push(enc.encode('llo"}\n{"text":"!"}\n'));
    expect(dec.decode(b)).toBe('data: {"n":1,"text":"hello"}\n\ndata: {"n":2,"text":"!"}\n\n');
    const c = p.push(enc.encode('{"done":true}\n{"text":"ignored after done"}\n'));
    expect(dec.decode(c)).toBe('data: {"n":3,"finish":true}\n\ndata: [DONE]\n\n');
    expect(p.end()).toEqual({ bytes: undefined, complete: true });
  });

  test('a last event without its newline is translated at the end', () => {
    const p = new TranslatingProcessor(translator, ctx);
    p.push(enc.encode('{"text":"a"}\n{"done":true}'));
    const { bytes, complete } = p.end();
    expect(dec.decode(bytes)).toBe('data: {"n":2,"finish":true}\n\ndata: [DONE]\n\n');
    expect(complete).toBe(true);
  });

  test('an answer that ends before the adapter saw its end is incomplete', () => {
    const p = new TranslatingProcessor(translator, ctx);
    p.push(enc.encode('{"text":"a"}\n'));
    expect(p.end().complete).toBe(false);
  });

  test('the adapter throwing surfaces from push (the relay turns it into an error frame)', () => {
    const p = new TranslatingProcessor(translator, ctx);
    expect(() => p.push(enc.encode('not json\n'))).toThrow();
  });
});
