/** A request_logs row as the administration API shows it (`log_format` v1). */
import { iso } from '@gateway/admin-kit';
import { readStoredBody, type requestLogs } from '@gateway/plugin-request-log';
import type { Row } from '@gateway/sdk';

export const LOG_FORMAT = 'v1';

export type LogRow = Row<typeof requestLogs>;

/**
 * The list shows what describes a call; the single log adds the bodies, the attempts and the hook results.
 * `metadata` is null and `metadata_hidden` true when the security settings withhold it from the caller.
 */
export function presentLog(row: LogRow, options: { metadataVisible: boolean; detail: boolean }) {
  const summary = {
    object: 'log' as const,
    log_format: LOG_FORMAT,
    id: row.id,
    trace_id: row.trace_id,
    span_id: row.span_id,
    parent_span_id: row.parent_span_id,
    span_name: row.span_name,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    api_key_id: row.api_key_id,
    // Who and what (docs/admin/analytics.md, "What the request log records"): null in rows written before them.
    user_id: row.user_id,
    provider: row.provider,
    provider_slug: row.provider_slug,
    config_id: row.config_id,
    prompt_id: row.prompt_id,
    prompt_version: row.prompt_version,
    model: row.model,
    endpoint: row.endpoint,
    method: row.method,
    path: row.path,
    status: row.status,
    latency_ms: row.latency_ms,
    upstream_latency_ms: row.upstream_latency_ms,
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    total_tokens: row.total_tokens,
    // The parts of the tokens priced apart, and the cost in US cents (README, "Cost"): null when not priced.
    cache_read_input_tokens: row.cache_read_input_tokens,
    cache_write_input_tokens: row.cache_write_input_tokens,
    audio_input_tokens: row.audio_input_tokens,
    image_input_tokens: row.image_input_tokens,
    reasoning_tokens: row.reasoning_tokens,
    audio_output_tokens: row.audio_output_tokens,
    cost_cents: row.cost_cents,
    priced: row.priced,
    cache_status: row.cache_status,
    target_index: row.target_index,
    retry_count: row.retry_count,
    metadata: options.metadataVisible ? row.metadata : null,
    metadata_hidden: !options.metadataVisible,
    error: row.error_code || row.error_message ? { code: row.error_code, message: row.error_message } : null,
    created_at: iso(row.created_at),
  };
  if (!options.detail) return summary;
  return {
    ...summary,
    // Stored compressed when LOG_BODY_COMPRESSION is on (and then only where it saves space): shown as logged.
    request_body: readStoredBody(row.request_body),
    response_body: readStoredBody(row.response_body),
    attempts: row.attempts,
    hook_results: row.hook_results,
  };
}
