import type { AdminRoute, ApiKeyType } from './admin.ts';
import type { GatewayConfig, TargetConfig } from './config.ts';
import type { ConfigFieldSet, StrategyFieldSet } from './config-fields.ts';
import type { AttemptContinuation, ContinuationMode, StreamResumption } from './continuation.ts';
import type { GatewayError } from './errors.ts';
import type { ProviderAdapter } from './provider.ts';
import type { ServiceToken } from './services.ts';
import type { ToolCall, ToolCallStage } from './tool-calls.ts';
import type { EndpointKind, JsonObject, Logger, StateStore } from './types.ts';
import type { Figures, TokenUsage } from './usage.ts';

/** The contract version. The loader refuses a plugin whose `gateway.api` differs. */
export const PLUGIN_API_VERSION = 1;

/**
 * The `"gateway"` field of a plugin's package.json. A plugin is what it registers (providers, stages, checks,
 * routes, services): the manifest only says how to load it.
 */
export interface PluginManifest {
  api: number;
  /** Module to import, relative to the package folder. */
  entry: string;
  /** Names of plugins that must be loaded first. */
  requires?: string[];
  /** Semver range of the core this plugin works with. */
  core?: string;
}

// ---- the request as the pipeline sees it --------------------------------------------------------------------

/** Who is calling, from the gateway API key. */
export interface Caller {
  apiKeyId: string;
  organisationId: string;
  /** The key's workspace; an organisation-service key acts in the organisation's default workspace. */
  workspaceId: string;
  scopes: readonly string[];
  keyType: ApiKeyType;
  /** The user a workspace-user key belongs to; null for service keys. */
  userId: string | null;
}

/**
 * The prompt a call ran from (the prompts plugin): the contract between the prompts plugin, which sets it, and the
 * request log, which copies it into `request_logs.prompt_id` / `prompt_version` (analytics' `prompt` filter and group).
 */
export interface PromptRun {
  /** The prompt's id (not its slug: a slug may be renamed, the id is what the log groups by). */
  readonly id: string;
  /** The version of the prompt that ran (1, 2, …). */
  readonly version: number;
}

export interface GatewayRequest {
  readonly traceId: string;
  readonly endpoint: EndpointKind;
  readonly method: string;
  /** Path after `/v1`, e.g. `/chat/completions`. */
  readonly path: string;
  /** Query string including `?`, or ''. */
  readonly search: string;
  readonly headers: Headers;
  /** Parsed JSON body of a first-class endpoint; stages that change it set a new object. */
  body: JsonObject | undefined;
  /** The body as received, for passthrough and for sending unchanged when no rule altered it. */
  readonly rawBody: Uint8Array | undefined;
  /**
   * The object parsed from `rawBody`. Stages that change the body set a new object, so `body === parsedBody` means
   * the body is still exactly `rawBody`.
   */
  readonly parsedBody: JsonObject | undefined;
  readonly metadata: Readonly<Record<string, string>>;
  readonly caller: Caller;
  readonly config: GatewayConfig;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /** `performance.now()` when the request arrived (for latencies, not a wall-clock time). */
  readonly receivedAt: number;
  /** Free space for stages to share facts about this request (hook results, cache status). */
  readonly locals: Record<string, unknown>;
  /**
   * Set when the call runs from a prompt: by the prompts plugin (a request stage, or `InternalCall.prompt`), before
   * the request's finally stages run. The request log records it.
   */
  prompt?: PromptRun;
}

/**
 * A call the gateway makes on a plugin's behalf (service `gatewayCalls`), through the same pipeline as a client's:
 * config resolution (JSON or a saved config, virtual keys, `@slug` providers), provider translation, retries,
 * the request log. The response cache embeds conversations this way with a configured embeddings target.
 */
export interface InternalCall {
  endpoint: 'chatComplete' | 'complete' | 'embed' | 'moderate' | 'responses';
  /** The OpenAI-shaped body (a Responses body for `responses`). */
  body: JsonObject;
  /** Resolved with `resolveConfig`. */
  config: GatewayConfig;
  /** Whose call it is: workspace, stored access and the request log follow it. */
  caller: Caller;
  /** The trace it belongs to (the client request that caused it); a new one when absent. */
  traceId?: string;
  /** Logged as the call's span name (`x-gateway-span-name`). */
  spanName?: string;
  /** The prompt the call runs from: becomes the request's `prompt` (and so the log's prompt_id / prompt_version). */
  prompt?: PromptRun;
  /**
   * The call's metadata (`x-gateway-metadata` of the request that caused it, parsed): stored with the log, read by
   * conditional routing, policies and guardrails as a client's. None when absent.
   */
  metadata?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
}

export interface GatewayCalls {
  /** The config a value names, as `x-gateway-config` would resolve it for `caller`; throws the same 400s. */
  resolveConfig(value: string, caller: Caller): GatewayConfig;
  /** The answer a client would get (OpenAI-shaped, an error body on failure); never rejects. */
  call(call: InternalCall): Promise<Response>;
}

