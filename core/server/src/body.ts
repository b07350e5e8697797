import { Errors, type JsonObject } from '@gateway/sdk';

/**
 * Reads a request body up to `limit` bytes. A declared length over the limit is refused before reading; a chunked
 * body is counted as it arrives and refused as soon as it passes the limit, so no oversized body is held whole.
 */
export async function readBody(
  request: Request,
  limit: number,
  declared: string | null | undefined = request.headers.get('content-length'),
): Promise<Uint8Array | undefined> {
  // With a declared length the body is read in one go (request.body, a stream object, is never made).
  if (declared !== null && declared !== undefined) {
    const length = Number(declared);
    if (length > limit) {
      request.body?.cancel().catch(() => {});
      throw Errors.payloadTooLarge(limit);
    }
    return length === 0 ? undefined : request.bytes();
  }
  if (!request.body) return undefined;
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      reader.cancel().catch(() => {});
      throw Errors.payloadTooLarge(limit);
    }
    parts.push(value);
  }
  return parts.length === 1 ? parts[0] : new Uint8Array(Buffer.concat(parts));
}

const decoder = new TextDecoder();

/** Parses a JSON object body; anything else is a 400 that names the problem. */
export function parseJsonObject(bytes: Uint8Array | undefined): JsonObject {
  if (!bytes || bytes.byteLength === 0) throw Errors.malformedJson('The request body is empty; a JSON object is expected');
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch (error) {
    // Includes nesting too deep for the parser (RangeError): a client error, never a crash. The parser's message
    // quotes the offending text (which may be a secret), so it is not repeated.
    throw Errors.malformedJson(
      error instanceof RangeError ? 'The request body is nested too deeply to parse' : 'The request body is not valid JSON',
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw Errors.badRequest('body: must be a JSON object', 'body');
  return value as JsonObject;
}
