/**
 * Span attributes from the GenAI semantic conventions (gen_ai.*) and the gateway's own (gateway.*). Computed in the
 * finally stage, after the answer was sent, from what the outcome already holds: no body is parsed on a request's
 * path, and the answer's model and finish reasons are found with a scan rather than a parse.
 */
import type { Attributes } from '@opentelemetry/api';
import { COST_FIGURE, type EndpointKind, type GatewayRequest, type Outcome, savedConfigIdOf } from '@gateway/sdk';

/** gen_ai.operation.name by endpoint; endpoints that are not model calls have none. */
const OPERATIONS: Partial<Record<EndpointKind, string>> = {
  chatComplete: 'chat',
  messages: 'chat',
  responses: 'chat',
  complete: 'text_completion',
  embed: 'embeddings',
};

export const operationOf = (endpoint: EndpointKind): string | undefined => OPERATIONS[endpoint];

export function requestModelOf(req: GatewayRequest): string | undefined {
  const model = req.body?.model;
  return typeof model === 'string' ? model : undefined;
}

/** `chat gpt-4o` (the conventions' span name), or `gateway <endpoint>` for calls that are not model calls. */
export function spanNameOf(req: GatewayRequest): string {
  const operation = operationOf(req.endpoint);
  if (!operation) return `gateway ${req.endpoint}`;
  const model = requestModelOf(req);
  return model ? `${operation} ${model}` : operation;
}

/** What is known when the call arrives. */
export function startAttributes(req: GatewayRequest): Attributes {
  const attributes: Attributes = {
    'gateway.trace_id': req.traceId,
    'gateway.endpoint': req.endpoint,
    'gateway.workspace.id': req.caller.workspaceId,
    'gateway.organisation.id': req.caller.organisationId,
    'gateway.api_key.id': req.caller.apiKeyId,
    'http.request.method': req.method,
    'url.path': `/v1${req.path}`,
  };
  const operation = operationOf(req.endpoint);
  if (operation) attributes['gen_ai.operation.name'] = operation;
  const model = requestModelOf(req);
  if (model) attributes['gen_ai.request.model'] = model;
  const configId = savedConfigIdOf(req.config);
  if (configId) attributes['gateway.config.id'] = configId;
  return attributes;
}

const MODEL = /"model"\s*:\s*"([^"\\]{1,200})"/;
const FINISH = /"(?:finish_reason|stop_reason)"\s*:\s*"([^"\\]{1,64})"/g;

/** The answer's model and finish reasons, scanned from its (size-capped) text: whole answers and streams alike. */
export function answerFacts(body: string | undefined): { model?: string; finishReasons: string[] } {
  if (!body) return { finishReasons: [] };
  const reasons = new Set<string>();
  for (const match of body.matchAll(FINISH)) reasons.add(match[1] as string);
  return { model: MODEL.exec(body)?.[1], finishReasons: [...reasons] };
}

/** What the call produced. */
export function endAttributes(req: GatewayRequest, outcome: Outcome): Attributes {
  const attributes: Attributes = {
    'http.response.status_code': outcome.status,
    'gateway.attempts': outcome.attempts.length,
    'gateway.retries': outcome.attempts.filter((a) => a.retry > 0).length,
    'gateway.fallbacks': new Set(outcome.attempts.map((a) => a.index)).size - (outcome.attempts.length ? 1 : 0),
  };
  if (outcome.providerId) {
    attributes['gen_ai.provider.name'] = outcome.providerId;
    attributes['gateway.provider.id'] = outcome.providerId;
  }
  if (outcome.targetIndex) attributes['gateway.target.index'] = outcome.targetIndex;
  if (outcome.upstreamLatencyMs !== undefined) attributes['gateway.upstream.duration_ms'] = outcome.upstreamLatencyMs;
  const cacheStatus = req.locals.cacheStatus;
  if (typeof cacheStatus === 'string') attributes['gateway.cache.status'] = cacheStatus;
  const facts = answerFacts(outcome.responseBody);
  if (facts.model) attributes['gen_ai.response.model'] = facts.model;
  if (facts.finishReasons.length) attributes['gen_ai.response.finish_reasons'] = facts.finishReasons;
  const usage = outcome.usage;
  if (usage?.promptTokens != null) attributes['gen_ai.usage.input_tokens'] = usage.promptTokens;
  if (usage?.completionTokens != null) attributes['gen_ai.usage.output_tokens'] = usage.completionTokens;
  const cost = outcome.figures.get(COST_FIGURE);
  if (cost) attributes['gateway.cost.usd_cents'] = cost.total;
  if (outcome.error) attributes['error.type'] = outcome.error.code;
  return attributes;
}
