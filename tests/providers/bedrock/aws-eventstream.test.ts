/**
 * The core's aws-eventstream decoder (core/pipeline/src/streams/aws-eventstream.ts), fed byte-exact frames built
 * here: messages split at every byte, every header type, and each kind of damage (a malformed frame throws).
 */
import { describe, expect, test } from 'bun:test';
import { crc32 as zlibCrc32 } from 'node:zlib';
import type { StreamEvent } from '@gateway/sdk';
import { AwsEventStreamDecoder, crc32, EventStreamMessageDecoder } from '../../../core/pipeline/src/streams/aws-eventstream.ts';
import { createDecoder, type FrameDecoder } from '../../../core/pipeline/src/streams/decoders.ts';
import { concatBytes, encodeMessage, eventMessage, exceptionMessage, type HeaderSpec } from './eventstream.ts';

const enc = new TextEncoder();

function decodeAll(decoder: FrameDecoder, pieces: Uint8Array[]): StreamEvent[] {
  const out: StreamEvent[] = [];
  for (const piece of pieces) out.push(...decoder.push(piece));
  out.push(...decoder.end().events);
  return out;
}

/** A frame with the given length fields and header bytes, and correct CRCs (to reach the checks behind them). */
function rawFrame(headerBytes: Uint8Array, payload: Uint8Array, lengths: { total?: number; headers?: number } = {}): Uint8Array {
  const total = lengths.total ?? 16 + headerBytes.byteLength + payload.byteLength;
  const out = new Uint8Array(16 + headerBytes.byteLength + payload.byteLength);
  const view = new DataView(out.buffer);
  view.setUint32(0, total);
  view.setUint32(4, lengths.headers ?? headerBytes.byteLength);
  view.setUint32(8, zlibCrc32(out.subarray(0, 8)));
  out.set(headerBytes, 12);
  out.set(payload, 12 + headerBytes.byteLength);
  view.setUint32(out.byteLength - 4, zlibCrc32(out.subarray(0, out.byteLength - 4)));
  return out;
}

describe('byte-exact frames', () => {
  // A message with no headers and the payload {"foo": "bar"}: 30 bytes, both CRCs worked out by hand from the
  // format (total 30 = 12 prelude + 14 payload + 4 CRC). The same bytes appear as an example of the format in
  // public event-stream encoders, which makes them an outside check of the encoder used by the other tests.
  const plain = Uint8Array.from([
    0, 0, 0, 30, 0, 0, 0, 0, 186, 242, 246, 138,
    ...enc.encode('{"foo": "bar"}'),
    174, 114, 88, 228,
  ]);
  // The same payload with one string header, content-type: application/json (header section: 1 + 12 + 1 + 2 + 16).
  const withHeader = Uint8Array.from([
    0, 0, 0, 62, 0, 0, 0, 32, 64, 93, 249, 70,
    12, ...enc.encode('content-type'), 7, 0, 16, ...enc.encode('application/json'),
    ...enc.encode('{"foo": "bar"}'),
    111, 162, 191, 59,
  ]);

  test('the test encoder produces exactly these bytes', () => {
    expect(encodeMessage([], '{"foo": "bar"}')).toEqual(plain);
    expect(encodeMessage([{ name: 'content-type', type: 'string', value: 'application/json' }], '{"foo": "bar"}')).toEqual(withHeader);
  });

  test('the decoder reads them: headers and payload', () => {
    const messages = new EventStreamMessageDecoder().push(concatBytes([plain, withHeader]));
    expect(messages).toHaveLength(2);
    expect(messages[0]?.headers).toEqual({});
    expect(new TextDecoder().decode(messages[0]?.payload)).toBe('{"foo": "bar"}');
    expect(messages[1]?.headers).toEqual({ 'content-type': 'application/json' });
  });

  test('crc32 is the gzip CRC-32', () => {
    expect(crc32(enc.encode('123456789'))).toBe(0xcbf43926);
    const random = crypto.getRandomValues(new Uint8Array(4096));
    expect(crc32(random)).toBe(zlibCrc32(random));
    expect(crc32(random, 100, 900)).toBe(zlibCrc32(random.subarray(100, 900)));
  });
});

