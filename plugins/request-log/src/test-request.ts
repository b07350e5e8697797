/** Test helper: a finished request and its outcome, as the pipeline hands them to `finally` stages. */
import type { GatewayRequest, Outcome, TokenUsage } from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import type { LogEntry } from './entry.ts';

export function testRequest(overrides: Partial<GatewayRequest> = {}): GatewayRequest {
  // Not the parsed object by default: tests that want the parsed-body path set it.
  return buildGatewayRequest({ traceId: 'trace-1', metadata: { team: 'a' }, parsedBody: undefined, receivedAt: Date.now(), ...overrides });
}

/** An outcome whose usage is what its body says (the core reads it with the same rules). */
export function testOutcome(overrides: Partial<Outcome> = {}): Outcome {
  const outcome: Omit<Outcome, 'usage' | 'figures'> & Partial<Pick<Outcome, 'usage'>> = {
    status: 200,
    providerId: 'openai',
    targetIndex: 'config',
    latencyMs: 42,
    upstreamLatencyMs: 30,
    responseBody: JSON.stringify({ id: 'c1', model: 'gpt-test', choices: [], usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 } }),
    error: undefined,
    attempts: [{ index: 'config', providerId: 'openai', retry: 0, status: 200, latencyMs: 30 }],
    ...overrides,
  };
  const usage = 'usage' in overrides ? overrides.usage : usageOf(outcome.responseBody);
  return { ...outcome, usage, figures: { get: () => undefined, set: () => {} } };
}

/** The three counts of a JSON answer's top-level `usage`, as the core would read them. */
function usageOf(body: string | undefined): TokenUsage | undefined {
  if (!body?.startsWith('{')) return undefined;
  const usage = (JSON.parse(body) as { usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } }).usage;
  return usage ? { promptTokens: usage.prompt_tokens ?? null, completionTokens: usage.completion_tokens ?? null, totalTokens: usage.total_tokens ?? null } : undefined;
}

export function testEntry(n: number, overrides: Partial<LogEntry> = {}): LogEntry {
  return {
    traceId: `trace-${n}`,
    endpoint: 'chatComplete',
    method: 'POST',
    path: '/chat/completions',
    status: 200,
    latencyMs: n,
    createdAt: 1_700_000_000_000 + n,
    ...overrides,
  };
}

/** An entry's `usageFrom` with these counts (what the core read from the answer). */
export function usageFrom(promptTokens: number | null, completionTokens: number | null, totalTokens: number | null): LogEntry['usageFrom'] {
  return { usage: { promptTokens, completionTokens, totalTokens } };
}
