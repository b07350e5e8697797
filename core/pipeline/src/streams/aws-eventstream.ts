import type { StreamEvent } from '@gateway/sdk';
import type { FrameDecoder } from './decoders.ts';

/**
 * The AWS event-stream framing (`application/vnd.amazon.eventstream`), as Bedrock's ConverseStream and
 * InvokeModelWithResponseStream send it. Each message is self-delimiting:
 *
 *   total length (u32 BE) | headers length (u32 BE) | prelude CRC32 (u32 BE, of the 8 bytes before it)
 *   headers (headers length bytes) | payload | message CRC32 (u32 BE, of every byte before it)
 *
 * A header is: name length (u8), name (UTF-8), value type (u8), value. Value types: 0 true, 1 false, 2 byte,
 * 3 int16, 4 int32, 5 int64, 6 byte array (u16 BE length + bytes), 7 string (u16 BE length + UTF-8), 8 timestamp
 * (int64 ms), 9 UUID (16 bytes). Both CRCs are CRC-32 (IEEE, the gzip one).
 *
 * Decoded events:
 * - `:message-type` `event` (or absent): `{ event: <:event-type>, data: <payload as UTF-8> }`.
 * - `:message-type` `exception`: `{ event: <:exception-type>, data: <payload> }`. AWS exception names end in
 *   `Exception` (`throttlingException`, `modelStreamErrorException`, …; `unknownException` when the header is missing),
 *   so the adapter can tell them from events and relay the provider's own message and status.
 * - `:message-type` `error` (a protocol-level failure carrying `:error-code` and `:error-message`): throws.
 *
 * Anything malformed throws: a CRC that does not match, impossible lengths, an unknown header type, a header that
 * runs past its section. A stream that ends inside a message is reported `truncated`.
 */

/** Prelude (8 bytes) + prelude CRC (4) + message CRC (4). */
const OVERHEAD = 16;
const PRELUDE = 12;
/** AWS caps a message at 16 MiB of payload and 128 KiB of headers; anything claiming more is not a real frame. */
const MAX_MESSAGE = 16 * 1024 * 1024 + 128 * 1024 + OVERHEAD;
const MAX_HEADERS = 128 * 1024;

/** CRC-32 (IEEE 802.3, the gzip one) of `bytes[start, end)`, as the event-stream framing uses it: Bun's built-in. */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  return Bun.hash.crc32(bytes.subarray(start, end));
}

export class AwsEventStreamError extends Error {
  override name = 'AwsEventStreamError';
}

/** A header value, decoded to a plain JavaScript value (strings for string, UUID and byte-array types). */
export type EventStreamHeaderValue = boolean | number | bigint | string | Uint8Array;

export interface EventStreamMessage {
  headers: Record<string, EventStreamHeaderValue>;
  payload: Uint8Array;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function text(bytes: Uint8Array, what: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new AwsEventStreamError(`event-stream ${what} is not valid UTF-8`);
  }
}

function hex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

/** Parses the header section `bytes[start, end)`. */
function parseHeaders(bytes: Uint8Array, view: DataView, start: number, end: number): Record<string, EventStreamHeaderValue> {
  const headers: Record<string, EventStreamHeaderValue> = {};
  let at = start;
  const need = (n: number) => {
    if (at + n > end) throw new AwsEventStreamError('event-stream header runs past the header section');
  };
  while (at < end) {
    need(1);
    const nameLength = bytes[at++] as number;
    if (nameLength === 0) throw new AwsEventStreamError('event-stream header with an empty name');
    need(nameLength);
    const name = text(bytes.subarray(at, at + nameLength), 'header name');
    at += nameLength;
    need(1);
    const type = bytes[at++] as number;
    let value: EventStreamHeaderValue;
    switch (type) {
      case 0:
        value = true;
        break;
      case 1:
        value = false;
        break;
      case 2:
        need(1);
        value = view.getInt8(at);
        at += 1;
        break;
      case 3:
        need(2);
        value = view.getInt16(at);
        at += 2;
        break;
      case 4:
        need(4);
        value = view.getInt32(at);
        at += 4;
        break;
      case 5:
        need(8);
        value = view.getBigInt64(at);
        at += 8;
        break;
      case 6:
      case 7: {
        need(2);
        const length = view.getUint16(at);
        at += 2;
        need(length);
        const raw = bytes.subarray(at, at + length);
        value = type === 7 ? text(raw, `header "${name}"`) : raw.slice();
        at += length;
        break;
      }
      case 8:
        need(8);
        value = Number(view.getBigInt64(at));
        at += 8;
        break;
      case 9:
        need(16);
        value = hex(bytes.subarray(at, at + 16));
        at += 16;
        break;
      default:
        throw new AwsEventStreamError(`event-stream header "${name}" has unknown value type ${type}`);
    }
    headers[name] = value;
  }
  return headers;
}

/** Decodes one whole message that starts at `offset` and is `total` bytes long (its prelude CRC already checked). */
function parseMessage(bytes: Uint8Array, view: DataView, offset: number, total: number, headersLength: number): EventStreamMessage {
  const crcAt = offset + total - 4;
  const expected = view.getUint32(crcAt);
  const actual = crc32(bytes, offset, crcAt);
  if (expected !== actual) {
    throw new AwsEventStreamError(`event-stream message CRC mismatch (expected ${expected.toString(16)}, computed ${actual.toString(16)})`);
  }
  const headersStart = offset + PRELUDE;
  const headers = parseHeaders(bytes, view, headersStart, headersStart + headersLength);
  return { headers, payload: bytes.slice(headersStart + headersLength, crcAt) };
}

