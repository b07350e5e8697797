import { ClientGoneError, type PipelineDeps, rejectRequest, runPipeline } from '@gateway/pipeline';
import {
  type Caller,
  type EndpointKind,
  Errors,
  type GatewayConfig,
  GatewayError,
  type GatewayRequest,
  newTraceId,
  type KeyVerifier,
  type Logger,
  type ModelRouting,
  type WorkspaceDefaults,
} from '@gateway/sdk';
import { validateBody } from '@gateway/validation';
import { parseJsonObject, readBody } from './body.ts';
import { checkCallScope } from './call-scope.ts';
import type { Metrics } from './metrics.ts';
import { withWorkspaceMetadata } from './metadata-defaults.ts';
import { bearerValue, type HeaderValues, headersNameRoute, type ModelRouted, resolveConfig, routeByModel } from './resolve.ts';

/** Whether a config, or any of its targets, names a prompt (`prompt_id`). Asked only of a body that failed validation. */
function namesPrompt(node: GatewayConfig): boolean {
  return typeof node.prompt_id === 'string' || (node.targets ?? []).some((child) => namesPrompt(child as GatewayConfig));
}

/**
 * A body that failed validation is refused (its error first, as for any call), unless the config names a prompt: the
 * prompt's template makes that body (the client sends `variables` and hyperparameters, no messages; the prompts
 * plugin's request stage renders it).
 */
function refuseInvalid(invalid: unknown, values: HeaderValues, caller: Caller): void {
  let config: GatewayConfig;
  try {
    config = resolveConfig(values, caller, undefined);
  } catch {
    throw invalid;
  }
  if (!namesPrompt(config)) throw invalid;
}

/** Service `apiKeyVerifier`. */
export type Authenticator = KeyVerifier;

export interface HandlerDeps {
  pipeline: PipelineDeps;
  authenticator: Authenticator | undefined;
  metrics: Metrics;
  logger: Logger;
  maxBodyBytes: number;
  /** Model aliases and default configs (the saved-config plugin), when loaded. */
  modelRouting?: ModelRouting;
  /** Workspace default metadata (the identity plugin), when loaded. */
  workspaceDefaults?: WorkspaceDefaults;
}

const EMPTY_METADATA: Readonly<Record<string, string>> = Object.freeze(Object.create(null) as Record<string, string>);
const EMPTY_CONFIG: GatewayRequest['config'] = Object.freeze({});

/** Parsed metadata by header value: the same few values repeat across requests (bounded, second-chance-free: cleared when full). */
const metadataCache = new Map<string, Readonly<Record<string, string>>>();

function parseMetadata(value: string | undefined): Readonly<Record<string, string>> {
  if (value === undefined || value === '') return EMPTY_METADATA;
  const cached = metadataCache.get(value);
  if (cached) return cached;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw Errors.badRequest('x-gateway-metadata must be a JSON object of string values', 'x-gateway-metadata');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw Errors.badRequest('x-gateway-metadata must be a JSON object of string values', 'x-gateway-metadata');
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of Object.entries(parsed)) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  // Frozen: one object is shared by every request that sends the same header.
  const frozen = Object.freeze(out);
  if (value.length <= 4096) {
    if (metadataCache.size >= 1000) metadataCache.clear();
    metadataCache.set(value, frozen);
  }
  return frozen;
}

/**
 * The gateway key a call carries: `x-gateway-api-key`, else `Authorization: Bearer <gateway key>`, else (neither
 * header present) `x-api-key` (docs/clients.md), for clients that let a user set only a base URL and a key: Claude
 * Code sends ANTHROPIC_API_KEY as `x-api-key`, Anthropic's own header. On every route, as Authorization: such a client
 * sends it on each call it makes. No lookup tells a gateway key from a provider key: without the headers before it, the value
 * can only be the gateway key, and it is then never sent to a provider (resolve.ts, headers.ts). An unknown value is
 * refused as an unknown `x-gateway-api-key` is (same 401, same cache), so nothing is learnt.
 */
export function gatewaySecret(
  apiKeyHeader: string | null | undefined,
  authorization: string | null | undefined,
  xApiKey?: string | null,
): string | undefined {
  if (apiKeyHeader) return apiKeyHeader;
  if (authorization !== undefined && authorization !== null) return bearerValue(authorization) || undefined;
  return xApiKey?.trim() || undefined;
}

