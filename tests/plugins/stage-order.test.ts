// The built-in stages in the order the gateway runs them, from their named relations: what the numeric orders
// (hooks 10, cache 50, circuit breaker 900, request log 100) gave before, with the limits between the cache (a hit
// costs nothing) and the breaker (a refusal never counts against a circuit), and the pricing before what reads the cost.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { orderStages } from '@gateway/pipeline';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway } from '../helpers/in-process.ts';

let gw: Gateway;
beforeAll(async () => {
  gw = await startInProcessGateway();
});
afterAll(async () => {
  await gw.close();
});

describe('stage order of the built-in plugins', () => {
  test('hooks first (after a prompt is rendered), the response cache outside the limits and the circuit breaker, the request log last', () => {
    const ordered = orderStages(gw.plugins.registry.stages);
    const names = (list: readonly { name: string }[]) => list.map((s) => s.name);
    // prompts:render says before: 'hooks:input', so guardrails judge the rendered prompt.
    expect(names(ordered.requestStages)).toEqual(['prompts:render', 'hooks:input']);
    expect(names(ordered.attemptStages)).toEqual(['response-cache', 'rate-limits', 'usage-limits', 'circuit-breaker']);
    expect(names(ordered.responseStages)).toEqual(['hooks:output']);
    const finals = names(ordered.finallyStages);
    // The cost is attached first; what reads it (the log, the usage limits) and the tokens count come after, in any order.
    expect(finals[0]).toBe('pricing');
    expect([...finals].sort()).toEqual(['pricing', 'rate-limits:tokens', 'request-log', 'usage-limits:consumption']);
    // Tool and agent calls: the guardrails judge the arguments before a rate limit counts the call.
    const tools = names(ordered.toolCallStages);
    expect([...tools].sort()).toEqual(['hooks:tool-calls', 'hooks:tool-results', 'rate-limits:tool-calls']);
    expect(tools.indexOf('hooks:tool-calls')).toBeLessThan(tools.indexOf('rate-limits:tool-calls'));
  });

  test('the cache names the breaker: reversed registration keeps it outside', () => {
    const reversed = orderStages([...gw.plugins.registry.stages].reverse());
    expect(reversed.attemptStages.map((s) => s.name)).toEqual(['response-cache', 'rate-limits', 'usage-limits', 'circuit-breaker']);
  });
});
