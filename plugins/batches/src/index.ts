/**
 * Files, batches and fine-tuning jobs (docs/batches.md). A call whose config is one target of a provider that keeps
 * such objects itself (`nativeJobs`) is forwarded there through the pipeline (checked first where SPEC.md says what
 * is valid); any other target gets the gateway's own: files stored per workspace under FILES_DIR or in an S3-compatible
 * bucket (FILES_S3_*; at most FILES_MAX_BYTES each), batches run line by line through the gateway's pipeline by batch-runner.ts, or
 * translated to the provider's batch API. Fine-tuning is always the provider's: forwarded, or translated to its own
 * fine-tuning API with the gateway's files (translated-fine-tuning.ts).
 */
import { secretBoxFromEnv } from '@gateway/admin-kit';
import { defineService, definePlugin, Errors, type GatewayCalls, type JobCall, JobServices, Services } from '@gateway/sdk';
import { checkBatchBody } from './batch-body.ts';
import { BatchRunner, type RunnerOptions } from './batch-runner.ts';
import { GatewayBatches } from './batches.ts';
import { LocalFileStore } from './file-store.ts';
import { S3FileStore, s3SettingsFromEnv } from './s3-file-store.ts';
import { GatewayFiles } from './files.ts';
import { handleFineTuning } from './fine-tuning.ts';
import { parseBody } from './respond.ts';
import { MIGRATIONS } from './tables.ts';
import { TranslatedBatches } from './translated-batches.ts';
import { TranslatedFineTuning } from './translated-fine-tuning.ts';

export { MIGRATIONS } from './tables.ts';
export { parseBatchInput } from './batch-input.ts';
export { checkFineTuningJob } from './fine-tuning.ts';

/** The runner, for tests that wait for it (`idle()`). */
export const BatchServices = { runner: defineService<BatchRunner>('batchRunner') } as const;

const DEFAULT_MAX_FILE_BYTES = 100 * 1024 * 1024;

function positiveInt(env: Readonly<Record<string, string | undefined>>, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, not ${JSON.stringify(raw)}`);
  return value;
}

export function runnerOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): RunnerOptions {
  return {
    concurrency: positiveInt(env, 'BATCH_CONCURRENCY', 16),
    leaseMs: positiveInt(env, 'BATCH_LEASE_MS', 30_000),
    pollMs: positiveInt(env, 'BATCH_POLL_INTERVAL_MS', 5_000),
  };
}

export default definePlugin({
  async setup(api) {
    const database = api.service(Services.database);
    await database.migrate(MIGRATIONS);
    const maxBodyBytes = positiveInt(api.env, 'FILES_MAX_BYTES', DEFAULT_MAX_FILE_BYTES);
    const box = secretBoxFromEnv(api.env);
    // An S3-compatible bucket when FILES_S3_BUCKET is set (a bad setting stops the start), else FILES_DIR.
    const s3 = s3SettingsFromEnv(api.env);
    const files = new GatewayFiles({ database, store: s3 ? new S3FileStore(s3) : new LocalFileStore(api.env.FILES_DIR) });
    let calls: GatewayCalls | undefined;
    const runner = new BatchRunner(
      {
        database,
        files,
        box,
        logger: api.logger,
        calls: () => {
          if (!calls) throw new Error('gatewayCalls is not ready');
          return calls;
        },
      },
      runnerOptionsFromEnv(api.env),
    );
    const translated = new TranslatedBatches({ database, files, box, owner: runner.owner });
    const batches = new GatewayBatches({ database, files, runner, box, translated });
    const fineTuning = new TranslatedFineTuning({ database, files, box });
    api.provide(BatchServices.runner, runner);
    api.provide(JobServices.jobEndpoints, {
      maxBodyBytes,
      async handle(call: JobCall): Promise<Response> {
        if (call.kind === 'fineTuning') return handleFineTuning(call, fineTuning);
        if (call.native) {
          // The provider keeps them: checked as SPEC.md says, then forwarded unchanged.
          if (call.kind === 'batches' && call.method === 'POST' && call.path === '/batches') checkBatchBody(parseBody(call.body));
          return call.forward();
        }
        if (call.kind === 'files') return files.handle(call);
        if (call.kind === 'batches') return batches.handle(call);
        throw Errors.notFound('No such route');
      },
    });
    api.onReady(() => {
      calls = api.service(Services.gatewayCalls);
      runner.start();
    });
    api.onClose(() => runner.close());
  },
});
