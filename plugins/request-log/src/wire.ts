/**
 * Entries as they are posted to the writer thread. Structured clone is slow for nested objects (~5 µs an entry in
 * Bun) and JSON with keys spends most of its time writing the keys, so a part travels as: its entries as one JSON
 * text of positional rows (no keys), their response bodies joined in one string beside it (escaping them as JSON was
 * the main thread's largest cost), and the byte request bodies packed into one buffer that is transferred, not
 * copied. Byte bodies are cut to the stored size first, so a 30 MB upload costs no more than its first
 * `maxBodyBytes` bytes; non-text bodies (stored as a size note) send no bytes at all. About 1 µs an entry.
 */
import type { AttemptRecord, JsonObject, TokenUsage } from '@gateway/sdk';
import type { QueuedEntry } from './queued.ts';
import { isTextual } from './row.ts';

/** One entry on the wire, its fields in this order. */
export type WireRow = [
  seq: number,
  traceId: string,
  spanId: string | null,
  parentSpanId: string | null,
  spanName: string | null,
  organisationId: string | null,
  workspaceId: string | null,
  apiKeyId: string | null,
  provider: string | null,
  model: string | null,
  endpoint: string,
  method: string,
  path: string,
  status: number,
  latencyMs: number,
  upstreamLatencyMs: number | null,
  cacheStatus: string | null,
  targetIndex: string | null,
  retryCount: number,
  metadata: Readonly<Record<string, string>> | null,
  attempts: readonly AttemptRecord[] | null,
  hookResults: readonly unknown[] | null,
  /** A text or object body; null when the body is bytes in the pack (or there is none). */
  requestBody: JsonObject | string | null,
  /** Where the byte body sits in the part's pack: offset, length kept, and its whole size (-1: no byte body). */
  bodyOffset: number,
  bodyLength: number,
  bodyBytes: number,
  requestContentType: string | null,
  errorCode: string | null,
  errorMessage: string | null,
  createdAt: number,
  /** The outcome's token usage (read here, on the main thread, once per call), or null. */
  usage: TokenUsage | null,
  costCents: number | null,
  priced: boolean | null,
  userId: string | null,
  providerSlug: string | null,
  configId: string | null,
  promptId: string | null,
  promptVersion: number | null,
];

export interface WirePart {
  /** The rows, as JSON text. */
  json: string;
  /** The response bodies of the rows that have one, back to back … */
  bodies: string;
  /** … and each row's body length (-1: none). */
  bodyLengths: number[];
  /** The byte request bodies of the part, back to back; transferred. */
  pack: Uint8Array | null;
  /** Each row's id, fixed at enqueue (queued.ts). */
  ids: string[];
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : v == null ? null : String(v));
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/**
 * Entries `from` to `to` of a batch (those `include` accepts) as posted. Only the copying of (capped) byte bodies
 * into one buffer and one JSON text; no parsing, no body serialising. An entry that cannot be written as JSON (a
 * stage's body object with a cycle, say) is left out and reported.
 */
