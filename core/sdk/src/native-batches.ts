/**
 * Batches translated to a provider's own batch API (Anthropic's Message Batches, Gemini's batch mode, Bedrock's
 * model invocation jobs…). The gateway keeps the OpenAI side — its batch id, the input file already read and
 * checked, the batch object and its states, the output and error files — and a provider package implements
 * `NativeBatchTranslator` (`ProviderAdapter.batches`) for the provider's side: build and send the upstream batch,
 * map its status, cancel it, and give its results back as OpenAI batch lines. docs/batches.md.
 *
 * Every upstream call goes through `NativeBatchContext.send`: the pipeline as a passthrough call of the batch's
 * creator (the adapter's authorization, the custom host behind the SSRF guard, retries, one request-log row).
 */
import type { TargetConfig } from './config.ts';
import type { JsonObject } from './types.ts';

/** The states of SPEC.md's batch object. */
export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

/** The batch object's timestamps a provider may report (Unix seconds). */
export type BatchTimestamp = 'in_progress_at' | 'finalizing_at' | 'completed_at' | 'failed_at' | 'expired_at' | 'cancelling_at' | 'cancelled_at';

/** One line of the batch's input file, checked: its OpenAI body with the target's parameter rules applied. */
export interface NativeBatchLine {
  /** 1-based line of the input file. */
  readonly line: number;
  readonly customId: string;
  readonly body: JsonObject;
}

/** A line the provider's batch cannot take: the batch fails before anything is sent, as with a malformed line. */
export interface NativeBatchLineError {
  /** The 1-based input line, or 0 for an error of the whole batch. */
  line: number;
  code: string;
  message: string;
  param: string | null;
}

/** One call to the provider, relative to its base URL (or the target's custom host). */
export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path and query under the base URL, e.g. `/messages/batches/msgbatch_1` or `/v1beta/batches/b1:cancel`. */
  path: string;
  /** Sent as JSON (`content-type: application/json`). */
  body?: JsonObject;
  /** Sent as `multipart/form-data` instead (a file upload); not with `body`. */
  multipart?: UpstreamMultipart;
}

/** A multipart/form-data body: text fields and files. */
export interface UpstreamMultipart {
  fields: Readonly<Record<string, string>>;
  files: readonly { field: string; filename: string; contentType: string; content: Uint8Array }[];
}

export interface NativeBatchContext {
  /** The batch's target (as its config resolved it). */
  readonly target: TargetConfig;
  /** The batch's endpoint, one of the translator's `endpoints`. */
  readonly endpoint: string;
  /** Config `strict_wire_compliance` (extra reasoning output hidden when true). */
  readonly strictWireCompliance: boolean;
  /**
   * Sends a request to the target's provider through the pipeline as the batch creator's passthrough call; the
   * answer comes back unchanged (whatever its status). Rejects only when no answer could be had at all.
   */
  send(request: UpstreamRequest): Promise<Response>;
}

/** The upstream batch as the gateway's batch object sees it. */
export interface NativeBatchState {
  /**
   * The upstream state mapped to SPEC.md's. A final state (`completed`, `cancelled`, `expired`, `failed`) means the
   * upstream batch has ended: the gateway then reads `results` once and writes the output and error files.
   */
  status: BatchStatus;
  /** The request counts as far as the provider says them; absent: unchanged. */
  counts?: { total: number; completed: number; failed: number };
  /** Times the provider reports for the states reached; the gateway fills in the others when it sees them. */
  at?: Partial<Record<BatchTimestamp, number>>;
  /** Why a `failed` batch failed (the batch object's `errors.data`). */
  errors?: NativeBatchLineError[];
  /**
   * Whatever the translator needs to keep between calls (a results URL, an output location), stored with the batch
   * and given back to `retrieve`, `cancel` and `results`. Replaced when a later state sets it.
   */
  ref?: JsonObject;
}

export interface NativeBatchCreated extends NativeBatchState {
  /** The provider's id of the batch (kept beside the gateway's id; never shown to the client). */
  id: string;
}

/** One request's outcome, as an OpenAI batch output or error line says it. */
export interface NativeBatchResult {
  customId: string;
  /** The answer, OpenAI-shaped: a 2xx `body` is a chat.completion (the output file), any other an error body. */
  response?: { statusCode: number; body: JsonObject };
  /** No answer at all (cancelled or expired before it ran): `{code, message}` of the error file's line. */
  error?: { code: string; message: string };
}

export interface NativeBatchOptions {
  /** The gateway's batch id (a display name or a label upstream). */
  readonly batchId: string;
  readonly completionWindow: string;
  readonly metadata: Readonly<Record<string, string>> | null;
}

/**
 * A provider's own batch API behind OpenAI's /v1/batches. Methods reject with a GatewayError (the provider's status
 * and message) when the provider refuses; the gateway reports it to the client.
 */
export interface NativeBatchTranslator {
  /** The batch endpoints translated (e.g. `/v1/chat/completions`); a batch of any other runs in the gateway. */
  readonly endpoints: readonly string[];
  /**
   * Whether this target can use the provider's batch API at all (Bedrock's needs a bucket and a role, say); absent:
   * every target can. A batch for a target it does not accept runs in the gateway, line by line, as it would for a
   * provider without a translator.
   */
  accepts?(target: TargetConfig): boolean;
  /** Lines the provider's batch cannot take (one model per batch, say), before anything is sent. */
  check?(lines: readonly NativeBatchLine[], ctx: NativeBatchContext): NativeBatchLineError[];
  /** Creates the upstream batch (uploading its input first where the provider needs that). */
  create(lines: readonly NativeBatchLine[], ctx: NativeBatchContext, options: NativeBatchOptions): Promise<NativeBatchCreated>;
  /** The upstream batch's state now. */
  retrieve(id: string, ctx: NativeBatchContext, ref: JsonObject | undefined): Promise<NativeBatchState>;
  /** Asks the provider to cancel; the state after asking. */
  cancel(id: string, ctx: NativeBatchContext, ref: JsonObject | undefined): Promise<NativeBatchState>;
  /**
   * The results of an ended batch, one per request that has one, in any order. `customIds`: the batch's custom_ids in
   * input order, for a provider that answers in order without them.
   */
  results(id: string, ctx: NativeBatchContext, ref: JsonObject | undefined, customIds: readonly string[]): AsyncIterable<NativeBatchResult>;
}

/** What the core resolves for a config whose one target's adapter translates batches. */
export interface NativeBatchTarget {
  readonly providerId: string;
  readonly translator: NativeBatchTranslator;
  readonly target: TargetConfig;
  /** A line's OpenAI body as this target sends it: the target's parameter rules (override, default, drop) applied. */
  prepare(body: JsonObject): JsonObject;
}