describe('AwsEventStreamDecoder', () => {
  const events = [
    eventMessage('messageStart', { p: 'abc', role: 'assistant' }),
    eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'héllo wörld ✓' }, p: 'ab' }),
    eventMessage('messageStop', { stopReason: 'end_turn' }),
  ];
  const stream = concatBytes(events);
  const expected: StreamEvent[] = [
    { event: 'messageStart', data: '{"p":"abc","role":"assistant"}' },
    { event: 'contentBlockDelta', data: '{"contentBlockIndex":0,"delta":{"text":"héllo wörld ✓"},"p":"ab"}' },
    { event: 'messageStop', data: '{"stopReason":"end_turn"}' },
  ];

  test('is what createDecoder gives for aws-eventstream', () => {
    expect(createDecoder('aws-eventstream')).toBeInstanceOf(AwsEventStreamDecoder);
  });

  test('events come out with :event-type as the name and the payload as text', () => {
    expect(decodeAll(new AwsEventStreamDecoder(), [stream])).toEqual(expected);
  });

  test('split at every byte into two pieces, and byte by byte, the events come out whole', () => {
    for (let i = 0; i <= stream.byteLength; i++) {
      expect(decodeAll(new AwsEventStreamDecoder(), [stream.subarray(0, i), stream.subarray(i)])).toEqual(expected);
    }
    expect(decodeAll(new AwsEventStreamDecoder(), [...stream].map((b) => Uint8Array.of(b)))).toEqual(expected);
  });

  test('a message is emitted as soon as its last byte arrives, not before', () => {
    const decoder = new AwsEventStreamDecoder();
    const first = events[0] as Uint8Array;
    expect(decoder.push(first.subarray(0, first.byteLength - 1))).toEqual([]);
    expect(decoder.push(first.subarray(first.byteLength - 1))).toEqual([expected[0]]);
    expect(decoder.end()).toEqual({ events: [], truncated: false });
  });

  test('the caller may reuse its buffer after push (reads shorter and longer than a prelude)', () => {
    for (const cut of [5, 20]) {
      const decoder = new AwsEventStreamDecoder();
      const buffer = stream.slice(0, cut);
      decoder.push(buffer);
      buffer.fill(0);
      expect(decodeAll(decoder, [stream.slice(cut)])).toEqual(expected);
    }
  });

  test('an exception message becomes an event named by :exception-type', () => {
    const out = decodeAll(new AwsEventStreamDecoder(), [concatBytes([events[0] as Uint8Array, exceptionMessage('throttlingException', 'slow down')])]);
    expect(out[1]).toEqual({ event: 'throttlingException', data: '{"message":"slow down"}' });
  });

  test('an error message (protocol-level) throws with its code and message', () => {
    const frame = encodeMessage(
      [
        { name: ':message-type', type: 'string', value: 'error' },
        { name: ':error-code', type: 'string', value: 'InternalFailure' },
        { name: ':error-message', type: 'string', value: 'it broke' },
      ],
      '',
    );
    expect(() => new AwsEventStreamDecoder().push(frame)).toThrow('InternalFailure: it broke');
  });

  test('an error message after good ones in the same read: those come out first, the next call throws', () => {
    const error = encodeMessage([{ name: ':message-type', type: 'string', value: 'error' }, { name: ':error-code', type: 'string', value: 'Boom' }], '');
    const decoder = new AwsEventStreamDecoder();
    expect(decoder.push(concatBytes([events[0] as Uint8Array, error]))).toEqual([expected[0]]);
    expect(() => decoder.end()).toThrow('Boom');
  });

  test('a message of an unknown :message-type throws', () => {
    const frame = encodeMessage([{ name: ':message-type', type: 'string', value: 'gossip' }], '{}');
    expect(() => new AwsEventStreamDecoder().push(frame)).toThrow('unknown type');
  });

  test('a stream that stops inside a message is reported truncated', () => {
    const decoder = new AwsEventStreamDecoder();
    expect(decoder.push(stream.subarray(0, stream.byteLength - 3))).toEqual(expected.slice(0, 2));
    expect(decoder.end()).toEqual({ events: [], truncated: true });
    const short = new AwsEventStreamDecoder();
    short.push(stream.subarray(0, 5));
    expect(short.end().truncated).toBe(true);
  });
});

