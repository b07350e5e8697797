/** Turns a queued entry into a `request_logs` row: serialise and cap bodies, fit strings to columns. */
import type { NewRow } from '@gateway/sdk';
import { type BodyCompression, storeBody } from './body-compression.ts';
import { capBytes, capText } from './cap.ts';
import type { LogEntry } from './entry.ts';
import type { requestLogs } from './table.ts';

export type RequestLogRow = NewRow<typeof requestLogs>;

// Client-supplied values (trace headers, paths) must not fail a whole batch by overflowing a column.
const clip = (value: string | null | undefined, length: number): string | null =>
  value == null ? null : value.length > length ? value.slice(0, length) : value;

const int = (value: number | null | undefined): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? Math.max(-2_147_483_648, Math.min(2_147_483_647, Math.round(value))) : null;

const TEXTUAL = /^(application\/(json|x-ndjson|x-www-form-urlencoded|[\w.+-]*\+json)|text\/)/i;

/** Whether a byte body of this content type is stored as text (else as a size note). No type: text. */
export const isTextual = (type: string | null | undefined): boolean => !type || TEXTUAL.test(type);

function requestText(entry: LogEntry, maxBytes: number): string | null {
  const body = entry.requestBody;
  if (body == null) return null;
  if (typeof body === 'string') return capText(body, maxBytes);
  if (body instanceof Uint8Array) {
    const total = Math.max(entry.requestBodyBytes ?? 0, body.byteLength);
    const type = entry.requestContentType;
    if (!isTextual(type)) return `[${type} body: ${total} bytes]`;
    return capBytes(body, maxBytes, total);
  }
  return capText(JSON.stringify(body), maxBytes);
}

/** `compression`: how bodies are stored once capped (LOG_BODY_COMPRESSION, body-compression.ts). */
export function toRow(entry: LogEntry, maxBodyBytes: number, compression: BodyCompression = 'none'): RequestLogRow {
  const requestBody = requestText(entry, maxBodyBytes);
  const usage = entry.usageFrom?.usage;
  const model = entry.model ?? modelOf(entry.responseBody);
  return {
    trace_id: clip(entry.traceId, 128) ?? '',
    span_id: clip(entry.spanId, 128),
    parent_span_id: clip(entry.parentSpanId, 128),
    span_name: clip(entry.spanName, 255),
    organisation_id: clip(entry.organisationId, 36),
    workspace_id: clip(entry.workspaceId, 36),
    api_key_id: clip(entry.apiKeyId, 36),
    user_id: clip(entry.userId, 36),
    provider: clip(entry.provider, 64),
    provider_slug: clip(entry.providerSlug, 64),
    config_id: clip(entry.configId, 36),
    prompt_id: clip(entry.promptId, 64),
    prompt_version: int(entry.promptVersion),
    model: clip(model, 255),
    endpoint: clip(entry.endpoint, 32) ?? '',
    method: clip(entry.method, 16) ?? '',
    path: clip(entry.path, 1024) ?? '',
    status: int(entry.status) ?? 0,
    latency_ms: int(entry.latencyMs) ?? 0,
    upstream_latency_ms: int(entry.upstreamLatencyMs),
    prompt_tokens: usage?.promptTokens ?? null,
    completion_tokens: usage?.completionTokens ?? null,
    total_tokens: usage?.totalTokens ?? null,
    cache_read_input_tokens: int(usage?.cachedInputTokens),
    cache_write_input_tokens: int(usage?.cacheWriteInputTokens),
    audio_input_tokens: int(usage?.audioInputTokens),
    image_input_tokens: int(usage?.imageInputTokens),
    reasoning_tokens: int(usage?.reasoningTokens),
    audio_output_tokens: int(usage?.audioOutputTokens),
    cost_cents: typeof entry.costCents === 'number' && Number.isFinite(entry.costCents) ? entry.costCents : null,
    priced: entry.priced ?? null,
    cache_status: clip(entry.cacheStatus, 32),
    target_index: clip(entry.targetIndex, 255),
    retry_count: int(entry.retryCount) ?? 0,
    metadata: entry.metadata ? { ...entry.metadata } : null,
    request_body: requestBody === null ? null : storeBody(requestBody, compression),
    response_body: entry.responseBody == null ? null : storeBody(capText(entry.responseBody, maxBodyBytes), compression),
    error_code: clip(entry.errorCode, 64),
    error_message: entry.errorMessage == null ? null : capText(entry.errorMessage, 4096),
    attempts: entry.attempts ? [...entry.attempts] : null,
    hook_results: entry.hookResults ? [...entry.hookResults] : null,
    created_at: entry.createdAt,
  };
}

/** The answering model, from a JSON answer's top-level `"model"`, when the request named none (passthrough). */
function modelOf(body: string | null | undefined): string | null {
  if (!body) return null;
  const match = /"model"\s*:\s*"([^"\\]{1,255})"/.exec(body.slice(0, 4096));
  return match ? match[1]! : null;
}