/** One attempt of one target. */
export interface Attempt {
  /** Path of the target, e.g. `config.targets[1]`. */
  readonly index: string;
  readonly target: TargetConfig;
  readonly provider: ProviderAdapter;
  /** 0 for the first call, then 1, 2 … for retries. */
  readonly retry: number;
  /**
   * The OpenAI-shaped body this target sends: the request's body after the target's parameter rules (override,
   * default, drop). Undefined for passthrough calls. Attempt stages (a cache, say) key on it.
   */
  readonly body: JsonObject | undefined;
  /** The integration whose stored credentials this target uses (a `@slug` provider), when it does: its limits apply. */
  readonly integrationId?: string;
  /** Set when this attempt continues a stream that broke (continuation.ts): how, and what the client already has. */
  readonly continuation?: AttemptContinuation;
}

/** What an attempt produced. `response` is an OpenAI-shaped answer (or the unchanged passthrough answer). */
export interface AttemptResult {
  response: Response;
  /** Status from the provider (or the gateway's status if it never got one). */
  status: number;
  providerId: string;
  error?: GatewayError;
  /** Time to the provider's response headers. */
  upstreamLatencyMs?: number;
  /** The provider's `Retry-After` / `Retry-After-ms`, in milliseconds, when it sent one. */
  retryAfterMs?: number;
  /** Resolves when the answer's body has been sent whole or has failed (streams end later than headers). */
  settled: Promise<SettledBody>;
  /**
   * A whole (non-streamed) answer as text, when there is one: the server then builds the client's Response once,
   * with its own headers, instead of copying `response`. `response` is the same answer as a Response.
   */
  answer?: { text: string; status: number; contentType: string };
  /** A committed chat stream that may be continued if it breaks (continuation.ts); stages pass it on unchanged. */
  resumption?: StreamResumption;
}

export interface SettledBody {
  /** The answer as sent to the client, size-capped, for the log. */
  body: string | undefined;
  error?: GatewayError;
  /** The client went away before the end. */
  clientAborted?: boolean;
  /** A stream ended with its end marker (whole answers: undefined). */
  complete?: boolean;
  /**
   * The last `usage` object a stream's events carried, taken from the events the core parsed anyway (a stream's
   * usage may lie beyond the size-capped `body`), or a whole answer's `usage` when the core parsed that answer to check
   * it; otherwise undefined, and a whole answer's usage is read from `body`.
   */
  usage?: JsonObject;
}

// ---- stages ---------------------------------------------------------------------------------------------------

/**
 * Running rules (ARCHITECTURE.md): request, attempt and response stages are `sequential` (one after another; each
 * may change the request or end it with a response); finally stages are `fire-and-forget` (started, never awaited).
 */
interface StageBase {
  name: string;
  /**
   * Names of stages of the same phase this one runs before (an attempt stage: outside them, seeing their result).
   * The order is decided once at start-up; a name no loaded stage has is ignored (its plugin may be disabled), a
   * cycle stops the start. Stages that name nothing keep their registration order.
   */
  before?: string | readonly string[];
  /** Names of stages of the same phase this one runs after (an attempt stage: inside them). */
  after?: string | readonly string[];
  /** Cheap synchronous test; a stage that does not apply costs nothing. */
  applies?(req: GatewayRequest): boolean;
}

/** Before routing, once per request. Returning a Response ends the request with it. */
export interface RequestStage extends StageBase {
  phase: 'request';
  rule: 'sequential';
  run(req: GatewayRequest): void | Response | Promise<void | Response>;
}

/** Around each provider attempt (cache, rate/usage policy, circuit check): onion style, may answer itself. */
export interface AttemptStage extends StageBase {
  phase: 'attempt';
  rule: 'sequential';
  run(req: GatewayRequest, attempt: Attempt, next: () => Promise<AttemptResult>): Promise<AttemptResult>;
}

/** After routing, on the answer; may replace it. */
export interface ResponseStage extends StageBase {
  phase: 'response';
  rule: 'sequential';
  run(req: GatewayRequest, response: Response): void | Response | Promise<void | Response>;
}

/** The request's outcome, for logging and accounting. */
export interface Outcome {
  status: number;
  providerId: string | undefined;
  targetIndex: string | undefined;
  latencyMs: number;
  upstreamLatencyMs: number | undefined;
  /** Response body text (size-capped) once known; streams fill it when they end. */
  responseBody: string | undefined;
  error: GatewayError | undefined;
  attempts: readonly AttemptRecord[];
  /**
   * The answer's final token usage (usage.ts), read once when first asked for, after the answer was handed to the
   * client (a stream's from its events, a whole answer's from its body): the request log, the rate and usage limits
   * and the pricing read this one reading, for streams whether or not the client asked for
   * `stream_options.include_usage` (provider.ts, `TranslatedEvent.usage` and `requestsUsage`). Undefined when the
   * answer carries none (errors, a stream from a provider that sent none).
   */
  readonly usage: TokenUsage | undefined;
  /** Figures plugins computed once for this call (a cost), for the others to read (usage.ts, `Figures`). */
  readonly figures: Figures;
}

