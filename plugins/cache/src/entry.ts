/**
 * A stored answer: a one-line JSON header, a newline, then the answer's JSON text (UTF-8).
 *
 * The answer is always a whole, OpenAI-shaped JSON object: the provider's own answer for a whole request
 * (`source: 'json'`), or the object assembled from a stream (`source: 'sse'`: a `chat.completion` or
 * `text_completion` built from the chunks, see stream.ts). Streams are replayed from it (README.md "Streaming").
 */

export type EntryKind = 'chat' | 'text' | 'embed';

export interface Entry {
  kind: EntryKind;
  source: 'json' | 'sse';
  /** Epoch milliseconds. */
  storedAt: number;
  expiresAt: number;
  /** Whether the answer carries `usage` (an assembled stream has it only when the stream sent it). */
  usage: boolean;
  status: number;
  body: string;
}

const VERSION = 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeEntry(e: Entry): Uint8Array {
  const head = JSON.stringify([VERSION, e.kind, e.source, e.storedAt, e.expiresAt, e.usage ? 1 : 0, e.status]);
  return encoder.encode(`${head}\n${e.body}`);
}

/** The entry, or undefined when the bytes are not one (another version, corrupt). */
export function decodeEntry(bytes: Uint8Array): Entry | undefined {
  const nl = bytes.indexOf(10);
  if (nl < 0) return undefined;
  try {
    const head = JSON.parse(decoder.decode(bytes.subarray(0, nl))) as unknown[];
    if (!Array.isArray(head) || head[0] !== VERSION) return undefined;
    const [, kind, source, storedAt, expiresAt, usage, status] = head;
    if ((kind !== 'chat' && kind !== 'text' && kind !== 'embed') || (source !== 'json' && source !== 'sse')) return undefined;
    if (typeof storedAt !== 'number' || typeof expiresAt !== 'number' || typeof status !== 'number') return undefined;
    return { kind, source, storedAt, expiresAt, usage: usage === 1, status, body: decoder.decode(bytes.subarray(nl + 1)) };
  } catch {
    return undefined;
  }
}

export function entryKind(endpoint: string): EntryKind | undefined {
  return endpoint === 'chatComplete' ? 'chat' : endpoint === 'complete' ? 'text' : endpoint === 'embed' ? 'embed' : undefined;
}
