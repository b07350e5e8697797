/** Test helper: a finished request and its outcome, as the pipeline hands them to `finally` stages. */
import type { GatewayRequest, Outcome } from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import type { LogEntry } from './entry.ts';

export function testRequest(overrides: Partial<GatewayRequest> = {}): GatewayRequest {
  // Not the parsed object by default: tests that want the parsed-body path set it.
  return buildGatewayRequest({ traceId: 'trace-1', metadata: { team: 'a' }, parsedBody: undefined, receivedAt: Date.now(), ...overrides });
}

export function testOutcome(overrides: Partial<Outcome> = {}): Outcome {
  return {
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
