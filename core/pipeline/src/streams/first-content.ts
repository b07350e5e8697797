import { MalformedStreamError, type StreamProcessor } from './processors.ts';

/** A stream that ended before any content came (nothing was sent: the attempt failed, a retry may mend it). */
export class NoContentError extends Error {}

/**
 * With `first_token_timeout` (issue #15), a stream is committed to the client only once its first content event
 * arrived (text, a tool call, reasoning, or the finish): until then it is read and processed here, its client bytes
 * held, so that a stream too slow to start fails as an attempt before a byte has gone out. Returns the held bytes, and
 * whether the stream already ended (whole). Throws MalformedStreamError, NoContentError, or the read's error.
 */
export async function readToFirstContent(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  processor: StreamProcessor,
  first: Uint8Array,
): Promise<{ ready: Uint8Array | undefined; ended: boolean }> {
  const parts: Uint8Array[] = [];
  let chunk = first;
  for (;;) {
    const bytes = processor.push(chunk);
    if (bytes?.byteLength) parts.push(bytes);
    if (processor.sent?.started) return { ready: concat(parts), ended: false };
    const next = await reader.read();
    if (next.done) {
      const end = processor.end();
      if (end.bytes?.byteLength) parts.push(end.bytes);
      if (!end.complete) throw new NoContentError('the stream ended before its first content');
      return { ready: concat(parts), ended: true };
    }
    chunk = next.value;
  }
}

function concat(parts: Uint8Array[]): Uint8Array | undefined {
  if (parts.length <= 1) return parts[0];
  return Buffer.concat(parts);
}

export { MalformedStreamError };
