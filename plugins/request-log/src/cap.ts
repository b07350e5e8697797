/** Bodies are stored size-capped, with a marker that says how much was cut. */

const encoder = new TextEncoder();

export const marker = (total: number) => `\n…[truncated: ${total} bytes in all]`;

/** Keeps the first `maxBytes` bytes of UTF-8 (never splitting a character). */
export function capText(text: string, maxBytes: number): string {
  // Cheap exit: a UTF-16 code unit is at most 3 UTF-8 bytes.
  if (text.length * 3 <= maxBytes) return text;
  const buffer = new Uint8Array(maxBytes);
  const { read } = encoder.encodeInto(text, buffer);
  if (read >= text.length) return text;
  return text.slice(0, read) + marker(Buffer.byteLength(text));
}

/** `total`: the size of the whole body when `bytes` holds only its first bytes (cut before it was handed over). */
export function capBytes(bytes: Uint8Array, maxBytes: number, total = bytes.byteLength): string {
  if (bytes.byteLength <= maxBytes && total <= bytes.byteLength) return new TextDecoder().decode(bytes);
  // stream: true leaves out a character cut in half at the end instead of writing U+FFFD.
  return new TextDecoder().decode(bytes.subarray(0, maxBytes), { stream: true }) + marker(Math.max(total, bytes.byteLength));
}
