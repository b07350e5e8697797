/**
 * Entries as they are posted to the writer thread. Structured clone is slow for nested objects and costs a fixed
 * overhead per ArrayBuffer (measured in Bun: ~5 µs per entry for a batch of nested entries with byte bodies), so an
 * entry travels flat: scalar fields and strings, `metadata`, `attempts` and `hookResults` as JSON text, and the
 * byte bodies of a part packed into one buffer that is transferred, not copied. Byte bodies are cut to the stored size
 * first, so a 30 MB upload costs no more than its first `maxBodyBytes` bytes; non-text bodies (stored as a size note)
 * send no bytes at all. Only a parsed body that a stage replaced travels as an object.
 */
import type { AttemptRecord, JsonObject } from '@gateway/sdk';
import type { LogEntry } from './entry.ts';
import { isTextual } from './row.ts';

export interface WireEntry {
  /** Position of the entry in the batch being written (parts and dropped entries leave gaps in a part's list). */
  seq: number;
  traceId: string;
  spanId: string | null;
  parentSpanId: string | null;
  spanName: string | null;
  organisationId: string | null;
  workspaceId: string | null;
  apiKeyId: string | null;
  provider: string | null;
  model: string | null;
  endpoint: string;
  method: string;
  path: string;
  status: number;
  latencyMs: number;
  upstreamLatencyMs: number | null;
  cacheStatus: string | null;
  targetIndex: string | null;
  retryCount: number;
  /** JSON text. */
  metadata: string | null;
  /** JSON text. */
  attempts: string | null;
  /** JSON text. */
  hookResults: string | null;
  /** A text or object body; null when the body is bytes in the pack (or there is none). */
  requestBody: JsonObject | string | null;
  /** Where the byte body sits in the part's pack: offset, length kept, and its whole size (-1: no byte body). */
  bodyOffset: number;
  bodyLength: number;
  bodyBytes: number;
  requestContentType: string | null;
  responseBody: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: number;
}

export interface WirePart {
  entries: WireEntry[];
  /** The byte bodies of the part, back to back; transferred. */
  pack: Uint8Array | null;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : v == null ? null : String(v));
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/**
 * Entries `from` to `to` of a batch (those `include` accepts) as posted. Only the copying of (capped) byte bodies into one buffer and small
 * JSON texts; no parsing, no body serialising. An entry that cannot be converted is left out and reported.
 */
export function toWirePart(
  batch: readonly LogEntry[],
  from: number,
  to: number,
  maxBodyBytes: number,
  onBad: (seq: number, err: unknown) => void,
  include: (seq: number) => boolean = () => true,
): WirePart {
  let packBytes = 0;
  for (let i = from; i < to; i++) {
    if (!include(i)) continue;
    const e = batch[i]!;
    const body = e.requestBody;
    if (body instanceof Uint8Array && isTextual(e.requestContentType)) packBytes += Math.min(body.byteLength, maxBodyBytes);
  }
  const pack = packBytes > 0 ? new Uint8Array(packBytes) : null;
  let offset = 0;
  const out: WireEntry[] = [];
  for (let i = from; i < to; i++) {
    if (!include(i)) continue;
    try {
      out.push(wireEntry(batch[i]!, i));
    } catch (err) {
      onBad(i, err);
    }
  }
  return { entries: out, pack };

  function wireEntry(e: LogEntry, seq: number): WireEntry {
    const body = e.requestBody;
    let requestBody: JsonObject | string | null = null;
    let bodyOffset = 0;
    let bodyLength = 0;
    let bodyBytes = -1;
    if (body instanceof Uint8Array) {
      bodyBytes = Math.max(e.requestBodyBytes ?? 0, body.byteLength);
      if (isTextual(e.requestContentType) && pack) {
        bodyLength = Math.min(body.byteLength, maxBodyBytes);
        pack.set(bodyLength === body.byteLength ? body : body.subarray(0, bodyLength), offset);
        bodyOffset = offset;
        offset += bodyLength;
      }
    } else if (body != null) requestBody = body;
    return {
      seq,
      traceId: str(e.traceId) ?? '',
      spanId: str(e.spanId),
      parentSpanId: str(e.parentSpanId),
      spanName: str(e.spanName),
      organisationId: str(e.organisationId),
      workspaceId: str(e.workspaceId),
      apiKeyId: str(e.apiKeyId),
      provider: str(e.provider),
      model: str(e.model),
      endpoint: str(e.endpoint) ?? '',
      method: str(e.method) ?? '',
      path: str(e.path) ?? '',
      status: num(e.status) ?? 0,
      latencyMs: num(e.latencyMs) ?? 0,
      upstreamLatencyMs: num(e.upstreamLatencyMs),
      cacheStatus: str(e.cacheStatus),
      targetIndex: str(e.targetIndex),
      retryCount: num(e.retryCount) ?? 0,
      metadata: e.metadata ? JSON.stringify(e.metadata) : null,
      attempts: e.attempts ? JSON.stringify(e.attempts) : null,
      hookResults: e.hookResults ? JSON.stringify(e.hookResults) : null,
      requestBody,
      bodyOffset,
      bodyLength,
      bodyBytes,
      requestContentType: str(e.requestContentType),
      responseBody: str(e.responseBody),
      errorCode: str(e.errorCode),
      errorMessage: str(e.errorMessage),
      createdAt: num(e.createdAt) ?? 0,
    };
  }
}

/** Back to entries, in the writer thread. */
export function fromWirePart(part: WirePart): LogEntry[] {
  const pack = part.pack;
  return part.entries.map((w) => ({
    traceId: w.traceId,
    spanId: w.spanId,
    parentSpanId: w.parentSpanId,
    spanName: w.spanName,
    organisationId: w.organisationId,
    workspaceId: w.workspaceId,
    apiKeyId: w.apiKeyId,
    provider: w.provider,
    model: w.model,
    endpoint: w.endpoint,
    method: w.method,
    path: w.path,
    status: w.status,
    latencyMs: w.latencyMs,
    upstreamLatencyMs: w.upstreamLatencyMs,
    cacheStatus: w.cacheStatus,
    targetIndex: w.targetIndex,
    retryCount: w.retryCount,
    metadata: w.metadata === null ? null : (JSON.parse(w.metadata) as Record<string, string>),
    attempts: w.attempts === null ? null : (JSON.parse(w.attempts) as AttemptRecord[]),
    hookResults: w.hookResults == null ? null : (JSON.parse(w.hookResults) as unknown[]),
    requestBody:
      w.bodyBytes >= 0 ? (pack && w.bodyLength > 0 ? pack.subarray(w.bodyOffset, w.bodyOffset + w.bodyLength) : new Uint8Array(0)) : w.requestBody,
    requestBodyBytes: w.bodyBytes >= 0 ? w.bodyBytes : null,
    requestContentType: w.requestContentType,
    responseBody: w.responseBody,
    errorCode: w.errorCode,
    errorMessage: w.errorMessage,
    createdAt: w.createdAt,
  }));
}