export function toWirePart(
  batch: readonly QueuedEntry[],
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
  let rows: WireRow[] = [];
  let responses: (string | null)[] = [];
  let ids: string[] = [];
  for (let i = from; i < to; i++) {
    if (!include(i)) continue;
    const e = batch[i]!;
    try {
      rows.push(wireRow(e, i));
      responses.push(str(e.responseBody));
      ids.push(e.rowId);
    } catch (err) {
      onBad(i, err);
    }
  }
  let json: string;
  try {
    json = JSON.stringify(rows);
  } catch {
    // Rare: find the rows JSON refuses, report them, send the rest.
    const kept: number[] = [];
    rows.forEach((row, k) => {
      try {
        JSON.stringify(row);
        kept.push(k);
      } catch (err) {
        onBad(row[0], err);
      }
    });
    rows = kept.map((k) => rows[k]!);
    responses = kept.map((k) => responses[k]!);
    ids = kept.map((k) => ids[k]!);
    json = JSON.stringify(rows);
  }
  const bodyLengths: number[] = [];
  const bodies: string[] = [];
  for (const body of responses) {
    bodyLengths.push(body === null ? -1 : body.length);
    if (body !== null) bodies.push(body);
  }
  return { json, bodies: bodies.join(''), bodyLengths, pack, ids };

  function wireRow(e: QueuedEntry, seq: number): WireRow {
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
    return [
      seq,
      str(e.traceId) ?? '',
      str(e.spanId),
      str(e.parentSpanId),
      str(e.spanName),
      str(e.organisationId),
      str(e.workspaceId),
      str(e.apiKeyId),
      str(e.provider),
      str(e.model),
      str(e.endpoint) ?? '',
      str(e.method) ?? '',
      str(e.path) ?? '',
      num(e.status) ?? 0,
      num(e.latencyMs) ?? 0,
      num(e.upstreamLatencyMs),
      str(e.cacheStatus),
      str(e.targetIndex),
      num(e.retryCount) ?? 0,
      e.metadata ?? null,
      e.attempts ?? null,
      e.hookResults ?? null,
      requestBody,
      bodyOffset,
      bodyLength,
      bodyBytes,
      str(e.requestContentType),
      str(e.errorCode),
      str(e.errorMessage),
      num(e.createdAt) ?? 0,
      e.usageFrom?.usage ?? null,
      num(e.costCents),
      e.priced ?? null,
      str(e.userId),
      str(e.providerSlug),
      str(e.configId),
      str(e.promptId),
      num(e.promptVersion),
    ];
  }
}

/** Back to entries, in the writer thread: each with its position in the batch (`seq`). */
export function fromWirePart(part: WirePart): { seqs: number[]; entries: QueuedEntry[] } {
  const rows = JSON.parse(part.json) as WireRow[];
  const { pack, bodies, bodyLengths } = part;
  let at = 0;
  const seqs: number[] = [];
  const entries = rows.map((w, i): QueuedEntry => {
    const length = bodyLengths[i] ?? -1;
    const responseBody = length < 0 ? null : bodies.slice(at, (at += length));
    const [seq, traceId, spanId, parentSpanId, spanName, organisationId, workspaceId, apiKeyId, provider, model, endpoint, method, path] = w;
    const [status, latencyMs, upstreamLatencyMs, cacheStatus, targetIndex, retryCount, metadata, attempts, hookResults] = w.slice(13, 22) as [
      number, number, number | null, string | null, string | null, number, Record<string, string> | null, AttemptRecord[] | null, unknown[] | null,
    ];
    const [requestBody, bodyOffset, bodyLength, bodyBytes, requestContentType, errorCode, errorMessage, createdAt, usage, costCents, priced] = w.slice(22, 33) as [
      JsonObject | string | null, number, number, number, string | null, string | null, string | null, number, TokenUsage | null, number | null, boolean | null,
    ];
    const [userId, providerSlug, configId, promptId, promptVersion] = w.slice(33) as [string | null, string | null, string | null, string | null, number | null];
    seqs.push(seq);
    return {
      traceId,
      spanId,
      parentSpanId,
      spanName,
      organisationId,
      workspaceId,
      apiKeyId,
      userId,
      provider,
      providerSlug,
      configId,
      promptId,
      promptVersion,
      model,
      endpoint,
      method,
      path,
      status,
      latencyMs,
      upstreamLatencyMs,
      cacheStatus,
      targetIndex,
      retryCount,
      metadata,
      attempts,
      hookResults,
      requestBody: bodyBytes >= 0 ? (pack && bodyLength > 0 ? pack.subarray(bodyOffset, bodyOffset + bodyLength) : new Uint8Array(0)) : requestBody,
      requestBodyBytes: bodyBytes >= 0 ? bodyBytes : null,
      requestContentType,
      responseBody,
      usageFrom: usage ? { usage } : null,
      costCents,
      priced,
      errorCode,
      errorMessage,
      createdAt,
      rowId: part.ids[i] ?? Bun.randomUUIDv7(),
    };
  });
  return { seqs, entries };
}
