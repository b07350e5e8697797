import { describe, expect, test } from 'bun:test';
import type { StreamEvent, StreamState, TranslateContext } from '@gateway/sdk';
import { MalformedStreamError, OpenAiSsePassThrough, TranslatingProcessor } from './processors.ts';

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

describe('OpenAiSsePassThrough checks each event', () => {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  test('whole-line chunks pass as the same bytes', () => {
    const p = new OpenAiSsePassThrough();
    const chunk = enc.encode('data: {"a":1}\n\n');
    expect(p.push(chunk)).toBe(chunk);
  });
  test('a line split across chunks is held back until complete, bytes unchanged overall', () => {
    const p = new OpenAiSsePassThrough();
    const out: string[] = [];
    for (const part of ['data: {"a"', ':1}\n', '\ndata: [DO', 'NE]\n\n']) {
      const bytes = p.push(enc.encode(part));
      if (bytes) out.push(dec.decode(bytes));
    }
    const end = p.end();
    expect(out.join('')).toBe('data: {"a":1}\n\ndata: [DONE]\n\n');
    expect(end.complete).toBe(true);
  });
  test('a malformed event throws before it is forwarded', () => {
    const p = new OpenAiSsePassThrough();
    expect(p.push(enc.encode('data: {"a":1}\n\n'))).toBeDefined();
    expect(() => p.push(enc.encode('data: {"a":\n\n'))).toThrow(/malformed stream chunk/);
  });
  test('a malformed last event without its newline throws at the end', () => {
    const p = new OpenAiSsePassThrough();
    p.push(enc.encode('data: {"a":1}\n\ndata: nope'));
    expect(() => p.end()).toThrow(/malformed/);
  });
  test('comments and event names pass; a provider error event is JSON and passes', () => {
    const p = new OpenAiSsePassThrough();
    expect(() => p.push(enc.encode(': keep-alive\n\nevent: x\ndata: {"error":{"message":"boom"}}\n\n'))).not.toThrow();
    expect(p.end().complete).toBe(false);
  });
});

describe('OpenAiSsePassThrough: a malformed event after valid ones in the same read', () => {
  test('the valid events before it are handed over with the error', () => {
    const p = new OpenAiSsePassThrough();
    const enc = new TextEncoder();
    let caught: unknown;
    try {
      p.push(enc.encode('data: {"a":1}\n\ndata: {"b":2}\n\ndata: {oops\n\n'));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(MalformedStreamError);
    const prefix = (caught as MalformedStreamError).validPrefix;
    expect(new TextDecoder().decode(prefix)).toBe('data: {"a":1}\n\ndata: {"b":2}\n\n');
  });
});

describe('TranslatingProcessor: an adapter that throws on an event', () => {
  test('the chunks of the earlier events of the same read are handed over with the error', () => {
    const p = new TranslatingProcessor(
      {
        framing: 'sse',
        toChunks: (event: StreamEvent) => {
          if (event.event === 'error') throw new Error('provider stream error');
          return { chunks: [{ text: event.data }] };
        },
      },
      ctx,
    );
    let caught: unknown;
    try {
      p.push(new TextEncoder().encode('event: a\ndata: one\n\nevent: a\ndata: two\n\nevent: error\ndata: x\n\n'));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(MalformedStreamError);
    expect(new TextDecoder().decode((caught as MalformedStreamError).validPrefix)).toBe('data: {"text":"one"}\n\ndata: {"text":"two"}\n\n');
    expect(((caught as MalformedStreamError).original as Error).message).toBe('provider stream error');
  });
});

describe('OpenAiSsePassThrough with hideUsage (the gateway asked for usage the client did not)', () => {
  // One stream as the provider sends it with `stream_options.include_usage`, and as it would without.
  const chunk = (n: number, extra: string) => `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${n}"}}]${extra}}`;
  const usage = '{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}';
  const withOption = `data: ${chunk(1, ',"usage":null')}\n\n: keep-alive\n\ndata: ${chunk(2, ', "usage" : null')}\n\ndata: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":${usage}}\n\ndata: [DONE]\n\n`;
  const without = `data: ${chunk(1, '')}\n\n: keep-alive\n\ndata: ${chunk(2, '')}\n\ndata: [DONE]\n\n`;

  const run = (parts: string[]) => {
    const p = new OpenAiSsePassThrough(true);
    let out = '';
    for (const part of parts) {
      const bytes = p.push(enc.encode(part));
      if (bytes) out += dec.decode(bytes);
    }
    const end = p.end();
    if (end.bytes) out += dec.decode(end.bytes);
    return { out, complete: end.complete, usage: p.usage };
  };

  test('the client gets the bytes of the stream without the option, split at any point; the usage is kept', () => {
    for (let i = 0; i <= withOption.length; i++) {
      const got = run([withOption.slice(0, i), withOption.slice(i)]);
      expect(got.out).toBe(without);
      expect(got.complete).toBe(true);
      expect(got.usage).toEqual(JSON.parse(usage));
    }
    expect(run([...withOption]).out).toBe(without);
  });

  test('CRLF line ends and a last event without its blank line are kept as sent', () => {
    const crlf = `data: ${chunk(1, ',"usage":null')}\r\n\r\ndata: [DONE]`;
    expect(run([crlf]).out).toBe(`data: ${chunk(1, '')}\r\n\r\ndata: [DONE]`);
  });

  test('`"usage": null` elsewhere than last: the chunk re-serialised without it, the same JSON otherwise', () => {
    const got = run(['data: {"usage":null,"id":"c","choices":[{"index":0}]}\n\ndata: [DONE]\n\n']);
    expect(got.out).toBe('data: {"id":"c","choices":[{"index":0}]}\n\ndata: [DONE]\n\n');
  });

  test('without hideUsage the same stream passes unchanged', () => {
    const p = new OpenAiSsePassThrough();
    expect(dec.decode(p.push(enc.encode(withOption)))).toBe(withOption);
    expect(p.usage).toEqual(JSON.parse(usage));
  });

  test('a malformed event: the filtered events before it are handed over with the error', () => {
    const p = new OpenAiSsePassThrough(true);
    let caught: unknown;
    try {
      p.push(enc.encode(`data: ${chunk(1, ',"usage":null')}\n\ndata: {oops\n\n`));
    } catch (error) {
      caught = error;
    }
    expect(dec.decode((caught as MalformedStreamError).validPrefix)).toBe(`data: ${chunk(1, '')}\n\n`);
  });
});

describe('TranslatingProcessor: the usage an adapter records', () => {
  test('kept for the completion although no chunk shows it to the client', () => {
    const p = new TranslatingProcessor(
      {
        framing: 'ndjson',
        toChunks: (event: StreamEvent) => {
          const json = JSON.parse(event.data) as { text?: string; tokens?: number };
          if (json.tokens !== undefined) return { chunks: [], done: true, usage: { total_tokens: json.tokens } };
          return { chunks: [{ text: json.text ?? '' }] };
        },
      },
      ctx,
    );
    const out = dec.decode(p.push(enc.encode('{"text":"a"}\n{"tokens":7}\n')));
    expect(out).toBe('data: {"text":"a"}\n\ndata: [DONE]\n\n');
    expect(p.usage).toEqual({ total_tokens: 7 });
  });
});
