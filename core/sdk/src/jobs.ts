/**
 * Files, batches and fine-tuning jobs (OpenAI's /v1/files, /v1/batches, /v1/fine_tuning/jobs): kinds of gateway
 * routes whose work outlives a request. The core authenticates the call, checks its scope, resolves its config and
 * says whether the config's target keeps such objects itself (its adapter's `nativeJobs`); the plugin providing
 * `JobServices.jobEndpoints` does the rest: forwards to such a target, or stores files and runs batches itself.
 * Without that plugin these paths are passed through unchanged, as before.
 */
import type { GatewayConfig } from './config.ts';
import type { NativeBatchTarget, UpstreamRequest } from './native-batches.ts';
import type { NativeFineTuningTarget } from './native-fine-tuning.ts';
import type { Caller } from './plugin.ts';
import { defineService } from './services.ts';

export type JobKind = 'files' | 'batches' | 'fineTuning';

/**
 * The scopes each job kind needs when the gateway keeps the objects (any one; `*` grants all). A call forwarded to a
 * provider that keeps them itself spends the provider credential on the provider's storage or jobs: it needs
 * passthrough's scope (`GATEWAY_CALL_SCOPES.proxy`), as before these kinds existed. Fine-tuning always runs at a
 * provider (forwarded, or translated to its own API).
 * A gateway-run batch's lines are calls of their endpoint's kind: creating one also needs that kind's scope.
 */
export const JOB_CALL_SCOPES: Readonly<Record<JobKind, readonly string[]>> = {
  files: ['completions.write', 'proxy.write'],
  batches: ['completions.write', 'proxy.write'],
  fineTuning: ['proxy.write'],
};

/** One call to a job route, authenticated and with its config resolved. */
export interface JobCall {
  readonly kind: JobKind;
  readonly method: string;
  /** Path after `/v1`, e.g. `/batches/batch_abc/cancel`. */
  readonly path: string;
  /** Query string with its `?`, or ''. */
  readonly search: string;
  readonly headers: Headers;
  readonly traceId: string;
  readonly caller: Caller;
  /** The request's config (headers, saved config, virtual key), as a gateway call would use it. */
  readonly config: GatewayConfig;
  /**
   * The config is one target whose provider declares this kind natively (`ProviderAdapter.nativeJobs`): the
   * provider stores the files and runs the batches and fine-tuning jobs itself.
   */
  readonly native: boolean;
  /** The body as received (undefined for GET and DELETE), read under the job body limit. */
  readonly body: Uint8Array | undefined;
  /**
   * Sends the call to the provider through the pipeline (config, hooks, retries, request log), the body as given
   * (default: as received), and returns its answer unchanged.
   */
  forward(body?: Uint8Array): Promise<Response>;
  /**
   * The batch translator of a config (default: this call's) when it is one target whose adapter has one
   * (`ProviderAdapter.batches`), with that target resolved; undefined otherwise (native-batches.ts).
   */
  nativeBatches(config?: GatewayConfig): Promise<NativeBatchTarget | undefined>;
  /**
   * The fine-tuning translator of a config (default: this call's) when it is one target whose adapter has one
   * (`ProviderAdapter.fineTuning`), with that target resolved; undefined otherwise (native-fine-tuning.ts).
   */
  nativeFineTuning(config?: GatewayConfig): Promise<NativeFineTuningTarget | undefined>;
  /**
   * Sends one request to the provider of a config (default: this call's) through the pipeline as this caller's
   * passthrough call (authorization, custom host, hooks, retries, request log) and returns the answer unchanged.
   */
  send(request: UpstreamRequest, config?: GatewayConfig): Promise<Response>;
}

export interface JobEndpoints {
  /** The largest body a job route accepts (a file upload), in bytes. */
  readonly maxBodyBytes: number;
  handle(call: JobCall): Promise<Response>;
}

export const JobServices = {
  /** Files, batches and fine-tuning (plugins/batches). */
  jobEndpoints: defineService<JobEndpoints>('jobEndpoints'),
} as const;
