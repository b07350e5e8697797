/**
 * Fine-tuning translated to a provider's own fine-tuning API (Mistral's /v1/fine_tuning/jobs of another shape…).
 * The gateway keeps the OpenAI side — its job id (`ftjob-…`), the training and validation files (gateway files),
 * the request as the client sent it, the job object — and a provider package implements `NativeFineTuningTranslator`
 * (`ProviderAdapter.fineTuning`) for the provider's side: upload the files, create the job, read its state (with its
 * events and checkpoints) and cancel it, in OpenAI's terms. docs/batches.md.
 *
 * Every upstream call goes through `NativeFineTuningContext.send`: the pipeline as a passthrough call of the caller
 * (the adapter's authorization, the custom host behind the SSRF guard, retries, one request-log row).
 */
import type { TargetConfig } from './config.ts';
import type { UpstreamRequest } from './native-batches.ts';
import type { JsonObject } from './types.ts';

/** The states of OpenAI's fine_tuning.job. */
export type FineTuningStatus = 'validating_files' | 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** A gateway-kept file the job trains or validates on. */
export interface NativeFineTuningFile {
  /** The gateway's file id (`file-…`). */
  readonly id: string;
  readonly filename: string;
  readonly content: Uint8Array;
}

/** POST /v1/fine_tuning/jobs as the client sent it, checked (SPEC.md), with its files read. */
export interface NativeFineTuningRequest {
  /** The gateway's job id (a label upstream where the provider has one). */
  readonly jobId: string;
  /** The body as received: `model`, `hyperparameters`, `method`, `suffix`, `seed`, `integrations`, `metadata`… */
  readonly body: JsonObject;
  readonly trainingFile: NativeFineTuningFile;
  readonly validationFile: NativeFineTuningFile | null;
}

export interface NativeFineTuningContext {
  /** The job's target (as its config resolved it). */
  readonly target: TargetConfig;
  /**
   * Sends a request to the target's provider through the pipeline as the caller's passthrough call; the answer comes
   * back unchanged (whatever its status). Rejects only when no answer could be had at all.
   */
  send(request: UpstreamRequest): Promise<Response>;
}

/** One event of the job, oldest first as the provider lists them. */
export interface NativeFineTuningEvent {
  /** Unix seconds. */
  createdAt: number;
  level: 'info' | 'warn' | 'error';
  message: string;
  data: JsonObject | null;
}

/** One checkpoint of the job. */
export interface NativeFineTuningCheckpoint {
  stepNumber: number;
  /** Unix seconds. */
  createdAt: number;
  /** OpenAI's metric names (`train_loss`, `valid_loss`, `valid_mean_token_accuracy`…), those the provider reports. */
  metrics: Readonly<Record<string, number>>;
  /** The model name to call this checkpoint by, where the provider has one. */
  model: string | null;
}

/** The provider's job as OpenAI's fine_tuning.job sees it. */
export interface NativeFineTuningJob {
  status: FineTuningStatus;
  /**
   * The provider's job will not change any more (the gateway stops asking). Usually a final status; a cancel the
   * provider is still carrying out shows `cancelled`, as OpenAI's cancel answers, but has not ended.
   */
  ended: boolean;
  fineTunedModel: string | null;
  /** Unix seconds, once ended. */
  finishedAt: number | null;
  trainedTokens: number | null;
  /** OpenAI's hyperparameters (`n_epochs`, `batch_size`, `learning_rate_multiplier`) as the provider applies them. */
  hyperparameters: JsonObject;
  /** Why a `failed` job failed. */
  error: { code: string; message: string; param: string | null } | null;
  events: NativeFineTuningEvent[];
  checkpoints: NativeFineTuningCheckpoint[];
}

export interface NativeFineTuningCreated extends NativeFineTuningJob {
  /** The provider's id of the job (kept beside the gateway's id; never shown to the client). */
  id: string;
}

/**
 * A provider's own fine-tuning API behind OpenAI's /v1/fine_tuning/jobs. Methods reject with a GatewayError: 400
 * for what the provider cannot take (a hyperparameter it has no equivalent of), or the provider's status and
 * message when it refuses; the gateway reports it to the client.
 */
export interface NativeFineTuningTranslator {
  /** Uploads the files where the provider needs them and creates the job. */
  create(request: NativeFineTuningRequest, ctx: NativeFineTuningContext): Promise<NativeFineTuningCreated>;
  /** The job now, with its events and checkpoints. */
  retrieve(id: string, ctx: NativeFineTuningContext): Promise<NativeFineTuningJob>;
  /** Asks the provider to cancel; the job after asking. */
  cancel(id: string, ctx: NativeFineTuningContext): Promise<NativeFineTuningJob>;
}

/** What the core resolves for a config whose one target's adapter translates fine-tuning. */
export interface NativeFineTuningTarget {
  readonly providerId: string;
  readonly translator: NativeFineTuningTranslator;
  readonly target: TargetConfig;
}
