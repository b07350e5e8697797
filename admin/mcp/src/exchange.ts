/**
 * One POST or GET of the MCP proxy as the gateway follows it (proxy.ts): the tool calls and tools/list requests it
 * carries, answered by id. A tools/list result is filtered by the server's allow and deny lists; a tool result goes
 * through the tool-call phase's after stages when one wants it (a refused one is replaced by the JSON-RPC error);
 * every tool call becomes a log row (tool-log.ts).
 */
import { asGatewayError, jsonRpcErrorMessage, stringsIn, textIn } from '@gateway/admin-kit';
import { type Caller, type GatewayError, type Json, newTraceId, type ToolCall } from '@gateway/sdk';
import type { McpContext } from './context.ts';
import type { ServerRow } from './present.ts';
import type { ToolCallOutcome } from './tool-log.ts';

export type Message = Record<string, unknown>;
export const isObject = (v: unknown): v is Message => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether the server's lists let `tool` be listed and called. */
export function toolAllowed(server: Pick<ServerRow, 'allowed_tools' | 'denied_tools'>, tool: string): boolean {
  if (server.denied_tools?.includes(tool)) return false;
  return server.allowed_tools === null || server.allowed_tools.includes(tool);
}

export interface PendingCall {
  tool: string;
  argumentsBytes: number;
  request: string;
  /** The call as the tool-call phase sees it (rate limits, guardrails); undefined when no stage is loaded. */
  call?: ToolCall;
}

const isPromise = (value: unknown): value is Promise<unknown> => value instanceof Promise;

/** One exchange's bookkeeping: the tool calls and tools/list requests it carries, answered by id. */
export class Exchange {
  readonly calls = new Map<string, PendingCall>();
  readonly lists = new Set<string>();
  private readonly started = performance.now();
  readonly traceId = newTraceId();

  constructor(
    private readonly ctx: McpContext,
    private readonly server: ServerRow,
    private readonly caller: Caller,
  ) {}

  get slug(): string {
    return this.server.slug;
  }

  log(call: PendingCall, outcome: ToolCallOutcome, status: number, response: string | null, error: string | null, refusedBy?: string): void {
    this.ctx.toolLog.record({
      refusedBy,
      caller: this.caller,
      serverId: this.server.id,
      serverSlug: this.server.slug,
      tool: call.tool,
      argumentsBytes: call.argumentsBytes,
      request: call.request,
      response,
      outcome,
      status,
      error,
      latencyMs: performance.now() - this.started,
      traceId: this.traceId,
    });
  }

  /** The call refused by a stage of the tool-call phase: logged with why. */
  refused(call: PendingCall, refusal: GatewayError, reply: unknown): void {
    this.log(call, 'refused', refusal.status, JSON.stringify(reply), refusal.message, refusal.code);
  }

  private logResult(call: PendingCall, message: Message): void {
    const text = JSON.stringify(message.result ?? message.error);
    if (isObject(message.error)) this.log(call, 'rpc_error', 200, text, String(message.error.message ?? 'error'));
    else if (isObject(message.result) && message.result.isError === true) this.log(call, 'tool_error', 200, text, 'the tool reported an error');
    else this.log(call, 'ok', 200, text, null);
  }

  /** A tool's result through the tool-call phase's after stages: a JSON-RPC error in its place when one refuses it. */
  private async judged(pending: PendingCall, call: ToolCall, message: Message): Promise<unknown> {
    const failed = isObject(message.error);
    const result = (failed ? message.error : message.result) as Json;
    const text = failed ? String((message.error as Message).message ?? '') : textIn(message.result) || stringsIn(isObject(message.result) ? message.result.structuredContent : undefined);
    try {
      await this.ctx.toolCalls.phase?.after(call, { result, text, isError: failed || (isObject(message.result) && message.result.isError === true) });
    } catch (error) {
      const refusal = asGatewayError(error);
      const reply = jsonRpcErrorMessage(refusal, message.id);
      this.refused(pending, refusal, reply);
      return reply;
    }
    this.logResult(pending, message);
    return undefined;
  }

  /**
   * A message from the upstream: a filtered tools/list result or a refused tool result in its place, or undefined
   * to send it unchanged. A promise when a tool result is judged by the tool-call phase.
   */
  readonly onMessage = (message: unknown): unknown => {
    if (Array.isArray(message)) {
      const settle = (done: unknown[]) => {
        const out = done.map((m, i) => m ?? message[i]);
        return out.some((m, i) => m !== message[i]) ? out : undefined;
      };
      const each = message.map((m) => this.onMessage(m));
      return each.some(isPromise) ? Promise.all(each).then(settle) : settle(each);
    }
    if (!isObject(message) || !('id' in message) || !('result' in message || 'error' in message)) return undefined;
    const id = JSON.stringify(message.id);
    const pending = this.calls.get(id);
    if (pending) {
      this.calls.delete(id);
      if (pending.call && this.ctx.toolCalls.phase?.wantsResult(pending.call)) return this.judged(pending, pending.call, message);
      this.logResult(pending, message);
      return undefined;
    }
    if (this.lists.delete(id) && isObject(message.result) && Array.isArray(message.result.tools)) {
      const tools = message.result.tools.filter((t) => isObject(t) && typeof t.name === 'string' && toolAllowed(this.server, t.name));
      return { ...message, result: { ...message.result, tools } };
    }
    return undefined;
  };

  /** Calls never answered (the upstream failed, the stream ended early, the client left). */
  failRemaining(status: number, why: string): void {
    for (const call of this.calls.values()) this.log(call, 'failed', status, null, why);
    this.calls.clear();
  }
}
