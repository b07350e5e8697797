import { describe, expect, test } from 'bun:test';
import type { StreamEvent } from '@gateway/sdk';
import { createDecoder, type FrameDecoder, NdjsonDecoder, SseDecoder } from './decoders.ts';
import { AwsEventStreamDecoder } from './aws-eventstream.ts';

const enc = new TextEncoder();

/** Feeds the text in the given pieces and returns every event, those from `end()` included. */
function decode(decoder: FrameDecoder, pieces: (string | Uint8Array)[]): StreamEvent[] {
  const out: StreamEvent[] = [];
  for (const piece of pieces) out.push(...decoder.push(typeof piece === 'string' ? enc.encode(piece) : piece));
  out.push(...decoder.end().events);
  return out;
}

/** Every way of cutting `text` into two pieces, and into single bytes. */
function splits(text: string): Uint8Array[][] {
  const bytes = enc.encode(text);
  const out: Uint8Array[][] = [];
  for (let i = 0; i <= bytes.length; i++) out.push([bytes.subarray(0, i), bytes.subarray(i)]);
  out.push([...bytes].map((b) => Uint8Array.of(b)));
  return out;
}

const sse = () => new SseDecoder();
const ndjson = () => new NdjsonDecoder();

describe('SseDecoder', () => {
  test('events separated by a blank line, with `event:` names', () => {
    const events = decode(sse(), ['event: message_start\ndata: {"a":1}\n\ndata: {"b":2}\n\n']);
    expect(events).toEqual([
      { event: 'message_start', data: '{"a":1}' },
      { event: undefined, data: '{"b":2}' },
    ]);
  });

  test('the event name does not leak into the next event', () => {
    const events = decode(sse(), ['event: ping\ndata: 1\n\ndata: 2\n\n']);
    expect(events.map((e) => e.event)).toEqual(['ping', undefined]);
  });

  test('an event split across chunk boundaries at every possible byte comes out whole', () => {
    const text = 'event: delta\ndata: {"text":"héllo wörld ✓"}\n\ndata: [DONE]\n\n';
    const expected = [
      { event: 'delta', data: '{"text":"héllo wörld ✓"}' },
      { event: undefined, data: '[DONE]' },
    ];
    for (const pieces of splits(text)) expect(decode(sse(), pieces)).toEqual(expected);
  });

  test('CRLF line endings, also with CR and LF in different chunks', () => {
    const text = 'event: a\r\ndata: one\r\n\r\ndata: two\r\n\r\n';
    const expected = [
      { event: 'a', data: 'one' },
      { event: undefined, data: 'two' },
    ];
    expect(decode(sse(), [text])).toEqual(expected);
    for (const pieces of splits(text)) expect(decode(sse(), pieces)).toEqual(expected);
  });

  test('comment lines (starting with `:`) are ignored, keep-alives included', () => {
    const events = decode(sse(), [': keep-alive\n\n:another\ndata: x\n: in the middle\n\n: OPENROUTER PROCESSING\n\n']);
    expect(events).toEqual([{ event: undefined, data: 'x' }]);
  });

  test('multi-line data is joined with newlines', () => {
    const events = decode(sse(), ['data: line one\ndata: line two\ndata:\ndata: line four\n\n']);
    expect(events).toEqual([{ event: undefined, data: 'line one\nline two\n\nline four' }]);
  });

  test('`data:` without a space, and only the first space is removed', () => {
    const events = decode(sse(), ['data:{"x":1}\n\ndata:  two spaces\n\n']);
    expect(events.map((e) => e.data)).toEqual(['{"x":1}', ' two spaces']);
  });

  test('unknown fields (id, retry) are ignored; a blank line without data makes no event', () => {
    const events = decode(sse(), ['id: 7\nretry: 1000\n\n\n\nid: 8\ndata: y\n\n']);
    expect(events).toEqual([{ event: undefined, data: 'y' }]);
  });

  test('a field line without a colon is a field with an empty value', () => {
    const events = decode(sse(), ['data\n\n']);
    expect(events).toEqual([{ event: undefined, data: '' }]);
  });

  test('a last event without its blank line, or without its final newline, is still delivered at the end', () => {
    expect(decode(sse(), ['data: a\n\ndata: last\n'])).toEqual([
      { event: undefined, data: 'a' },
      { event: undefined, data: 'last' },
    ]);
    expect(decode(sse(), ['data: a\n\nevent: e\ndata: no-newline'])).toEqual([
      { event: undefined, data: 'a' },
      { event: 'e', data: 'no-newline' },
    ]);
    expect(sse().end()).toEqual({ events: [], truncated: false });
  });

  test('events come out as soon as their blank line arrives', () => {
    const d = sse();
    expect(d.push(enc.encode('data: a\n'))).toEqual([]);
    expect(d.push(enc.encode('\n'))).toEqual([{ event: undefined, data: 'a' }]);
    expect(d.push(enc.encode('data: b'))).toEqual([]);
    expect(d.push(enc.encode('\n\ndata: c\n\n'))).toEqual([
      { event: undefined, data: 'b' },
      { event: undefined, data: 'c' },
    ]);
  });

  test('a multi-byte character split across chunks is not corrupted', () => {
    const bytes = enc.encode('data: 日本\n\n');
    const events = decode(sse(), [bytes.subarray(0, 8), bytes.subarray(8)]);
    expect(events).toEqual([{ event: undefined, data: '日本' }]);
  });
});

describe('NdjsonDecoder', () => {
  test('one event per line, lines split across chunks at every byte', () => {
    const text = '{"a":1}\n{"b":"ü"}\n{"c":3}\n';
    const expected = [{ data: '{"a":1}' }, { data: '{"b":"ü"}' }, { data: '{"c":3}' }];
    for (const pieces of splits(text)) expect(decode(ndjson(), pieces)).toEqual(expected);
  });

  test('CRLF and blank lines', () => {
    expect(decode(ndjson(), ['{"a":1}\r\n\r\n  \n{"b":2}\r\n'])).toEqual([{ data: '{"a":1}' }, { data: '{"b":2}' }]);
  });

  test('a last line without a newline is delivered at the end', () => {
    const d = ndjson();
    expect(d.push(enc.encode('{"a":1}\n{"done":true}'))).toEqual([{ data: '{"a":1}' }]);
    expect(d.end()).toEqual({ events: [{ data: '{"done":true}' }], truncated: false });
    expect(ndjson().end()).toEqual({ events: [], truncated: false });
  });
});

describe('decoders by framing', () => {
  test('sse, ndjson and aws-eventstream are built in; an unknown framing is an error naming it', () => {
    expect(createDecoder('sse')).toBeInstanceOf(SseDecoder);
    expect(createDecoder('ndjson')).toBeInstanceOf(NdjsonDecoder);
    expect(createDecoder('aws-eventstream')).toBeInstanceOf(AwsEventStreamDecoder);
    expect(() => createDecoder('toString' as never)).toThrow('no decoder for stream framing "toString"');
    expect(() => createDecoder('made-up' as never)).toThrow('no decoder for stream framing "made-up"');
  });
});