export interface AttemptRecord {
  index: string;
  providerId: string;
  retry: number;
  status: number;
  latencyMs: number;
  error?: string;
  /** The integration whose stored credentials the attempt used (a `@slug` provider): its prices apply. */
  integrationId?: string;
  /**
   * The attempt's stream broke after content reached the client (`error` says how) and the config was asked for the
   * rest: the attempts after it that say `continued` went on with it (none when nothing was left to try).
   */
  broken?: boolean;
  /** The attempt continued a broken stream: with the partial answer as prefill, or by regenerating it. */
  continued?: ContinuationMode;
  /** The stored provider the attempt used, as named (`@slug`, without the `@`); undefined for a provider type. */
  providerSlug?: string;
}

/** After the answer is sent; never awaited. */
export interface FinallyStage extends StageBase {
  phase: 'finally';
  rule: 'fire-and-forget';
  run(req: GatewayRequest, outcome: Outcome): void | Promise<void>;
}

/** A stage of the tool-call phase (tool-calls.ts): around the MCP and A2A proxies' tool and agent calls. */
export type Stage = RequestStage | AttemptStage | ResponseStage | FinallyStage | ToolCallStage;

// ---- strategies -----------------------------------------------------------------------------------------------

export interface StrategyContext {
  readonly request: GatewayRequest;
  /** Whether a target's circuit is open (the engine skips such targets). */
  isAvailable(index: string): boolean;
}

export interface Strategy {
  mode: string;
  /** Indices into `node.targets` in the order to try. */
  plan(node: GatewayConfig, ctx: StrategyContext): number[];
  /** Whether to try the next planned target after this result. */
  next(result: AttemptResult, node: GatewayConfig, child: GatewayConfig): boolean;
  /** The `strategy` fields this mode reads beyond `mode` and `on_status_codes`, and their rules (config-fields.ts). */
  strategyFields?: StrategyFieldSet;
}

// ---- guardrails ---------------------------------------------------------------------------------------------------

export interface GuardrailCheckContext {
  request: GatewayRequest;
  /** The text being judged: the request for input checks, the answer for output checks. */
  phase: 'input' | 'output';
  responseBody?: JsonObject;
  /**
   * Set when a tool or agent call is judged (tool-calls.ts): `request.body` then holds its text as a chat request
   * (the arguments' text as the user message) and `responseBody` its result's text as a chat completion, so that
   * checks of text judge them unchanged; a check that knows tool calls reads the call itself here.
   */
  toolCall?: ToolCall;
}

export interface GuardrailCheck {
  /** `<plugin>.<check>`, e.g. `default.regexMatch`. */
  id: string;
  /** Validates parameters when the config is validated; returns violations. */
  validate?(parameters: unknown): string[];
  /**
   * Parameters that decide where the check sends the secrets among its parameters (a webhook URL, a service's host
   * or resource): a saved secret (`apiKey`, `headers`) is not kept when one of them changes (docs/plugins.md).
   */
  destination?: readonly string[];
  run(ctx: GuardrailCheckContext, parameters: JsonObject): Promise<{ verdict: boolean; data?: unknown; transformed?: JsonObject }>;
}

// ---- the plugin itself ----------------------------------------------------------------------------------------

export interface PluginApi {
  /** The plugin's package name. */
  readonly name: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  readonly state: StateStore;
  /**
   * A service (docs/plugins.md, "Services"); throws, naming it, when nothing provides it. In `setup` the host's
   * services and those of the plugins this one `requires` are there; in `onReady`, every plugin's.
   */
  service<T>(token: ServiceToken<T>): T;
  /** The service, or undefined when nothing provides it (in `setup`: nothing so far; in `onReady`: nothing at all). */
  optional<T>(token: ServiceToken<T>): T | undefined;
  /** Makes this plugin the service's provider; a second provider of the same service is refused at load. */
  provide<T>(token: ServiceToken<T>, value: T): void;
  provider(adapter: ProviderAdapter): void;
  stage(stage: Stage): void;
  strategy(strategy: Strategy): void;
  guardrail(check: GuardrailCheck): void;
  route(route: AdminRoute): void;
  /**
   * Declares top-level config fields this plugin reads (its stages, say: the response cache's `cache`), in setup. The
   * core accepts them in configs only while the plugin is loaded (config-fields.ts, docs/plugins.md).
   */
  configFields(fields: ConfigFieldSet): void;
  /**
   * Called once every plugin is set up and the host has provided its services, before the server accepts requests:
   * the place to look up services of plugins loaded after this one (or maybe not at all), once. A hook that throws
   * stops the gateway from starting.
   */
  onReady(fn: () => Promise<void> | void): void;
  /** Called at shutdown after in-flight requests finished, e.g. to flush queues. */
  onClose(fn: () => Promise<void> | void): void;
}

export interface GatewayPlugin {
  setup(api: PluginApi): void | Promise<void>;
}

/** Identity helper that gives a plugin's default export its type. */
export function definePlugin(plugin: GatewayPlugin): GatewayPlugin {
  return plugin;
}
