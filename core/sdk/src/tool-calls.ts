/**
 * The tool-call phase (docs/plugins.md, "Tool calls"). Calls of tools and agents the gateway proxies pass through the
 * `toolCall` stages of the loaded plugins, in their order (before/after, as other stages): `beforeToolCall` before
 * the call goes upstream, `afterToolCall` on its result before the caller gets it. A stage refuses by throwing a
 * GatewayError (a rate limit's 429, a guardrail's 400): the caller gets that error's status and message as a
 * JSON-RPC error, and the call's log row says why. The core runs the phase and knows no protocol: the proxies that
 * own one (the MCP and A2A administration plugins) describe each call in these terms.
 */
import type { GatewayConfig } from './config.ts';
import type { Caller } from './plugin.ts';
import type { Json } from './types.ts';

export interface ToolCall {
  /** The protocol, as the request log's provider names it: `mcp`, `a2a`. */
  readonly kind: string;
  /** The JSON-RPC method: `tools/call`, `message/send`, `message/stream`, … */
  readonly method: string;
  /** The server the call goes to, as the gateway exposes it. */
  readonly server: { readonly id: string; readonly slug: string };
  /** The tool's name (MCP); for an agent, the agent server's slug (an agent is called as a whole). */
  readonly tool: string;
  /** The call's arguments as sent: the tool's arguments (MCP), the request's params (A2A). */
  readonly arguments: Json;
  /** The arguments' text, as guardrails judge it (every string of the arguments; an agent message's text parts). */
  readonly text: string;
  readonly caller: Caller;
  /**
   * The config the call runs under, when it names one (`x-gateway-config`, inline or a saved config's id) or its
   * workspace has a default config: its `input_guardrails` / `output_guardrails` judge the arguments and the result.
   */
  readonly config: GatewayConfig | undefined;
  /** `x-gateway-metadata` of the request, over the workspace's default metadata. */
  readonly metadata: Readonly<Record<string, string>>;
  readonly traceId: string;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /** Free space for stages, kept from `beforeToolCall` to `afterToolCall`. */
  readonly locals: Record<string, unknown>;
}

/** What came back: a tool's result, an agent's answer or one event of its stream. */
export interface ToolCallResult {
  /** The JSON-RPC `result` (or `error`) object. */
  readonly result: Json;
  /** Its text, as guardrails judge it (text content and text parts). */
  readonly text: string;
  /** A JSON-RPC error, or a tool result that says it failed (`isError`). */
  readonly isError: boolean;
}

/** A stage of the tool-call phase (registered with `api.stage`, ordered by `before`/`after` like the others). */
export interface ToolCallStage {
  name: string;
  phase: 'toolCall';
  rule: 'sequential';
  before?: string | readonly string[];
  after?: string | readonly string[];
  /** Cheap synchronous test; a stage that does not apply costs nothing. */
  applies?(call: ToolCall): boolean;
  /** Before the call goes upstream; throw a GatewayError to refuse it. */
  beforeToolCall?(call: ToolCall): void | Promise<void>;
  /** On the result before the caller gets it; throw a GatewayError to withhold it. */
  afterToolCall?(call: ToolCall, result: ToolCallResult): void | Promise<void>;
}

/** The phase as the proxies run it (service `toolCalls`, provided by the host once every plugin is set up). */
export interface ToolCallPhase {
  /** Whether any loaded stage could act (nothing else needs to be asked otherwise). */
  readonly active: boolean;
  /** Whether a stage wants the call's result (a stream is then judged event by event before it is passed on). */
  wantsResult(call: ToolCall): boolean;
  /** Runs every applying stage's `beforeToolCall` in order; rejects with the first refusal. */
  before(call: ToolCall): Promise<void>;
  /** Runs every applying stage's `afterToolCall` in order; rejects with the first refusal. */
  after(call: ToolCall, result: ToolCallResult): Promise<void>;
}
