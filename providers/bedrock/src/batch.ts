/**
 * OpenAI's /v1/batches on Bedrock batch inference (model invocation jobs), the SDK's `NativeBatchTranslator`:
 *
 * - create: the lines become Converse records (batch-records.ts) in `s3://<svcA_batch_bucket>/<svcA_batch_prefix>
 *   <batch id>/records.jsonl`; then CreateModelInvocationJob
 *   (`modelInvocationType: Converse`, the lines' one model, the role svcA_batch_role_arn, output under `…/output/`,
 *   the 24 h completion window as `timeoutDurationInHours`). The job ARN is the upstream id.
 * - retrieve: GetModelInvocationJob, its status and record counts mapped to the batch object's (jobStatus below).
 * - cancel: StopModelInvocationJob.
 * - results: Bedrock's `…/output/<job id>/records.jsonl.out`, each record's Converse answer (or error) as an OpenAI
 *   batch line, found by its record id (its position in the input); a request with no record (the job was stopped,
 *   expired or failed first) is an error line `batch_cancelled`, `batch_expired` or `batch_failed`.
 *
 * The calls are signed as the runtime's are, with the target's keys or its role's (batch-aws.ts for the hosts);
 * they go to S3 and the control plane, not to the runtime that the pipeline's passthrough reaches.
 */
import { Errors, type JsonObject, type NativeBatchContext, type NativeBatchLine, type NativeBatchLineError, type NativeBatchResult, type NativeBatchState, type NativeBatchTranslator, type TargetConfig } from '@gateway/sdk';
import type { Signer } from './auth.ts';
import { BatchAws, type BatchEndpoints } from './batch-aws.ts';
import { batchModel, inputRecords, resultOfRecord, untranslatableLines } from './batch-records.ts';

const INPUT_NAME = 'records.jsonl';

/** What the gateway keeps for a job between calls (the translator's `ref`). */
interface JobRef {
  bucket: string;
  /** The batch's folder in the bucket, with its trailing slash. */
  folder: string;
  model: string;
}

function refOf(value: JsonObject | undefined): JobRef {
  if (!value || typeof value.bucket !== 'string' || typeof value.folder !== 'string' || typeof value.model !== 'string') {
    throw Errors.internal('The Bedrock batch has lost where its records are (no bucket, folder and model kept)');
  }
  return { bucket: value.bucket, folder: value.folder, model: value.model };
}

const isSet = (value: unknown) => typeof value === 'string' && value !== '';

/** Whether a target names the bucket and the role batch inference needs (without them the gateway runs the batch). */
export function hasBatchSettings(target: TargetConfig): boolean {
  const fields = target as Record<string, unknown>;
  return isSet(fields.svcA_batch_bucket) && isSet(fields.svcA_batch_role_arn);
}

/** The bucket, prefix and role a target needs for batch inference; a 400 naming what is missing. */
export function batchSettings(target: TargetConfig): { bucket: string; prefix: string; roleArn: string } {
  const fields = target as Record<string, unknown>;
  const bucket = fields.svcA_batch_bucket;
  const roleArn = fields.svcA_batch_role_arn;
  const missing = [isSet(bucket) ? '' : 'svcA_batch_bucket', isSet(roleArn) ? '' : 'svcA_batch_role_arn'].filter(Boolean);
  if (missing.length) {
    throw Errors.badRequest(
      `Bedrock batch inference needs ${missing.join(' and ')} in the target: the bucket the records go through and the service role Bedrock reads and writes it as`,
      missing[0],
    );
  }
  const prefix = typeof fields.svcA_batch_prefix === 'string' ? fields.svcA_batch_prefix : '';
  return { bucket: bucket as string, prefix: prefix && !prefix.endsWith('/') ? `${prefix}/` : prefix, roleArn: roleArn as string };
}

/** The job id: the last part of the job ARN (Bedrock's output folder is named after it). */
export function jobIdOf(jobArn: string): string {
  return jobArn.slice(jobArn.lastIndexOf('/') + 1);
}

/** Seconds since the epoch of a timestamp as the control plane writes them (ISO 8601, or epoch seconds). */
export function seconds(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.floor(value);
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined);

/**
 * GetModelInvocationJob → the batch object's state. Submitted and Validating are `validating`; Scheduled (validated,
 * waiting for capacity) and InProgress `in_progress`; Completed and PartiallyCompleted (some records failed: they are
 * in the error file) `completed`; Stopping `cancelling`, Stopped `cancelled`; Expired (the job's timeout ran out)
 * `expired`; Failed `failed` with the job's message.
 */
export function jobStatus(job: JsonObject): NativeBatchState {
  const end = seconds(job.endTime);
  const at = (name: keyof NonNullable<NativeBatchState['at']>): NativeBatchState['at'] => (end === undefined ? {} : { [name]: end });
  let state: NativeBatchState;
  switch (job.status) {
    case 'Submitted':
    case 'Validating':
      state = { status: 'validating' };
      break;
    case 'Scheduled':
    case 'InProgress':
      state = { status: 'in_progress' };
      break;
    case 'Completed':
    case 'PartiallyCompleted':
      state = { status: 'completed', at: at('completed_at') };
      break;
    case 'Stopping':
      state = { status: 'cancelling' };
      break;
    case 'Stopped':
      state = { status: 'cancelled', at: at('cancelled_at') };
      break;
    case 'Expired':
      state = { status: 'expired', at: at('expired_at') };
      break;
    case 'Failed':
      state = {
        status: 'failed',
        at: at('failed_at'),
        errors: [{ line: 0, code: 'batch_failed', message: typeof job.message === 'string' && job.message ? job.message : 'The Bedrock batch inference job failed', param: null }],
      };
      break;
    default:
      throw Errors.upstreamInvalid('bedrock', `GetModelInvocationJob answered the unknown status ${JSON.stringify(job.status)}`);
  }
  const total = count(job.totalRecordCount);
  if (total !== undefined) state.counts = { total, completed: count(job.successRecordCount) ?? 0, failed: count(job.errorRecordCount) ?? 0 };
  return state;
}

