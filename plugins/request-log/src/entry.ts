/**
 * What the queue holds per request: references and numbers copied from the request and its outcome. Building it
 * does no I/O, no parsing and no serialising; bodies are turned into text when the batch is written (in the writer
 * thread). Headers are never copied (they carry `Authorization` and `x-gateway-api-key`), nor the query string
 * (keys travel there for some providers).
 */
import { type AttemptRecord, COST_FIGURE, type GatewayRequest, type JsonObject, type Outcome, savedConfigIdOf, type TokenUsage } from '@gateway/sdk';

export interface LogEntry {
  traceId: string;
  spanId?: string | null;
  parentSpanId?: string | null;
  spanName?: string | null;
  organisationId?: string | null;
  workspaceId?: string | null;
  apiKeyId?: string | null;
  /** The user the calling key belongs to (a workspace-user key); null for service keys. */
  userId?: string | null;
  /** The provider type that answered (the adapter's id: `openai`, `anthropic`): analytics' `ai_service`. */
  provider?: string | null;
  /** The stored provider the answering attempt named (`@slug`, without the `@`); null when a provider type was named. */
  providerSlug?: string | null;
  /** The saved config the call used (`x-gateway-config: <id or slug>`), by id; null for inline or header configs. */
  configId?: string | null;
  /** The prompt the call ran from (`GatewayRequest.prompt`, set by the prompts plugin), and its version. */
  promptId?: string | null;
  promptVersion?: number | null;
  model?: string | null;
  endpoint: string;
  method: string;
  path: string;
  status: number;
  latencyMs: number;
  upstreamLatencyMs?: number | null;
  cacheStatus?: string | null;
  targetIndex?: string | null;
  retryCount?: number;
  metadata?: Readonly<Record<string, string>> | null;
  /**
   * A parsed body that a stage replaced (serialised at write time), the bytes received (also when the parsed body is
   * still the one parsed from them: the bytes are cheaper to hand to the writer thread), or text.
   */
  requestBody?: JsonObject | Uint8Array | string | null;
  /** Content type of a byte body: non-text bodies are stored as a size note, not as text. */
  requestContentType?: string | null;
  /** Size of the whole byte body when `requestBody` holds only its first bytes (set by the writer's hand-over). */
  requestBodyBytes?: number | null;
  /** Full response text (capped when the row is written). */
  responseBody?: string | null;
  /**
   * Where the row's token counts come from: the outcome, whose usage the core reads once, on first access, here when
   * the batch is handed to the writer (off the request's path).
   */
  usageFrom?: { readonly usage: TokenUsage | undefined } | null;
  /** The call's cost in US cents, as the pricing attached it (COST_FIGURE); null when not priced. */
  costCents?: number | null;
  /** true: priced; false: the answer had usage but its model no price (cost null, counted); null: nothing priced. */
  priced?: boolean | null;
  errorCode?: string | null;
  errorMessage?: string | null;
  attempts?: readonly AttemptRecord[] | null;
  /** `req.locals.hookResults`: the results of the request's hooks and guardrails (plugins/hooks), feedback included. */
  hookResults?: readonly unknown[] | null;
  /** Epoch milliseconds. */
  createdAt: number;
}

/** `req.locals.cacheStatus`, when the cache stage set it (HIT, MISS, …). */
const CACHE_STATUS_LOCAL = 'cacheStatus';
/** `req.locals.hookResults`: an array of hook results (plugins/hooks). */
export const HOOK_RESULTS_LOCAL = 'hookResults';
/** `req.locals.hookResultsSettled`: a promise that resolves once no hook of the request is still running. */
export const HOOK_RESULTS_SETTLED_LOCAL = 'hookResultsSettled';

/** Whether `req.body` is still the object parsed from `rawBody` (no stage replaced it): then the bytes are logged. */
export function bodyIsRaw(req: GatewayRequest): boolean {
  return req.body !== undefined && req.rawBody !== undefined && req.parsedBody === req.body;
}

export function entryFrom(req: GatewayRequest, outcome: Outcome): LogEntry {
  const model = req.body?.model;
  const cacheStatus = req.locals[CACHE_STATUS_LOCAL];
  const last = outcome.attempts.length ? outcome.attempts[outcome.attempts.length - 1] : undefined;
  const hookResults = req.locals[HOOK_RESULTS_LOCAL];
  const cost = outcome.figures.get(COST_FIGURE);
  return {
    traceId: req.traceId,
    spanId: req.headers.get('x-gateway-span-id'),
    parentSpanId: req.headers.get('x-gateway-parent-span-id'),
    spanName: req.headers.get('x-gateway-span-name'),
    organisationId: req.caller.organisationId || null,
    workspaceId: req.caller.workspaceId || null,
    apiKeyId: req.caller.apiKeyId || null,
    userId: req.caller.userId || null,
    provider: outcome.providerId ?? null,
    providerSlug: last?.providerSlug ?? null,
    configId: savedConfigIdOf(req.config) ?? null,
    promptId: typeof req.prompt?.id === 'string' ? req.prompt.id : null,
    promptVersion: typeof req.prompt?.version === 'number' ? req.prompt.version : null,
    model: typeof model === 'string' ? model : null,
    endpoint: req.endpoint,
    method: req.method,
    path: req.path,
    status: outcome.status,
    latencyMs: outcome.latencyMs,
    upstreamLatencyMs: outcome.upstreamLatencyMs ?? null,
    cacheStatus: typeof cacheStatus === 'string' ? cacheStatus : null,
    targetIndex: outcome.targetIndex ?? null,
    retryCount: last?.retry ?? 0,
    metadata: req.metadata,
    // The body as the gateway sent it on (after any redaction by stages), else the bytes received.
    requestBody: bodyIsRaw(req) ? req.rawBody : (req.body ?? req.rawBody ?? null),
    requestContentType: req.body ? null : req.headers.get('content-type'),
    responseBody: outcome.responseBody ?? null,
    usageFrom: outcome,
    costCents: cost ? cost.total : null,
    priced: cost === undefined ? null : cost !== null,
    errorCode: outcome.error?.code ?? null,
    errorMessage: outcome.error?.message ?? null,
    attempts: outcome.attempts,
    // A copy: async hooks may still add to the request's array.
    hookResults: Array.isArray(hookResults) && hookResults.length > 0 ? hookResults.slice() : null,
    createdAt: Date.now() - Math.round(outcome.latencyMs),
  };
}
