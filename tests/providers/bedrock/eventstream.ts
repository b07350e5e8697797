/**
 * An encoder of the AWS event-stream framing, for the Bedrock test server and the decoder's tests. Written from the
 * format description (prelude: total length, headers length, prelude CRC; headers; payload; message CRC), with
 * CRC-32 from node:zlib, so that it shares no code with the decoder it checks.
 */
import { crc32 } from 'node:zlib';

export type HeaderSpec =
  | { name: string; type: 'string'; value: string }
  | { name: string; type: 'true' | 'false' }
  | { name: string; type: 'byte' | 'short' | 'int'; value: number }
  | { name: string; type: 'long' | 'timestamp'; value: bigint }
  | { name: string; type: 'bytes'; value: Uint8Array }
  | { name: string; type: 'uuid'; value: Uint8Array };

const enc = new TextEncoder();

function header(spec: HeaderSpec): Uint8Array {
  const name = enc.encode(spec.name);
  let value: Uint8Array;
  let type: number;
  switch (spec.type) {
    case 'true':
      type = 0;
      value = new Uint8Array(0);
      break;
    case 'false':
      type = 1;
      value = new Uint8Array(0);
      break;
    case 'byte':
      type = 2;
      value = Uint8Array.of(spec.value & 0xff);
      break;
    case 'short': {
      type = 3;
      value = new Uint8Array(2);
      new DataView(value.buffer).setInt16(0, spec.value);
      break;
    }
    case 'int': {
      type = 4;
      value = new Uint8Array(4);
      new DataView(value.buffer).setInt32(0, spec.value);
      break;
    }
    case 'long':
    case 'timestamp': {
      type = spec.type === 'long' ? 5 : 8;
      value = new Uint8Array(8);
      new DataView(value.buffer).setBigInt64(0, spec.value);
      break;
    }
    case 'bytes':
    case 'string': {
      type = spec.type === 'bytes' ? 6 : 7;
      const raw = spec.type === 'bytes' ? spec.value : enc.encode(spec.value);
      value = new Uint8Array(2 + raw.byteLength);
      new DataView(value.buffer).setUint16(0, raw.byteLength);
      value.set(raw, 2);
      break;
    }
    case 'uuid':
      type = 9;
      value = spec.value;
      break;
  }
  const out = new Uint8Array(1 + name.byteLength + 1 + value.byteLength);
  out[0] = name.byteLength;
  out.set(name, 1);
  out[1 + name.byteLength] = type;
  out.set(value, 2 + name.byteLength);
  return out;
}

/** One event-stream message, byte for byte. */
export function encodeMessage(headers: HeaderSpec[], payload: Uint8Array | string): Uint8Array {
  const body = typeof payload === 'string' ? enc.encode(payload) : payload;
  const parts = headers.map(header);
  const headersLength = parts.reduce((n, p) => n + p.byteLength, 0);
  const total = 12 + headersLength + body.byteLength + 4;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, total);
  view.setUint32(4, headersLength);
  view.setUint32(8, crc32(out.subarray(0, 8)));
  let at = 12;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  out.set(body, at);
  view.setUint32(total - 4, crc32(out.subarray(0, total - 4)));
  return out;
}

const str = (name: string, value: string): HeaderSpec => ({ name, type: 'string', value });

/** A Bedrock stream event: `:event-type`, `:content-type: application/json`, `:message-type: event`. */
export function eventMessage(eventType: string, payload: unknown): Uint8Array {
  return encodeMessage(
    [str(':event-type', eventType), str(':content-type', 'application/json'), str(':message-type', 'event')],
    JSON.stringify(payload),
  );
}

/** A modeled exception inside a stream: `:message-type: exception`, `:exception-type`, payload `{"message"}`. */
export function exceptionMessage(exceptionType: string, message: string): Uint8Array {
  return encodeMessage(
    [str(':exception-type', exceptionType), str(':content-type', 'application/json'), str(':message-type', 'exception')],
    JSON.stringify({ message }),
  );
}

export function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
