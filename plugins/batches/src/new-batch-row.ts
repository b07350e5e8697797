/** The row of a batch just created: `validating`, nothing counted yet, its config sealed in it. */
import type { SecretBox } from '@gateway/admin-kit';
import type { JobCall, JsonObject } from '@gateway/sdk';
import { type BatchRequest, COMPLETION_WINDOWS } from './batch-body.ts';
import type { BatchRow } from './batch-object.ts';
import { configPlace } from './batch-runner.ts';
import { newId, nowSeconds } from './respond.ts';

/** Who runs the batch: nobody yet (a runner claims it), or the provider (a translated batch, never claimed). */
export interface BatchLease {
  owner: string | null;
  expiresAt: number | null;
}

export function newBatchRow(call: JobCall, request: BatchRequest, box: SecretBox, lease: BatchLease): BatchRow {
  const id = newId('batch_');
  const created = nowSeconds();
  return {
    id,
    organisation_id: call.caller.organisationId,
    workspace_id: call.caller.workspaceId,
    endpoint: request.endpoint,
    input_file_id: request.inputFileId,
    completion_window: request.completionWindow,
    status: 'validating',
    created_at: created,
    expires_at: created + COMPLETION_WINDOWS[request.completionWindow]!,
    in_progress_at: null,
    finalizing_at: null,
    completed_at: null,
    failed_at: null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    output_file_id: null,
    error_file_id: null,
    errors: null,
    total: 0,
    completed: 0,
    failed: 0,
    metadata: request.metadata,
    caller: { ...call.caller, scopes: [...call.caller.scopes] } as unknown as JsonObject,
    config: box.sealJson(call.config, configPlace(id)),
    trace_id: call.traceId,
    lease_owner: lease.owner,
    lease_expires_at: lease.expiresAt,
  };
}
