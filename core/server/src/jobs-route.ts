/**
 * Files, batches and fine-tuning routes (sdk jobs.ts): authenticate, resolve the config, say whether its target keeps
 * such objects itself, check the scope (a forwarded call: passthrough's; a gateway-kept one: the kind's), read the
 * body (forwarded: MAX_REQUEST_BODY_BYTES as passthrough; kept: the plugin's limit) and hand the call to the plugin
 * providing `jobEndpoints`. Without one these paths stay passthrough (handleGatewayCall with `proxy`).
 */
import { applyParamRules, ClientGoneError, rejectRequest, runPipeline } from '@gateway/pipeline';
import {
  ALL_SCOPES,
  type Caller,
  Errors,
  type GatewayConfig,
  GatewayError,
  GATEWAY_CALL_SCOPES,
  type GatewayRequest,
  JOB_CALL_SCOPES,
  type JobEndpoints,
  type JobKind,
  type NativeBatchTarget,
  type NativeFineTuningTarget,
  newTraceId,
  type ProviderAdapter,
  type UpstreamRequest,
} from '@gateway/sdk';
import { readBody } from './body.ts';
import { cappedAnswer } from './capped-answer.ts';
import { authenticate, gatewaySecret, type HandlerDeps } from './gateway-handler.ts';
import { withWorkspaceMetadata } from './metadata-defaults.ts';
import { type HeaderValues, resolveConfig } from './resolve.ts';

/** The job kind of a request path, or undefined. */
export function jobKindOf(pathname: string): JobKind | undefined {
  if (pathname === '/v1/files' || pathname.startsWith('/v1/files/')) return 'files';
  if (pathname === '/v1/batches' || pathname.startsWith('/v1/batches/')) return 'batches';
  if (pathname === '/v1/fine_tuning/jobs' || pathname.startsWith('/v1/fine_tuning/jobs/')) return 'fineTuning';
  return undefined;
}

const NO_METADATA: Readonly<Record<string, string>> = Object.freeze(Object.create(null) as Record<string, string>);

function parseMetadata(value: string | undefined): Readonly<Record<string, string>> {
  if (!value) return NO_METADATA;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw Errors.badRequest('x-gateway-metadata must be a JSON object of string values', 'x-gateway-metadata');
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of Object.entries(parsed)) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return Object.freeze(out);
}

export interface JobDeps extends HandlerDeps {
  jobs: JobEndpoints;
}

/** Whether the config is one target whose provider declares `kind` natively. */
async function isNative(config: GatewayConfig, kind: JobKind, probe: GatewayRequest, deps: HandlerDeps): Promise<boolean> {
  if (config.targets) return false;
  let adapter: ProviderAdapter;
  try {
    adapter = (await deps.pipeline.resolveProvider(config, probe)).provider;
  } catch {
    // An unknown provider is the gateway's own business then (a gateway-run batch reports it per line).
    return false;
  }
  return adapter.nativeJobs?.[kind] === true;
}

const NEVER = new AbortController().signal;

/** The provider and target of a config that is one target, or undefined (several targets, or none resolves). */
async function oneTargetOf(config: GatewayConfig, probe: GatewayRequest, deps: HandlerDeps) {
  if (config.targets) return undefined;
  try {
    return await deps.pipeline.resolveProvider(config, { ...probe, config });
  } catch {
    return undefined;
  }
}

/** The batch translator of a config that is one target whose adapter has one (`ProviderAdapter.batches`). */
async function batchTranslatorOf(config: GatewayConfig, probe: GatewayRequest, deps: HandlerDeps): Promise<NativeBatchTarget | undefined> {
  const resolved = await oneTargetOf(config, probe, deps);
  if (!resolved) return undefined;
  const { provider, target } = resolved;
  if (!provider.batches || provider.nativeJobs?.batches) return undefined;
  if (provider.batches.accepts && !provider.batches.accepts(target)) return undefined;
  return { providerId: provider.id, translator: provider.batches, target, prepare: (body) => applyParamRules(body, target) };
}

/** The fine-tuning translator of a config that is one target whose adapter has one (`ProviderAdapter.fineTuning`). */
async function fineTuningTranslatorOf(config: GatewayConfig, probe: GatewayRequest, deps: HandlerDeps): Promise<NativeFineTuningTarget | undefined> {
  const resolved = await oneTargetOf(config, probe, deps);
  if (!resolved) return undefined;
  const { provider, target } = resolved;
  if (!provider.fineTuning || provider.nativeJobs?.fineTuning) return undefined;
  return { providerId: provider.id, translator: provider.fineTuning, target };
}

/** 403 naming the scopes, unless the caller holds one. */
function checkScopes(caller: Caller, needed: readonly string[]): void {
  if (caller.scopes.includes(ALL_SCOPES) || needed.some((scope) => caller.scopes.includes(scope))) return;
  throw Errors.forbidden(`This API key may not make this call: it needs the ${needed.join(' or ')} scope`);
}

