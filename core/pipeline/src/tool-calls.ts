/**
 * The tool-call phase (sdk tool-calls.ts) as the host provides it (service `toolCalls`): the `toolCall` stages in
 * running order, each asked whether it applies, `beforeToolCall` and `afterToolCall` awaited one after another; the
 * first refusal (a thrown error) ends the phase and reaches the proxy.
 */
import type { ToolCall, ToolCallPhase, ToolCallResult, ToolCallStage } from '@gateway/sdk';

export function toolCallPhase(stages: readonly ToolCallStage[]): ToolCallPhase {
  const before = stages.filter((s) => s.beforeToolCall);
  const after = stages.filter((s) => s.afterToolCall);
  const applies = (stage: ToolCallStage, call: ToolCall) => !stage.applies || stage.applies(call);
  return {
    active: stages.length > 0,
    wantsResult: (call) => after.some((s) => applies(s, call)),
    async before(call) {
      for (const stage of before) if (applies(stage, call)) await stage.beforeToolCall?.(call);
    },
    async after(call: ToolCall, result: ToolCallResult) {
      for (const stage of after) if (applies(stage, call)) await stage.afterToolCall?.(call, result);
    },
  };
}
