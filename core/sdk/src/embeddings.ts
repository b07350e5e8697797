/**
 * OpenAI's `encoding_format: "base64"`: the vector as little-endian float32 bytes in base64 (what the openai SDKs ask
 * for by default and decode). Providers that answer with number arrays use this to honour the client's format.
 */
export function float32Base64(vector: readonly number[]): string {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  vector.forEach((value, i) => view.setFloat32(i * 4, value, true));
  return Buffer.from(bytes).toString('base64');
}

/** The embedding as the client asked for it: numbers, or base64 when `encoding_format` is `base64`. */
export function encodeEmbedding(vector: readonly number[], format: unknown): number[] | string {
  return format === 'base64' ? float32Base64(vector) : [...vector];
}
