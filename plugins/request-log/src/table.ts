import { col, defineTable, type AttemptRecord, type Migration } from '@gateway/sdk';

export const requestLogs = defineTable(
  'request_logs',
  {
    id: col.id(),
    trace_id: col.string(128),
    span_id: col.string(128).nullable(),
    parent_span_id: col.string(128).nullable(),
    span_name: col.string(255).nullable(),
    organisation_id: col.ref().nullable(),
    workspace_id: col.ref().nullable(),
    api_key_id: col.ref().nullable(),
    provider: col.string(64).nullable(),
    model: col.string(255).nullable(),
    endpoint: col.string(32),
    method: col.string(16),
    path: col.string(1024),
    status: col.int(),
    latency_ms: col.int(),
    upstream_latency_ms: col.int().nullable(),
    prompt_tokens: col.int().nullable(),
    completion_tokens: col.int().nullable(),
    total_tokens: col.int().nullable(),
    cache_status: col.string(32).nullable(),
    target_index: col.string(255).nullable(),
    retry_count: col.int().default(0),
    metadata: col.json<Record<string, string>>().nullable(),
    request_body: col.text().nullable(),
    response_body: col.text().nullable(),
    error_code: col.string(64).nullable(),
    error_message: col.text().nullable(),
    attempts: col.json<AttemptRecord[]>().nullable(),
    created_at: col.timestamp(),
  },
  {
    indexes: [
      { columns: ['organisation_id', 'created_at'] },
      { columns: ['workspace_id', 'created_at'] },
      { columns: ['trace_id'] },
    ],
  },
);

export const requestLogMigrations: Migration[] = [{ id: 'request-log/0001-request-logs', tables: [requestLogs] }];
