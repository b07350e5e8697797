/**
 * The exported form of a request-log row: the request log's own entry (entryFrom, so both hold the same facts),
 * flattened to JSON with snake_case names as the `request_logs` columns have them. Built when a batch is sent, off
 * the request's path.
 */
import type { LogEntry } from '@gateway/plugin-request-log';

const decoder = new TextDecoder();

function bodyText(body: LogEntry['requestBody']): string | null {
  if (body === null || body === undefined) return null;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return decoder.decode(body);
  return JSON.stringify(body);
}

export type ExportRow = Record<string, unknown>;

export function exportRow(entry: LogEntry, bodies: boolean): ExportRow {
  const usage = entry.usageFrom?.usage;
  return {
    trace_id: entry.traceId,
    created_at: new Date(entry.createdAt).toISOString(),
    organisation_id: entry.organisationId ?? null,
    workspace_id: entry.workspaceId ?? null,
    api_key_id: entry.apiKeyId ?? null,
    user_id: entry.userId ?? null,
    provider: entry.provider ?? null,
    provider_slug: entry.providerSlug ?? null,
    config_id: entry.configId ?? null,
    prompt_id: entry.promptId ?? null,
    prompt_version: entry.promptVersion ?? null,
    model: entry.model ?? null,
    endpoint: entry.endpoint,
    method: entry.method,
    path: entry.path,
    status: entry.status,
    latency_ms: Math.round(entry.latencyMs),
    upstream_latency_ms: entry.upstreamLatencyMs == null ? null : Math.round(entry.upstreamLatencyMs),
    cache_status: entry.cacheStatus ?? null,
    target_index: entry.targetIndex ?? null,
    retry_count: entry.retryCount ?? 0,
    metadata: entry.metadata ?? null,
    prompt_tokens: usage?.promptTokens ?? null,
    completion_tokens: usage?.completionTokens ?? null,
    total_tokens: usage?.totalTokens ?? null,
    cost_cents: entry.costCents ?? null,
    error_code: entry.errorCode ?? null,
    error_message: entry.errorMessage ?? null,
    attempts: entry.attempts ?? [],
    ...(bodies ? { request_body: bodyText(entry.requestBody), response_body: entry.responseBody ?? null } : {}),
  };
}