/** Incremental decoder of raw event-stream messages (headers and payload), for any AWS streaming API. */
export class EventStreamMessageDecoder {
  /** Bytes received and not yet decoded, kept as separate reads until a whole message is there (joined once). */
  private chunks: Uint8Array[] = [];
  private size = 0;
  /** Bytes needed before decoding is worth trying: a prelude, or the whole message once its length is known. */
  private need = PRELUDE;

  /** A malformed frame met after whole messages of the same read: thrown by the next call, once those are out. */
  private failed: Error | undefined;

  /**
   * Returns every message completed by `chunk`. Throws on a malformed frame; messages before it in the same read
   * are returned first and the error is thrown by the next call.
   */
  push(chunk: Uint8Array): EventStreamMessage[] {
    if (this.failed) throw this.failed;
    if (!chunk.byteLength) return [];
    this.size += chunk.byteLength;
    if (this.size < this.need) {
      // Held until the message is whole: a copy, as the caller may reuse the buffer it passed in.
      this.chunks.push(chunk.slice());
      return [];
    }
    this.chunks.push(chunk);
    const bytes = this.chunks.length === 1 ? (this.chunks[0] as Uint8Array) : concat(this.chunks, this.size);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const out: EventStreamMessage[] = [];
    let offset = 0;
    let need = PRELUDE;
    try {
      while (bytes.byteLength - offset >= PRELUDE) {
        const total = view.getUint32(offset);
        const headersLength = view.getUint32(offset + 4);
        const preludeCrc = view.getUint32(offset + 8);
        const computed = crc32(bytes, offset, offset + 8);
        if (preludeCrc !== computed) {
          throw new AwsEventStreamError(`event-stream prelude CRC mismatch (expected ${preludeCrc.toString(16)}, computed ${computed.toString(16)})`);
        }
        if (total < OVERHEAD || total > MAX_MESSAGE) throw new AwsEventStreamError(`event-stream message length ${total} is out of range`);
        if (headersLength > MAX_HEADERS || headersLength > total - OVERHEAD) {
          throw new AwsEventStreamError(`event-stream headers length ${headersLength} does not fit a message of ${total} bytes`);
        }
        if (bytes.byteLength - offset < total) {
          need = total;
          break;
        }
        out.push(parseMessage(bytes, view, offset, total, headersLength));
        offset += total;
      }
    } catch (error) {
      this.chunks = [];
      this.size = 0;
      if (!out.length) throw error;
      this.failed = error as Error;
      return out;
    }
    // Keep only the unfinished tail, copied: the caller may reuse the buffer it passed in.
    const rest = bytes.byteLength - offset;
    this.chunks = rest ? [bytes.slice(offset)] : [];
    this.size = rest;
    this.need = need;
    return out;
  }

  /** Throws the malformed frame still to report, if any. */
  check(): void {
    if (this.failed) throw this.failed;
  }

  /** Bytes of an unfinished message still held. */
  get pending(): number {
    return this.size;
  }

  reset(): void {
    this.failed = undefined;
    this.chunks = [];
    this.size = 0;
    this.need = PRELUDE;
  }
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

const str = (value: EventStreamHeaderValue | undefined): string | undefined => (typeof value === 'string' ? value : undefined);

/** The framing decoder the core registers for `aws-eventstream`: messages become `{event, data}` stream events. */
export class AwsEventStreamDecoder implements FrameDecoder {
  private readonly messages = new EventStreamMessageDecoder();
  /** A message that could not become an event, after others of the same read that could: thrown next. */
  private failed: Error | undefined;

  push(chunk: Uint8Array): StreamEvent[] {
    if (this.failed) throw this.failed;
    const events: StreamEvent[] = [];
    for (const message of this.messages.push(chunk)) {
      try {
        events.push(toEvent(message));
      } catch (error) {
        if (!events.length) throw error;
        this.failed = error as Error;
        break;
      }
    }
    return events;
  }

  end(): { events: StreamEvent[]; truncated: boolean } {
    if (this.failed) throw this.failed;
    this.messages.check();
    const truncated = this.messages.pending > 0;
    this.messages.reset();
    return { events: [], truncated };
  }
}

function toEvent(message: EventStreamMessage): StreamEvent {
  const { headers } = message;
  const kind = str(headers[':message-type']) ?? 'event';
  if (kind === 'event') {
    return { event: str(headers[':event-type']), data: text(message.payload, 'payload') };
  }
  if (kind === 'exception') {
    return { event: str(headers[':exception-type']) ?? 'unknownException', data: text(message.payload, 'payload') };
  }
  if (kind === 'error') {
    const code = str(headers[':error-code']) ?? 'error';
    const detail = str(headers[':error-message']) ?? text(message.payload, 'payload');
    throw new AwsEventStreamError(`event-stream error message: ${code}: ${detail}`);
  }
  throw new AwsEventStreamError(`event-stream message of unknown type "${kind}"`);
}
