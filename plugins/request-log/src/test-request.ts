/** Test helper: a finished request and its outcome, as the pipeline hands them to `finally` stages. */
import type { GatewayRequest, JsonObject, Outcome } from '@gateway/sdk';
import type { LogEntry } from './entry.ts';

export function testRequest(overrides: Partial<GatewayRequest> = {}): GatewayRequest {
  const body: JsonObject = { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] };
  return {
    traceId: 'trace-1',
    endpoint: 'chatComplete',
    method: 'POST',
    path: '/chat/completions',
    search: '',
    headers: new Headers({ 'content-type': 'application/json' }),
    body,
    rawBody: new TextEncoder().encode(JSON.stringify(body)),
    // Not the parsed object by default: tests that want the raw-bytes path set it.
    parsedBody: undefined,
    metadata: { team: 'a' },
    caller: { apiKeyId: 'key-1', organisationId: 'org-1', workspaceId: 'ws-1', scopes: ['*'], keyType: 'workspace-service', userId: null },
    config: {},
    signal: new AbortController().signal,
    receivedAt: Date.now(),
    locals: {},
    ...overrides,
  };
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