/** Why a request of an ended job has no record in its output, by the job's status. */
export function notRun(job: JsonObject): { code: string; message: string } {
  switch (job.status) {
    case 'Stopped':
    case 'Stopping':
      return { code: 'batch_cancelled', message: 'The batch was cancelled before this request ran.' };
    case 'Expired':
      return { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' };
    default:
      return { code: 'batch_failed', message: typeof job.message === 'string' && job.message ? job.message : 'Bedrock wrote no result for this request.' };
  }
}

/** A name Bedrock takes (letters, digits, hyphens; at most 63) made of the gateway's batch id. */
const jobName = (batchId: string) => `gateway-${batchId.replace(/[^a-zA-Z0-9]+/g, '-')}`.slice(0, 63).replace(/-+$/, '');

const jobPath = (jobArn: string) => `/model-invocation-job/${encodeURIComponent(jobArn)}`;

export function bedrockBatches(sign: Signer, endpoints: BatchEndpoints, aws = new BatchAws(sign, endpoints)): NativeBatchTranslator {
  return {
    endpoints: ['/v1/chat/completions'],
    accepts: hasBatchSettings,

    check(lines: readonly NativeBatchLine[], ctx: NativeBatchContext): NativeBatchLineError[] {
      batchSettings(ctx.target);
      const { errors } = batchModel(lines);
      return [...errors, ...untranslatableLines(lines, ctx.strictWireCompliance)].sort((a, b) => a.line - b.line);
    },

    async create(lines, ctx, options) {
      const { bucket, prefix, roleArn } = batchSettings(ctx.target);
      const { model, errors } = batchModel(lines);
      if (!model || errors.length) throw Errors.badRequest(errors[0]?.message ?? 'The batch has no line', 'input_file_id');
      const folder = `${prefix}${options.batchId}/`;
      await aws.putObject(ctx.target, bucket, `${folder}${INPUT_NAME}`, new TextEncoder().encode(inputRecords(lines, ctx.strictWireCompliance)));
      const created = await aws.bedrock(ctx.target, 'POST', '/model-invocation-job', 'CreateModelInvocationJob', {
        jobName: jobName(options.batchId),
        roleArn,
        // Bedrock ignores a second create with the same token: a retried create makes one job.
        clientRequestToken: options.batchId.replace(/[^a-zA-Z0-9]/g, ''),
        modelId: model,
        modelInvocationType: 'Converse',
        inputDataConfig: { s3InputDataConfig: { s3InputFormat: 'JSONL', s3Uri: `s3://${bucket}/${folder}${INPUT_NAME}` } },
        outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${bucket}/${folder}output/` } },
        // The completion window (24h, the only one OpenAI offers) is Bedrock's shortest timeout.
        timeoutDurationInHours: 24,
      });
      if (typeof created.jobArn !== 'string' || !created.jobArn) throw Errors.upstreamInvalid('bedrock', 'CreateModelInvocationJob answered no jobArn');
      return { id: created.jobArn, status: 'validating', counts: { total: lines.length, completed: 0, failed: 0 }, ref: { bucket, folder, model } };
    },

    async retrieve(id, ctx) {
      return jobStatus(await aws.bedrock(ctx.target, 'GET', jobPath(id), 'GetModelInvocationJob'));
    },

    async cancel(id, ctx) {
      // The job stops asynchronously (Stopping, then Stopped): read later by retrieve.
      await aws.bedrock(ctx.target, 'POST', `${jobPath(id)}/stop`, 'StopModelInvocationJob');
      return { status: 'cancelling' };
    },

    async *results(id, ctx, value, customIds): AsyncIterable<NativeBatchResult> {
      const ref = refOf(value);
      // A job stopped, expired or failed before it wrote anything has no output file.
      const output = await aws.getObject(ctx.target, ref.bucket, `${ref.folder}output/${jobIdOf(id)}/${INPUT_NAME}.out`);
      const answered = new Set<string>();
      if (output) {
        const context = { customIds, model: ref.model, strictWireCompliance: ctx.strictWireCompliance, now: Math.floor(Date.now() / 1000) };
        for (const line of new TextDecoder().decode(output).split('\n')) {
          const result = resultOfRecord(line, context);
          if (result && !answered.has(result.customId)) {
            answered.add(result.customId);
            yield result;
          }
        }
      }
      if (answered.size === customIds.length) return;
      // The requests the job never ran go to the error file, as OpenAI reports them.
      const unrun = notRun(await aws.bedrock(ctx.target, 'GET', jobPath(id), 'GetModelInvocationJob'));
      for (const customId of customIds) if (!answered.has(customId)) yield { customId, error: unrun };
    },
  };
}
