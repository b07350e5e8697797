/**
 * Optional compression of the stored request and response bodies (LOG_BODY_COMPRESSION; docs/performance.md,
 * "Bounded disk"). A compressed body stays in its text column, as `\u0001<method>\u0001<base64 of the compressed
 * UTF-8>`, so that the table, the journal and replay are unchanged and old rows read as before; readers pass what they
 * read through `readStoredBody`. Bodies are capped first (GATEWAY_LOG_BODY_BYTES), then compressed in the writer
 * thread; a body under `MIN_COMPRESSED_CHARS`, or one that compression would not make shorter, is stored as it is.
 * A body that itself starts with U+0001 is always stored compressed, whatever the setting, so that reading is never
 * ambiguous.
 */

export type BodyCompression = 'none' | 'gzip' | 'zstd';

const MARK = '\u0001';
/** Below this many characters a body is not worth compressing (the header and base64 eat the gain). */
export const MIN_COMPRESSED_CHARS = 512;

const decoder = new TextDecoder();

/** LOG_BODY_COMPRESSION: `none` (default), `gzip` or `zstd`; anything else stops the start. */
export function bodyCompressionFromEnv(env: Record<string, string | undefined>): BodyCompression {
  const value = (env.LOG_BODY_COMPRESSION?.trim() || 'none').toLowerCase();
  if (value === 'none' || value === 'gzip' || value === 'zstd') return value;
  throw new Error(`LOG_BODY_COMPRESSION must be none, gzip or zstd (got ${JSON.stringify(value.slice(0, 50))})`);
}

function compress(text: string, method: 'gzip' | 'zstd'): Uint8Array {
  // Level 1: the writer's CPU is what limits the log under full load; higher levels gained ~2 % of size for 2-3×.
  return method === 'gzip' ? Bun.gzipSync(text, { level: 1 }) : Bun.zstdCompressSync(text, { level: 1 });
}

/** The text to store for a (capped) body. */
export function storeBody(text: string, method: BodyCompression): string {
  const marked = text.startsWith(MARK);
  if (!marked && (method === 'none' || text.length < MIN_COMPRESSED_CHARS)) return text;
  const use = method === 'none' ? 'gzip' : method;
  const stored = `${MARK}${use}${MARK}${compress(text, use).toBase64()}`;
  return marked || stored.length < text.length ? stored : text;
}

/** A stored body as it was logged: compressed bodies are expanded, others returned as they are. */
export function readStoredBody(stored: string | null): string | null {
  if (stored === null || !stored.startsWith(MARK)) return stored;
  const end = stored.indexOf(MARK, 1);
  const method = stored.slice(1, end);
  if (end < 0 || (method !== 'gzip' && method !== 'zstd')) return stored;
  const bytes = Uint8Array.fromBase64(stored.slice(end + 1));
  return decoder.decode(method === 'gzip' ? Bun.gunzipSync(bytes) : Bun.zstdDecompressSync(bytes));
}
