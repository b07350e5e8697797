/**
 * Guardrails on tool and agent calls: the `hooks:tool-calls` stage of the tool-call phase (sdk tool-calls.ts). The
 * config a call runs under (`x-gateway-config`, or its workspace's default config) judges it as it judges a model
 * call: its input guardrails (and before_request_hooks) the call's arguments before the call goes upstream, its
 * output guardrails (and after_request_hooks) the result before the caller gets it. Checks judge text, so a call is
 * shown to them as a chat: the arguments' text as the user's message, the result's text as the assistant's answer
 * (`GuardrailCheckContext.toolCall` holds the call itself). Transforms are not applied to tool calls. A denial is a
 * 400 `guardrail_denied` with `hook_results`, which the proxy answers as a JSON-RPC error and logs.
 */
import {
  GatewayError,
  type GatewayRequest,
  type GuardrailCheckContext,
  type JsonObject,
  type Logger,
  type ToolCall,
  type ToolCallStage,
} from '@gateway/sdk';
import type { Normaliser } from './normalise.ts';
import { runHooks } from './run.ts';
import type { CheckLookup, HookResult, PhasePlan } from './types.ts';

/** `ToolCall.locals` key: every hook result of the call (before and after), for whoever logs it. */
export const TOOL_HOOK_RESULTS = 'hookResults';

function requestOf(call: ToolCall): GatewayRequest {
  const body: JsonObject = { messages: [{ role: 'user', content: call.text }] };
  return {
    traceId: call.traceId,
    endpoint: 'chatComplete',
    method: 'POST',
    path: `/${call.kind}/${call.server.slug}`,
    search: '',
    headers: new Headers(),
    body,
    rawBody: undefined,
    parsedBody: body,
    metadata: call.metadata,
    caller: call.caller,
    // Only called when the call has a config (applies).
    config: call.config as NonNullable<ToolCall['config']>,
    signal: call.signal,
    receivedAt: performance.now(),
    locals: call.locals,
  };
}

function denial(results: readonly HookResult[], what: string): GatewayError {
  const ids = results.filter((r) => r.deny).map((r) => JSON.stringify(r.id));
  return new GatewayError({
    code: 'guardrail_denied',
    type: 'guardrail_denied',
    status: 400,
    message: `The ${what} was denied by ${ids.length === 1 ? 'guardrail' : 'guardrails'} ${ids.join(', ')}`,
    extra: { hook_results: results },
  });
}

export function toolCallGuardrails(normaliser: Normaliser, checks: () => CheckLookup, logger?: Logger): [ToolCallStage, ToolCallStage] {
  const planOf = (call: ToolCall) => (call.config ? normaliser.planOf(call.config) : {});
  const recorded = (call: ToolCall): HookResult[] => {
    let all = call.locals[TOOL_HOOK_RESULTS] as HookResult[] | undefined;
    if (!all) call.locals[TOOL_HOOK_RESULTS] = all = [];
    return all;
  };

  async function judge(call: ToolCall, plan: PhasePlan, ctx: GuardrailCheckContext, what: string): Promise<void> {
    const body = (ctx.phase === 'input' ? ctx.request.body : ctx.responseBody) as JsonObject;
    const contextFor = (): GuardrailCheckContext => ctx;
    if (plan.async.length)
      void runHooks(plan.async, checks(), body, contextFor, false).then(
        (out) => void recorded(call).push(...out.results),
        (error: unknown) => logger?.warn({ err: error, traceId: call.traceId }, 'async tool-call hooks failed'),
      );
    if (plan.sync.length === 0) return;
    const out = await runHooks(plan.sync, checks(), body, contextFor, false);
    recorded(call).push(...out.results);
    if (out.results.some((r) => r.deny)) throw denial(out.results, what);
  }

  const input: ToolCallStage = {
    name: 'hooks:tool-calls',
    phase: 'toolCall',
    rule: 'sequential',
    applies: (call) => planOf(call).input !== undefined,
    async beforeToolCall(call) {
      const plan = planOf(call).input;
      if (plan) await judge(call, plan, { request: requestOf(call), phase: 'input', toolCall: call }, 'tool call');
    },
  };
  const output: ToolCallStage = {
    name: 'hooks:tool-results',
    phase: 'toolCall',
    rule: 'sequential',
    applies: (call) => planOf(call).output !== undefined,
    async afterToolCall(call, result) {
      const plan = planOf(call).output;
      if (!plan) return;
      const responseBody: JsonObject = { object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: result.text } }] };
      await judge(call, plan, { request: requestOf(call), phase: 'output', responseBody, toolCall: call }, 'tool result');
    },
  };
  return [input, output];
}
