/**
 * Files, batches and fine-tuning routes (sdk jobs.ts): authenticate, check the kind's scope, read the body under the
 * job plugin's limit, resolve the config, say whether its target keeps such objects itself, and hand the call to the
 * plugin providing `jobEndpoints`. Without one these paths stay passthrough (handleGatewayCall with `proxy`).
 */
import { ClientGoneError, rejectRequest, runPipeline } from '@gateway/pipeline';
import {
  ALL_SCOPES,
  type Caller,
  Errors,
  type GatewayConfig,
  GatewayError,
  type GatewayRequest,
  JOB_CALL_SCOPES,
  type JobEndpoints,
  type JobKind,
  type ProviderAdapter,
} from '@gateway/sdk';
import { readBody } from './body.ts';
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

function mayCallJob(caller: Caller, kind: JobKind): boolean {
  return caller.scopes.includes(ALL_SCOPES) || JOB_CALL_SCOPES[kind].some((scope) => caller.scopes.includes(scope));
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

export async function handleJobCall(request: Request, kind: JobKind, pathname: string, search: string, deps: JobDeps): Promise<Response> {
  const receivedAt = performance.now();
  const values = request.headers.toJSON() as HeaderValues;
  const traceId = values['x-gateway-trace-id'] || crypto.randomUUID();
  const path = pathname.slice(3);
  let caller: Caller;
  try {
    const auth = authenticate(gatewaySecret(values['x-gateway-api-key'], values.authorization), deps.authenticator);
    caller = auth instanceof Promise ? await auth : auth;
    if (!mayCallJob(caller, kind))
      throw Errors.forbidden(`This API key may not make this call: it needs the ${JOB_CALL_SCOPES[kind].join(' or ')} scope`);
  } catch (error) {
    const err = GatewayError.from(error, { phase: 'authenticate' });
    if (err.status >= 500) deps.logger.error({ err: err.cause ?? err, traceId }, 'authentication failed');
    return err.toResponse({ 'x-gateway-trace-id': traceId });
  }
  let body: Uint8Array | undefined;
  let config: GatewayConfig;
  let metadata: Readonly<Record<string, string>>;
  try {
    body = request.method === 'GET' || request.method === 'DELETE' ? undefined : await readBody(request, deps.jobs.maxBodyBytes, values['content-length']);
    metadata = parseMetadata(values['x-gateway-metadata']);
    if (deps.workspaceDefaults) metadata = withWorkspaceMetadata(metadata, deps.workspaceDefaults.metadata(caller.workspaceId));
    config = resolveConfig(values, caller, undefined);
  } catch (error) {
    return GatewayError.from(error, { phase: 'request' }).toResponse({ 'x-gateway-trace-id': traceId });
  }
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
    config,
    signal: request.signal,
    receivedAt,
    locals: {},
  });
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
  try {
    const native = await isNative(config, kind, requestOf(undefined), deps);
    return await deps.jobs.handle({ kind, method: request.method, path, search, headers: request.headers, traceId, caller, config, native, body, forward });
  } catch (error) {
    const err = GatewayError.from(error, { phase: kind });
    if (err.status >= 500) deps.logger.error({ err: err.cause ?? err, traceId }, `${kind} call failed`);
    return err.toResponse({ 'x-gateway-trace-id': traceId });
  }
}
