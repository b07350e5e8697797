import { col, defineTable, type Json, type Migration } from '@gateway/sdk';

/** The batch states (SPEC.md "Batch status"). */
export const BATCH_STATES = ['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'] as const;
export type BatchState = (typeof BATCH_STATES)[number];
/** States a runner still has work in (a claimable batch). */
export const ACTIVE_STATES: readonly BatchState[] = ['validating', 'in_progress', 'finalizing', 'cancelling'];

/** Files the gateway stores (per workspace): the bytes live in the file store, under the workspace and the id. */
export const gatewayFiles = defineTable(
  'gateway_files',
  {
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    filename: col.string(255),
    purpose: col.string(32),
    bytes: col.bigint(),
    /** Unix seconds (the file object's field). */
    created_at: col.bigint(),
  },
  { indexes: [{ columns: ['workspace_id', 'created_at'] }] },
);

/**
 * Batches the gateway runs. Times are Unix seconds (the batch object's fields); the lease (owner and expiry in
 * epoch milliseconds) says which process runs the batch: it is claimed by one conditional UPDATE and renewed while
 * the process works, so two processes never run the same batch and a dead one's batch is taken over when it expires.
 */
export const gatewayBatches = defineTable(
  'gateway_batches',
  {
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    endpoint: col.string(64),
    input_file_id: col.string(64),
    completion_window: col.string(16),
    status: col.enum(BATCH_STATES),
    created_at: col.bigint(),
    expires_at: col.bigint(),
    in_progress_at: col.bigint().nullable(),
    finalizing_at: col.bigint().nullable(),
    completed_at: col.bigint().nullable(),
    failed_at: col.bigint().nullable(),
    expired_at: col.bigint().nullable(),
    cancelling_at: col.bigint().nullable(),
    cancelled_at: col.bigint().nullable(),
    output_file_id: col.string(64).nullable(),
    error_file_id: col.string(64).nullable(),
    /** `{object: 'list', data: [{code, message, param, line}]}` when the input was refused. */
    errors: col.json<Json>().nullable(),
    total: col.int().default(0),
    completed: col.int().default(0),
    failed: col.int().default(0),
    metadata: col.json<Record<string, string>>().nullable(),
    /** The caller the lines run as (who created the batch): workspace, key, scopes. */
    caller: col.json<Json>(),
    /** The config the lines run with, sealed (it may hold a provider key). */
    config: col.text(),
    trace_id: col.string(64),
    lease_owner: col.string(128).nullable(),
    lease_expires_at: col.timestamp().nullable(),
  },
  { indexes: [{ columns: ['workspace_id', 'created_at'] }, { columns: ['status'] }] },
);

/** One finished line of a batch: written once (unique batch and line), so a resumed batch skips it. */
export const gatewayBatchResults = defineTable(
  'gateway_batch_results',
  {
    id: col.id(),
    batch_id: col.ref(),
    /** 1-based line of the input file. */
    line: col.int(),
    /** A 2xx answer (the output file) or not (the error file). */
    ok: col.bool(),
    /** The output or error file's line for it (JSON). */
    result: col.text(),
  },
  { indexes: [{ columns: ['batch_id', 'line'], unique: true }] },
);

/**
 * A batch translated to its provider's own batch API (docs/batches.md): the gateway's batch id and the provider's.
 * The batch row holds the OpenAI side; its lease is marked held by the provider, so that no runner takes it up.
 */
export const gatewayNativeBatches = defineTable('gateway_native_batches', {
  /** The gateway's batch id (gateway_batches.id). */
  id: col.id(),
  provider: col.string(64),
  upstream_id: col.string(255),
  /** What the provider's translator keeps between calls (NativeBatchState.ref). */
  ref: col.json<Json>().nullable(),
  /** The input's custom_ids in order: the output and error files follow it. */
  custom_ids: col.json<string[]>(),
  /** The process writing the result files, and until when its claim holds (epoch ms). */
  finalizer: col.string(128).nullable(),
  finalizer_expires_at: col.timestamp().nullable(),
});

/** OpenAI's fine_tuning.job states. */
export const FINE_TUNING_STATES = ['validating_files', 'queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

/**
 * A fine-tuning job translated to its provider's own fine-tuning API (docs/batches.md): the gateway's job id
 * (`ftjob-…`), the provider's, the request as the client sent it, and the job as the provider last showed it.
 */
export const gatewayFineTuningJobs = defineTable(
  'gateway_fine_tuning_jobs',
  {
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    provider: col.string(64),
    upstream_id: col.string(255),
    model: col.string(255),
    training_file: col.string(64),
    validation_file: col.string(64).nullable(),
    suffix: col.string(64).nullable(),
    metadata: col.json<Record<string, string>>().nullable(),
    /** Unix seconds (the job object's fields). */
    created_at: col.bigint(),
    status: col.enum(FINE_TUNING_STATES),
    /** The provider's job no longer changes: the gateway stops asking. */
    ended: col.bool(),
    fine_tuned_model: col.string(255).nullable(),
    finished_at: col.bigint().nullable(),
    trained_tokens: col.bigint().nullable(),
    hyperparameters: col.json<Json>(),
    /** `{code, message, param}` of a failed job. */
    error: col.json<Json>().nullable(),
    /** The config the job's upstream calls use, sealed (it may hold a provider key). */
    config: col.text(),
  },
  { indexes: [{ columns: ['workspace_id', 'created_at'] }] },
);

export const MIGRATIONS: readonly Migration[] = [
  { id: 'batches/0001', tables: [gatewayFiles, gatewayBatches, gatewayBatchResults] },
  { id: 'batches/0002', tables: [gatewayNativeBatches] },
  { id: 'batches/0003', tables: [gatewayFineTuningJobs] },
];
