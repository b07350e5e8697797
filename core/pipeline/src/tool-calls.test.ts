import { describe, expect, test } from 'bun:test';
import { Errors, type ToolCall, type ToolCallStage } from '@gateway/sdk';
import { orderStages } from './stage-order.ts';
import { toolCallPhase } from './tool-calls.ts';

const call = { kind: 'mcp', method: 'tools/call', tool: 'echo', locals: {} } as unknown as ToolCall;
const result = { result: {}, text: '', isError: false };

describe('the tool-call phase', () => {
  test('runs the applying stages in their declared order, before and after; a refusal stops the rest', async () => {
    const seen: string[] = [];
    const stage = (name: string, extra: Partial<ToolCallStage> = {}): ToolCallStage => ({
      name,
      phase: 'toolCall',
      rule: 'sequential',
      beforeToolCall: () => void seen.push(`before ${name}`),
      afterToolCall: () => void seen.push(`after ${name}`),
      ...extra,
    });
    const { toolCallStages, requestStages } = orderStages([
      stage('second', { after: 'first' }),
      stage('first'),
      stage('skipped', { applies: (c) => c.tool !== 'echo' }),
    ]);
    expect(requestStages).toEqual([]);
    const phase = toolCallPhase(toolCallStages);
    expect(phase.active).toBe(true);
    expect(phase.wantsResult(call)).toBe(true);
    await phase.before(call);
    await phase.after(call, result);
    expect(seen).toEqual(['before first', 'before second', 'after first', 'after second']);

    seen.length = 0;
    const refusing = toolCallPhase([stage('no', { beforeToolCall: () => Promise.reject(Errors.forbidden('no')) }), stage('later')]);
    await expect(refusing.before(call)).rejects.toThrow('no');
    expect(seen).toEqual([]);
  });

  test('without stages it is inactive and wants no result', () => {
    const phase = toolCallPhase([]);
    expect(phase.active).toBe(false);
    expect(phase.wantsResult(call)).toBe(false);
  });
});