/** The caller of a request, from its gateway key; 401 in every other case. A cached key costs no promise. */
export function authenticate(secret: string | null | undefined, authenticator: Authenticator | undefined): Caller | Promise<Caller> {
  if (!secret) throw Errors.unauthorized('Missing gateway API key: send x-gateway-api-key, Authorization: Bearer <gateway API key> or x-api-key');
  if (!authenticator) throw Errors.internal('No authenticator is loaded (the identity plugin is disabled)');
  const cached = authenticator.peek?.(secret);
  if (cached) return cached;
  return authenticator.verify(secret).then((caller) => {
    if (!caller) throw Errors.unauthorized('Invalid, revoked or expired gateway API key');
    return caller;
  });
}

/**
 * A gateway call: authenticate, read and check the body, resolve the config, run the pipeline. Every failure is an
 * INTERFACE.md error body; nothing thrown escapes as a 500 without its shape.
 */
export async function handleGatewayCall(request: Request, endpoint: EndpointKind, path: string, search: string, deps: HandlerDeps): Promise<Response> {
  const receivedAt = performance.now();
  // Every header this function needs, read in one native call instead of one get() each.
  const values = request.headers.toJSON() as HeaderValues;
  const traceId = values['x-gateway-trace-id'] || newTraceId();
  let caller: Caller;
  try {
    const auth = authenticate(gatewaySecret(values['x-gateway-api-key'], values.authorization, values['x-api-key']), deps.authenticator);
    caller = auth instanceof Promise ? await auth : auth;
    // Before the body is read: a key without the call's scope reaches no provider and spends no credential.
    checkCallScope(caller, endpoint);
  } catch (error) {
    // Unauthenticated and refused calls: counted in metrics, not written to the request log (a refused key's
    // traffic is the caller's mistake, not the workspace's usage).
    const err = GatewayError.from(error, { phase: 'authenticate' });
    if (err.status >= 500) deps.logger.error({ err: err.cause ?? err, traceId }, 'authentication failed');
    deps.metrics.record(endpoint, undefined, err.status, performance.now() - receivedAt, undefined);
    return err.toResponse({ 'x-gateway-trace-id': traceId });
  }

  let rawBody: Uint8Array | undefined;
  let body: GatewayRequest['body'];
  let parsedBody: GatewayRequest['body'];
  let config: GatewayRequest['config'] = EMPTY_CONFIG;
  let metadata = EMPTY_METADATA;
  let failure: GatewayError | undefined;
  try {
    rawBody = await readBody(request, deps.maxBodyBytes, values['content-length']);
    metadata = parseMetadata(values['x-gateway-metadata']);
    if (deps.workspaceDefaults) metadata = withWorkspaceMetadata(metadata, deps.workspaceDefaults.metadata(caller.workspaceId));
    if (endpoint !== 'proxy' && endpoint !== 'listModels') {
      body = parseJsonObject(rawBody);
      try {
        validateBody(endpoint, body);
      } catch (invalid) {
        refuseInvalid(invalid, values, caller);
      }
      parsedBody = body;
    }
    let routed: ModelRouted | undefined;
    if (!headersNameRoute(values)) {
      routed = routeByModel(body?.model, caller, deps.modelRouting);
      // An alias names the model sent upstream: the body is no longer the bytes received (parsedBody stays them).
      if (routed?.model !== undefined && body) body = { ...body, model: routed.model };
    }
    config = resolveConfig(values, caller, routed);
  } catch (error) {
    failure = GatewayError.from(error, { phase: 'request' });
    if (failure.status >= 500) deps.logger.error({ err: failure.cause ?? failure, traceId }, 'request failed before routing');
  }
  const req: GatewayRequest = {
    traceId,
    endpoint,
    method: request.method,
    path,
    search,
    headers: request.headers,
    body,
    rawBody,
    parsedBody,
    metadata,
    caller,
    config,
    signal: request.signal,
    receivedAt,
    locals: {},
  };
  if (failure) return rejectRequest(req, deps.pipeline, failure);
  try {
    return await runPipeline(req, deps.pipeline);
  } catch (error) {
    if (error instanceof ClientGoneError) return error.toResponse();
    const err = GatewayError.from(error, { phase: 'pipeline' });
    deps.logger.error({ err: err.cause ?? err, traceId }, 'pipeline failed');
    return rejectRequest(req, deps.pipeline, err);
  }
}