describe('every header value type', () => {
  test('decodes booleans, integers, byte arrays, strings, timestamps and UUIDs', () => {
    const uuid = Uint8Array.from({ length: 16 }, (_, i) => i * 17);
    const headers: HeaderSpec[] = [
      { name: 'yes', type: 'true' },
      { name: 'no', type: 'false' },
      { name: 'b', type: 'byte', value: -5 },
      { name: 's', type: 'short', value: -1234 },
      { name: 'i', type: 'int', value: 123456789 },
      { name: 'l', type: 'long', value: -(2n ** 40n) },
      { name: 'raw', type: 'bytes', value: Uint8Array.of(1, 2, 255) },
      { name: 'str', type: 'string', value: 'ünïcode' },
      { name: 'when', type: 'timestamp', value: 1_700_000_000_123n },
      { name: 'id', type: 'uuid', value: uuid },
    ];
    const [message] = new EventStreamMessageDecoder().push(encodeMessage(headers, 'x'));
    expect(message?.headers).toEqual({
      yes: true,
      no: false,
      b: -5,
      s: -1234,
      i: 123456789,
      l: -(2n ** 40n),
      raw: Uint8Array.of(1, 2, 255),
      str: 'ünïcode',
      when: 1_700_000_000_123,
      id: '00112233445566778899aabbccddeeff',
    });
  });
});

describe('malformed frames throw', () => {
  const good = eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'hi' } });

  test('a corrupted message CRC', () => {
    const bad = good.slice();
    bad[bad.byteLength - 1] = (bad[bad.byteLength - 1] as number) ^ 0x01;
    expect(() => new AwsEventStreamDecoder().push(bad)).toThrow('message CRC mismatch');
  });

  test('a payload byte changed in transit (the message CRC no longer matches)', () => {
    const bad = good.slice();
    bad[bad.byteLength - 8] = (bad[bad.byteLength - 8] as number) ^ 0x20;
    expect(() => new AwsEventStreamDecoder().push(bad)).toThrow('message CRC mismatch');
  });

  test('a corrupted prelude CRC, detected before the length is trusted', () => {
    const bad = good.slice();
    bad[9] = (bad[9] as number) ^ 0xff;
    expect(() => new AwsEventStreamDecoder().push(bad.subarray(0, 12))).toThrow('prelude CRC mismatch');
  });

  test('a length that changed in transit', () => {
    const bad = good.slice();
    bad[3] = (bad[3] as number) + 1;
    expect(() => new AwsEventStreamDecoder().push(bad)).toThrow('prelude CRC mismatch');
  });

  test('a total length shorter than the fixed overhead, or beyond the 16 MiB limit', () => {
    expect(() => new AwsEventStreamDecoder().push(rawFrame(new Uint8Array(0), new Uint8Array(0), { total: 15 }))).toThrow('out of range');
    expect(() => new AwsEventStreamDecoder().push(rawFrame(new Uint8Array(0), new Uint8Array(0), { total: 64 * 1024 * 1024 }))).toThrow('out of range');
  });

  test('a headers length that does not fit the message', () => {
    expect(() => new AwsEventStreamDecoder().push(rawFrame(new Uint8Array(0), enc.encode('{}'), { headers: 3 }))).toThrow('does not fit');
  });

  test('a header that runs past the header section', () => {
    // Name length 10, but only 3 bytes of header section.
    expect(() => new AwsEventStreamDecoder().push(rawFrame(Uint8Array.of(10, 97, 98), enc.encode('{}')))).toThrow('runs past');
  });

  test('an unknown header value type', () => {
    expect(() => new AwsEventStreamDecoder().push(rawFrame(Uint8Array.of(1, 120, 42), enc.encode('{}')))).toThrow('unknown value type 42');
  });

  test('a payload that is not UTF-8', () => {
    const frame = encodeMessage([{ name: ':event-type', type: 'string', value: 'x' }], Uint8Array.of(0xff, 0xfe));
    expect(() => new AwsEventStreamDecoder().push(frame)).toThrow('not valid UTF-8');
  });

  test('whole messages before a bad one in the same read come out first; the next call throws', () => {
    const bad = good.slice();
    bad[bad.byteLength - 1] = (bad[bad.byteLength - 1] as number) ^ 0x01;
    const decoder = new AwsEventStreamDecoder();
    expect(decoder.push(concatBytes([good, good, bad]))).toHaveLength(2);
    expect(() => decoder.push(good)).toThrow('message CRC mismatch');
    const ending = new AwsEventStreamDecoder();
    expect(ending.push(concatBytes([good, bad]))).toHaveLength(1);
    expect(() => ending.end()).toThrow('message CRC mismatch');
  });
});
