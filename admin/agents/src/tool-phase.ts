/**
 * Agent calls through the tool-call phase (sdk tool-calls.ts; docs/admin/agents.md, "Rate limits and guardrails"):
 * the methods that call the agent are described as a ToolCall and judged before they are forwarded (rate limits,
 * input guardrails); when a stage wants the answer (output guardrails), each JSON-RPC message of it is judged
 * before the client gets it.
 */
import { asGatewayError, describeToolCall, jsonRpcErrorMessage, textIn } from '@gateway/admin-kit';
import type { AdminRequest, GatewayError, Json, ToolCall } from '@gateway/sdk';
import { agentText, isObject } from './a2a-messages.ts';
import type { AgentsContext } from './context.ts';
import type { ServerRow } from './present.ts';

/** The methods that call the agent; reading or cancelling a task does not. */
const AGENT_CALL_METHODS: ReadonlySet<string> = new Set(['message/send', 'message/stream', 'SendMessage', 'SendStreamingMessage']);

/** A refusal by the phase: the error, and the JSON-RPC reply that takes the call's or the answer's place. */
export interface Withheld {
  refusal: GatewayError;
  reply: unknown;
}

/** Judges one JSON-RPC message of the answer: what replaces it when refused, undefined when it passes. */
export type Judge = (message: Record<string, unknown>) => Promise<Withheld | undefined>;

/**
 * The call through the phase's before stages: the ToolCall (undefined for a method that does not call the agent, or
 * when no stage is loaded), or the refusal.
 */
export async function beforeAgentCall(
  req: AdminRequest,
  ctx: AgentsContext,
  server: ServerRow,
  body: Record<string, unknown>,
  traceId: string,
): Promise<{ call?: ToolCall; withheld?: Withheld }> {
  const phase = ctx.toolCalls.phase;
  const method = String(body.method);
  if (!phase?.active || !AGENT_CALL_METHODS.has(method)) return {};
  try {
    const params = (isObject(body.params) ? body.params : {}) as Json;
    const call = describeToolCall(req, ctx.toolCalls, { kind: 'a2a', method, server: { id: server.id, slug: server.slug }, tool: server.slug, arguments: params, text: textIn(params), traceId });
    await phase.before(call);
    return { call };
  } catch (error) {
    const refusal = asGatewayError(error);
    return { withheld: { refusal, reply: jsonRpcErrorMessage(refusal, body.id) } };
  }
}

/** The judge of the answer's messages, when a stage of the phase wants the call's result. */
export function answerJudge(ctx: AgentsContext, call: ToolCall | undefined, id: unknown): Judge | undefined {
  const phase = ctx.toolCalls.phase;
  if (!call || !phase?.wantsResult(call)) return undefined;
  return async (message) => {
    const failed = isObject(message.error);
    const result = (failed ? message.error : message.result) as Json;
    const text = failed ? String((message.error as Record<string, unknown>).message ?? '') : agentText(message.result);
    try {
      await phase.after(call, { result, text, isError: failed });
      return undefined;
    } catch (error) {
      const refusal = asGatewayError(error);
      return { refusal, reply: jsonRpcErrorMessage(refusal, id) };
    }
  };
}