export async function handleJobCall(request: Request, kind: JobKind, pathname: string, search: string, deps: JobDeps): Promise<Response> {
  const receivedAt = performance.now();
  const values = request.headers.toJSON() as HeaderValues;
  const traceId = values['x-gateway-trace-id'] || newTraceId();
  const path = pathname.slice(3);
  let caller: Caller;
  try {
    const auth = authenticate(gatewaySecret(values['x-gateway-api-key'], values.authorization, values['x-api-key']), deps.authenticator);
    caller = auth instanceof Promise ? await auth : auth;
  } catch (error) {
    const err = GatewayError.from(error, { phase: 'authenticate' });
    if (err.status >= 500) deps.logger.error({ err: err.cause ?? err, traceId }, 'authentication failed');
    return err.toResponse({ 'x-gateway-trace-id': traceId });
  }
  let body: Uint8Array | undefined;
  let config: GatewayConfig | undefined;
  let metadata: Readonly<Record<string, string>> = NO_METADATA;
  let native = false;
  const requestOf = (raw: Uint8Array | undefined): GatewayRequest => ({
    traceId,
    endpoint: 'proxy',
    method: request.method,
    path,
    search,
    headers: request.headers,
    body: undefined,
    rawBody: raw,
    parsedBody: undefined,
    metadata,
    caller,
    config: config ?? {},
    signal: request.signal,
    receivedAt,
    locals: {},
  });
  try {
    let unresolved: unknown;
    try {
      config = resolveConfig(values, caller, undefined);
      native = await isNative(config, kind, requestOf(undefined), deps);
    } catch (error) {
      unresolved = error;
    }
    // Before the body is read. Forwarded, the call spends the provider credential on the provider's own storage or
    // jobs: the passthrough scope, as before these kinds existed; kept by the gateway, the kind's own scopes.
    checkScopes(caller, native ? GATEWAY_CALL_SCOPES.proxy : JOB_CALL_SCOPES[kind]);
    if (unresolved !== undefined) throw unresolved;
    const limit = native ? deps.maxBodyBytes : deps.jobs.maxBodyBytes;
    body = request.method === 'GET' || request.method === 'DELETE' ? undefined : await readBody(request, limit, values['content-length']);
    metadata = parseMetadata(values['x-gateway-metadata']);
    if (deps.workspaceDefaults) metadata = withWorkspaceMetadata(metadata, deps.workspaceDefaults.metadata(caller.workspaceId));
  } catch (error) {
    const err = GatewayError.from(error, { phase: 'request' });
    if (err.status >= 500) deps.logger.error({ err: err.cause ?? err, traceId }, `${kind} call failed before routing`);
    return err.toResponse({ 'x-gateway-trace-id': traceId });
  }
  const forward = async (raw: Uint8Array | undefined = body): Promise<Response> => {
    const req = requestOf(raw);
    try {
      return await runPipeline(req, deps.pipeline);
    } catch (error) {
      if (error instanceof ClientGoneError) return error.toResponse();
      const err = GatewayError.from(error, { phase: 'pipeline' });
      deps.logger.error({ err: err.cause ?? err, traceId }, 'pipeline failed');
      return rejectRequest(req, deps.pipeline, err);
    }
  };
  // A translated batch's or fine-tuning job's upstream calls: passthrough calls of this caller with their own method,
  // path and JSON or multipart body, under the job's config (stored with it), never aborted by this client leaving
  // (the upstream job must be kept).
  const send = async (upstream: UpstreamRequest, with_: GatewayConfig = config ?? {}): Promise<Response> => {
    const query = upstream.path.indexOf('?');
    const headers = new Headers();
    let raw: Uint8Array | undefined;
    if (upstream.multipart) {
      // Encoded by the runtime's FormData, which also gives the boundary in its content-type.
      const form = new FormData();
      for (const [name, value] of Object.entries(upstream.multipart.fields)) form.append(name, value);
      for (const f of upstream.multipart.files) form.append(f.field, new Blob([f.content], { type: f.contentType }), f.filename);
      const encoded = new Response(form);
      headers.set('content-type', encoded.headers.get('content-type') ?? 'multipart/form-data');
      raw = new Uint8Array(await encoded.arrayBuffer());
    } else if (upstream.body !== undefined) {
      headers.set('content-type', 'application/json');
      raw = new TextEncoder().encode(JSON.stringify(upstream.body));
    }
    const req: GatewayRequest = {
      ...requestOf(raw),
      method: upstream.method,
      path: query < 0 ? upstream.path : upstream.path.slice(0, query),
      search: query < 0 ? '' : upstream.path.slice(query),
      headers,
      config: with_,
      signal: NEVER,
    };
    let answer: Response;
    try {
      answer = await runPipeline(req, deps.pipeline);
    } catch (error) {
      return rejectRequest(req, deps.pipeline, GatewayError.from(error, { phase: 'pipeline' }));
    }
    // The translator reads it whole; its results become a gateway file, held to the same limit as an upload.
    return cappedAnswer(answer, deps.jobs.maxBodyBytes, typeof with_.provider === 'string' ? with_.provider : 'provider');
  };
  const nativeBatches = (with_: GatewayConfig = config ?? {}) => batchTranslatorOf(with_, requestOf(undefined), deps);
  const nativeFineTuning = (with_: GatewayConfig = config ?? {}) => fineTuningTranslatorOf(with_, requestOf(undefined), deps);
  try {
    return await deps.jobs.handle({
      kind,
      method: request.method,
      path,
      search,
      headers: request.headers,
      traceId,
      caller,
      config: config ?? {},
      native,
      body,
      forward,
      nativeBatches,
      nativeFineTuning,
      send,
    });
  } catch (error) {
    const err = GatewayError.from(error, { phase: kind });
    if (err.status >= 500) deps.logger.error({ err: err.cause ?? err, traceId }, `${kind} call failed`);
    return err.toResponse({ 'x-gateway-trace-id': traceId });
  }
}
