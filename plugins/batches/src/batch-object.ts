/** The batch object (SPEC.md "Batch object") of a stored row. */
import type { JsonObject, Row } from '@gateway/sdk';
import type { gatewayBatches } from './tables.ts';

export type BatchRow = Row<typeof gatewayBatches>;

const num = (v: number | null): number | null => (v === null ? null : Number(v));

export function batchObject(row: BatchRow): JsonObject {
  return {
    id: row.id,
    object: 'batch',
    endpoint: row.endpoint,
    errors: (row.errors ?? null) as JsonObject | null,
    input_file_id: row.input_file_id,
    completion_window: row.completion_window,
    status: row.status,
    output_file_id: row.output_file_id,
    error_file_id: row.error_file_id,
    created_at: Number(row.created_at),
    in_progress_at: num(row.in_progress_at),
    expires_at: Number(row.expires_at),
    finalizing_at: num(row.finalizing_at),
    completed_at: num(row.completed_at),
    failed_at: num(row.failed_at),
    expired_at: num(row.expired_at),
    cancelling_at: num(row.cancelling_at),
    cancelled_at: num(row.cancelled_at),
    request_counts: { total: Number(row.total), completed: Number(row.completed), failed: Number(row.failed) },
    metadata: row.metadata ?? null,
  };
}
