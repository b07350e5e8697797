import type { TargetConfig } from './config.ts';
import type { ConfigFieldSet } from './config-fields.ts';
import type { Prefill } from './continuation.ts';
import type { JobKind } from './jobs.ts';
import type { NativeBatchTranslator } from './native-batches.ts';
import type { NativeFineTuningTranslator } from './native-fine-tuning.ts';
import type { PricingCatalogue } from './pricing.ts';
import type { EndpointKind, JsonObject } from './types.ts';

/** An HTTP call to a provider, as prepared by an adapter. Adapters build new objects; they never mutate their input. */
export interface ProviderCall {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | ReadableStream<Uint8Array> | null;
}

/** How a provider frames a streamed answer. The core decodes the framing; an adapter maps decoded events. */
export type StreamFraming = 'sse' | 'ndjson' | 'aws-eventstream';

/** One decoded stream event: an SSE event, an NDJSON line or an event-stream message. */
export interface StreamEvent {
  /** SSE `event:` name, or the event-stream `:event-type` header. */
  event?: string;
  /** The payload as text (SSE `data:` lines joined, an NDJSON line, an event-stream payload). */
  data: string;
}

/** Per-stream scratch space an adapter may use across events (ids, tool-call indices, usage). */
export type StreamState = Record<string, unknown>;

/** What one provider event maps to. */
export interface TranslatedEvent {
  /** The OpenAI chunk objects the client is sent for it. */
  chunks: JsonObject[];
  /** The end of a complete answer (the core then sends `data: [DONE]`). */
  done?: boolean;
  /**
   * The answer's usage so far, in OpenAI's shape, whenever the event carries it (the last one given wins): recorded for
   * the completion (tokens limits, cost, the log) whether or not a chunk shows it to the client, who gets a usage
   * chunk only when it asked for `stream_options.include_usage`.
   */
  usage?: JsonObject;
}

export interface StreamTranslator {
  framing: StreamFraming;
  /**
   * Maps one decoded provider event to zero or more OpenAI chunk objects. Absent: the provider already speaks OpenAI
   * SSE and bytes are forwarded unchanged.
   */
  toChunks?(event: StreamEvent, state: StreamState, ctx: TranslateContext): TranslatedEvent;
  /**
   * For a provider that speaks OpenAI SSE (no `toChunks`) and honours `stream_options.include_usage`: when the client
   * did not ask for usage, the core asks for it, so that every stream's usage is known at completion, and removes
   * what the option adds (the usage-only last chunk, `"usage": null` on the others) from the client's stream.
   */
  requestsUsage?: boolean;
}

export interface TranslateContext {
  endpoint: EndpointKind;
  /** The model the client asked for (after parameter rules). */
  model: string | undefined;
  /** Whether extra reasoning output may be surfaced (config `strict_wire_compliance` false). */
  strictWireCompliance: boolean;
  /** Seconds since the epoch, for `created` fields. */
  now: number;
  /**
   * The OpenAI-shaped body this attempt sends (after parameter rules), so that answer and stream translators can
   * read what the client asked for (`stream_options.include_usage`, `encoding_format`, legacy `functions`).
   */
  body?: JsonObject;
}

/** A provider error, normalised: the provider's message is kept. */
export interface ProviderErrorInfo {
  message: string;
  type?: string;
  code?: string | null;
  param?: string | null;
}

export interface EndpointTranslator {
  /** Path under the base URL, e.g. `/chat/completions`; may depend on the target and the model. */
  path(target: TargetConfig, body: JsonObject, ctx: TranslateContext): string;
  /** Pure: the provider's request body. Absent: the OpenAI body is sent as is. */
  request?(body: JsonObject, target: TargetConfig, ctx: TranslateContext): JsonObject;
  /** Pure: the provider's JSON answer mapped to OpenAI's shape. Absent: the answer's bytes go back unchanged. */
  response?(json: unknown, ctx: TranslateContext): JsonObject;
  stream?: StreamTranslator;
  /**
   * Chat only. Declares that the provider continues a trailing assistant message (a prefill), and builds that
   * request: the OpenAI-shaped body with the partial answer `text` appended (`assistantPrefill` of continuation.ts),
   * which `request` then translates. Undefined for a model that does not continue one. Absent: a broken stream is
   * continued on this provider by regenerating the answer (docs/streaming.md).
   */
  prefill?(body: JsonObject, text: string, target: TargetConfig): Prefill | undefined;
}

export interface ProviderAdapter {
  /** The provider name used in `x-gateway-provider` and config `provider`. */
  id: string;
  /** The base URL that a custom host replaces (INTERFACE.md), derived from the target where it varies. */
  baseUrl(target: TargetConfig): string;
  /**
   * Authorization, separate from translation: returns the call with credentials added (bearer, api-key header,
   * SigV4 signature, OAuth token). May be async for token exchange.
   */
  authorize(call: ProviderCall, target: TargetConfig): ProviderCall | Promise<ProviderCall>;
  /**
   * The endpoints it translates. `listModels` is called with GET and no body; without it GET /v1/models is passed
   * through to the provider unchanged. `messages` / `countTokens` declare that the provider speaks Anthropic's
   * Messages API natively: the client's body goes to `path` and the answer comes back as it is (no `request`,
   * `response` or `stream` is read); without them the core translates Messages over `chatComplete`
   * (docs/anthropic-messages.md). `responses` likewise declares OpenAI's Responses API natively (the body to `path`,
   * the answer as it is); without it the core translates Responses over `chatComplete` (docs/responses.md).
   */
  endpoints: Partial<Record<Exclude<EndpointKind, 'proxy'>, EndpointTranslator>>;
  /**
   * The job kinds the provider keeps itself under OpenAI's paths (/files, /batches, /fine_tuning/jobs): a call whose
   * config is one target of this provider is forwarded there; otherwise the gateway stores the files and runs the
   * batches itself (jobs.ts, docs/batches.md).
   */
  nativeJobs?: Partial<Record<JobKind, true>>;
  /**
   * The provider's own batch API, translated (native-batches.ts): a /v1/batches call whose config is one target of
   * this provider, for one of the translator's endpoints, becomes a batch of the provider's, kept under the gateway's
   * batch id with the gateway's files (docs/batches.md). Not read when `nativeJobs.batches` forwards batches as they are.
   */
  batches?: NativeBatchTranslator;
  /**
   * The provider's own fine-tuning API, translated (native-fine-tuning.ts): a /v1/fine_tuning/jobs call whose config
   * is one target of this provider becomes a job of the provider's, kept under the gateway's job id, trained on the
   * gateway's files (docs/batches.md). Not read when `nativeJobs.fineTuning` forwards fine-tuning as it is.
   */
  fineTuning?: NativeFineTuningTranslator;
  /** Maps a provider's error body to a message; absent: OpenAI's `{error: {message, type, code, param}}`. */
  error?(json: unknown, status: number): ProviderErrorInfo | undefined;
  /**
   * The target fields this provider reads beyond the generic ones (credentials, region, deployment…), which of them
   * are secret and which decide where a secret is sent (config-fields.ts). Absent: the generic fields only.
   */
  targetFields?: ConfigFieldSet;
  /**
   * The provider's list prices (pricing.ts): the URL of its data file (`new URL('../pricing.json', import.meta.url)`,
   * read and validated once at start-up, a bad file named in the error), or the catalogue itself. Absent: every
   * model of the provider is unpriced (its cost is null). docs/plugins.md, "Prices".
   */
  pricing?: URL | PricingCatalogue;
}
