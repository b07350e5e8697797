import { resolve } from 'node:path';
import { configValidator, loadedConfig, setSavedConfigResolver, setSavedGuardrailResolver, useLoadedFields } from '@gateway/config';
import { createDatabase, databaseThreads } from '@gateway/db';
import { loadPlugins, type LoadResult } from '@gateway/loader';
import { HostGuard, Inheritance, orderStages, type PipelineDeps, type Resolver, toolCallPhase, useResponseStore } from '@gateway/pipeline';
import {
  type DatabaseHealth,
  type EndpointKind,
  Errors,
  GatewayError,
  JobServices,
  type Logger,
  MetricsServices,
  type RequestLogStatus,
  ResponseServices,
  RoutingServices,
  type ServiceToken,
  Services,
  type StateStore,
} from '@gateway/sdk';
import { adminAuthenticator } from './admin-auth.ts';
import { type AdminDeps, adminHandler } from './admin-routes.ts';
import { CallMetrics } from './call-metrics.ts';
import { HealthMetrics } from './health-metrics.ts';
import { dataPlaneAuthenticator } from './data-plane-auth.ts';
import { createStateStore } from '@gateway/state';
import { type AnyElysia, Elysia } from 'elysia';
import { readSettings, type Settings } from './env.ts';
import { handleGatewayCall, type HandlerDeps } from './gateway-handler.ts';
import { createLogger, redactSecretFields } from './logger.ts';
import { logDestination } from './log-format.ts';
import { consoleHandler } from './console-route.ts';
import { withCors } from './cors.ts';
import { assertDatabaseReachable, loadProblems, Readiness } from './readiness.ts';
import { Metrics, metricsEndpoint } from './metrics.ts';
import { internalCalls } from './internal-calls.ts';
import { handleJobCall, type JobDeps, jobKindOf } from './jobs-route.ts';
import { handleMessagesCall, messagesRoute } from './messages-route.ts';
import { makeProviderResolver } from './resolve.ts';
import { handleResponsesCall, responsesRoute } from './responses-route.ts';

export const CORE_VERSION = '1.0.0';
export const PROJECT_ROOT = resolve(import.meta.dir, '../../..');

export interface GatewayOptions {
  env?: Record<string, string | undefined>;
  /** Project roots whose plugins are loaded; default: this checkout. */
  roots?: string[];
  logger?: Logger;
  /** How outbound hosts are resolved before they are checked (tests: a stub, so no DNS query leaves). */
  resolve?: Resolver;
}

export interface Gateway {
  settings: Settings;
  app: AnyElysia;
  plugins: LoadResult;
  state: StateStore;
  logger: Logger;
  metrics: Metrics;
  /** GET /health/ready's checks; `problems` (plugins that did not load, no authenticator) keep the process from starting. */
  readiness: Readiness;
  /** A service the host or a plugin provides; throws, naming it, when none does (tests, tools). */
  service<T>(token: ServiceToken<T>): T;
  /** Handles one request in-process (tests). */
  handle(request: Request): Promise<Response>;
  /** Flushes queues and closes connections, after in-flight requests are done. */
  close(): Promise<void>;
}

/** Indexed by the request path: no prototype, so no path can reach an inherited property. */
const FIRST_CLASS: Readonly<Record<string, EndpointKind | undefined>> = Object.assign(Object.create(null) as Record<string, EndpointKind>, {
  '/v1/chat/completions': 'chatComplete',
  '/v1/completions': 'complete',
  '/v1/embeddings': 'embed',
  '/v1/moderations': 'moderate',
} satisfies Record<string, EndpointKind>);

/** Path and query of an absolute request URL, without building a URL object on every request. */
export function splitUrl(url: string): { pathname: string; search: string } {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return { pathname: '/', search: '' };
  const q = url.indexOf('?', start);
  const hash = url.indexOf('#', start);
  const end = hash < 0 ? url.length : hash;
  return q < 0 || q > end
    ? { pathname: url.slice(start, end), search: '' }
    : { pathname: url.slice(start, q), search: q + 1 === end ? '' : url.slice(q, end) };
}

/** Everything but the listening socket: plugins, state, database, routes. */
export async function createGateway(opts: GatewayOptions = {}): Promise<Gateway> {
  const env = opts.env ?? process.env;
  const settings = readSettings(env);
  const logger = opts.logger ?? createLogger(settings.logLevel, logDestination(settings.logFormat));
  const database = await createDatabase(settings.databaseUrl, { reader: settings.reader, hadr: settings.hadrMode, logger });
  await assertDatabaseReachable(database, settings.databaseUrl);
  const state = createStateStore(settings.redisUrl);
  const hostGuard = new HostGuard(settings.trustedCustomHosts, opts.resolve);
  // Series plugins add to GET /metrics (MetricsServices.sources in @gateway/sdk), rendered at each scrape.
  const metricSources: (() => string)[] = [];
  const plugins = await loadPlugins({
    roots: opts.roots ?? [PROJECT_ROOT],
    coreVersion: CORE_VERSION,
    disabled: settings.disabledPlugins,
    env,
    logger,
    state,
    // hostGuard: plugins that call URLs taken from configs (webhooks, guardrail services, token endpoints, secret
    // managers) fetch them through the same guard as custom hosts (sdk OutboundGuard).
    provide: (registry) => {
      registry.provide(Services.database, database);
      registry.provide(Services.settings, settings);
      registry.provide(Services.hostGuard, hostGuard);
      registry.provide(Services.configValidator, configValidator);
      registry.provide(Services.databaseThreads, databaseThreads);
      registry.provide(MetricsServices.sources, { add: (render) => void metricSources.push(render) });
    },
  });
  const { registry } = plugins;
  const metrics = new Metrics();
  const logStatus = registry.optional(Services.requestLogStatus);
  if (logStatus) metricSources.unshift(() => logStatus.metrics());
  // Per provider and model (call-metrics.ts), and whether the database and Redis answer (health-metrics.ts).
  const callMetrics = new CallMetrics();
  const healthMetrics = new HealthMetrics(database, state, settings.redisUrl !== undefined);
  metricSources.push(
    () => callMetrics.render(),
    () => healthMetrics.render(),
  );
  const serveMetrics = metricsEndpoint(metrics, settings.metricsToken, () => metricSources.map((render) => render()).join(''));

  // Saved guardrails a header config may name, for its sender: the hook engine's field rules (plugins/hooks) resolve
  // them through this seam. Set before any traffic: parsed configs are cached. GUARDRAILS_ENABLED=OFF: none (the
  // engine is off).
  const unsetSaved = setSavedGuardrailResolver(settings.features.guardrails ? registry.optional(Services.savedGuardrails) : undefined);
  const unsetSavedConfigs = setSavedConfigResolver(registry.optional(Services.savedConfigs));
  // The responses the Responses API produced (plugins/response-store), when loaded: docs/responses.md.
  const unsetResponseStore = useResponseStore(registry.optional(ResponseServices.store));
  // The config as the loaded plugins make it (their providers' target fields, their strategies' modes and fields,
  // the fields other plugins declare), compiled once; the fields they declare secret are kept out of log lines too,
  // and those they declare inherited pass from a config to its targets.
  const unsetFields = useLoadedFields({
    providers: registry.providers.values(),
    strategies: registry.strategies.values(),
    plugins: registry.configFields,
  });
  for (const adapter of registry.providers.values()) redactSecretFields(adapter.targetFields?.secret ?? []);
  for (const { fields } of registry.configFields) redactSecretFields(fields.secret ?? []);
  const inheritance = new Inheritance(loadedConfig().inherited);

  const stored = registry.optional(Services.storedAccess) ?? {};
  const breaker = registry.optional(Services.circuitBreaker);
  // The stages in running order, decided once from their before/after (a cycle stops the start here).
  const stages = orderStages(registry.stages);
  const pipeline: PipelineDeps = {
    strategies: registry.strategies,
    attemptStages: stages.attemptStages,
    stages,
    logger,
    call: {
      hostGuard,
      captureLimit: settings.logBodyBytes,
      streamIdleTimeoutMs: settings.streamIdleTimeoutMs,
      defaultTimeoutMs: settings.defaultRequestTimeoutMs,
    },
    resolveProvider: makeProviderResolver(registry.providers, stored),
    isAvailable: breaker ? (req, index, target) => breaker.isAvailable(req, index, target) : undefined,
    inheritance,
    observe: (req, outcome) => {
      metrics.record(req.endpoint, outcome.providerId, outcome.status, outcome.latencyMs, outcome.upstreamLatencyMs);
      callMetrics.observe(req, outcome);
    },
  };
  // Calls plugins make through this pipeline (the response cache's embeddings target), looked up in their onReady.
  registry.provide(Services.gatewayCalls, internalCalls(pipeline));
  // The tool-call phase's stages, run by the proxies of tool and agent calls (MCP, A2A), looked up in their onReady.
  registry.provide(Services.toolCalls, toolCallPhase(stages.toolCallStages));
  const authenticator = registry.optional(Services.apiKeyVerifier);
  const readiness = new Readiness(database, loadProblems(plugins, authenticator !== undefined));
  const deps: HandlerDeps = {
    pipeline,
    // Gateway calls may also carry a JWT (docs/jwt.md); the administration API takes API keys only (adminDeps).
    authenticator: dataPlaneAuthenticator(authenticator, registry.optional(Services.jwtVerifier)),
    metrics,
    logger,
    maxBodyBytes: settings.maxRequestBodyBytes,
    // Calls that name only a model (docs/clients.md): aliases and default configs; workspace default metadata.
    modelRouting: registry.optional(RoutingServices.modelRouting),
    workspaceDefaults: registry.optional(RoutingServices.workspaceDefaults),
  };

  // Files, batches and fine-tuning (jobs-route.ts): the plugin that keeps them, when one is loaded; else passthrough.
  const jobEndpoints = registry.optional(JobServices.jobEndpoints);
  const jobDeps: JobDeps | undefined = jobEndpoints && { ...deps, jobs: jobEndpoints };
  const gatewayCall = (request: Request) => {
    const { pathname, search } = splitUrl(request.url);
    const jobKind = jobDeps ? jobKindOf(pathname) : undefined;
    if (jobKind && jobDeps) return handleJobCall(request, jobKind, pathname, search, jobDeps);
    // Anthropic's Messages API (and its /v1/v1 form): messages-route.ts.
    const messages = request.method === 'POST' ? messagesRoute(pathname) : undefined;
    if (messages) return handleMessagesCall(request, messages, search, deps);
    // OpenAI's Responses API and its stored responses: responses-route.ts.
    const responses = responsesRoute(request.method, pathname);
    if (responses) return handleResponsesCall(request, responses, search, deps);
    const endpoint =
      request.method === 'POST' ? FIRST_CLASS[pathname] : request.method === 'GET' && pathname === '/v1/models' ? 'listModels' : undefined;
    return handleGatewayCall(request, endpoint ?? 'proxy', pathname.slice(3), search, deps);
  };

  const app = new Elysia()
    .onError(({ code, error }) => {
      if (code === 'NOT_FOUND') return Errors.notFound('No such route').toResponse();
      const err = GatewayError.from(error, { phase: 'server' });
      // A write refused while the HADR writer is down is expected, and /health already says so.
      if (err.status >= 500 && err.code !== 'database_writer_unavailable') logger.error({ err: err.cause ?? err }, 'unhandled server error');
      return err.toResponse();
    })
    // HADR mode with the writer down: still 200 (gateway traffic flows), `degraded` with the reason.
    .get('/health', () => Response.json(withRequestLog(database.health(), logStatus)))
    // For orchestrators: live while the process serves; ready while it can serve (readiness.ts).
    .get('/health/live', () => Response.json({ status: 'live' }))
    .get('/health/ready', () => readiness.respond())
    .get('/metrics', ({ request }) => serveMetrics(request));

  const adminDeps: AdminDeps = {
    // API keys, and SSO sessions when admin/sso is loaded (admin-auth.ts).
    authenticator: adminAuthenticator(authenticator, registry.optional(Services.sessionVerifier)),
    authorizer: registry.optional(Services.adminAuthorizer),
    audit: registry.optional(Services.auditLog),
    settings,
    logger,
  };
  for (const { route } of registry.routes) {
    const handler = adminHandler(route, adminDeps);
    // GET /models with a provider chosen (header, config or virtual key) is that provider's list, passed through;
    // without one it is the administration list of the models the workspace reaches.
    const providerList = route.method === 'GET' && route.path === '/models';
    // async: Elysia awaits (and routes rejections to onError) only for handlers it sees as async.
    app.route(route.method, `/v1${route.path}`, async ({ request, params }) =>
      providerList && (request.headers.has('x-gateway-provider') || request.headers.has('x-gateway-config') || request.headers.has('x-gateway-virtual-key'))
        ? gatewayCall(request)
        : handler(request, params as Record<string, string>),
    );
  }

  for (const path of Object.keys(FIRST_CLASS)) app.post(path, ({ request }) => gatewayCall(request));
  app.get('/v1/*', ({ request }) => gatewayCall(request));
  app.post('/v1/*', ({ request }) => gatewayCall(request));
  app.put('/v1/*', ({ request }) => gatewayCall(request));
  app.delete('/v1/*', ({ request }) => gatewayCall(request));
  // The web console (console-route.ts, docs/console.md): its built files; CONSOLE_ENABLED=OFF leaves it out.
  if (settings.console.enabled) {
    const serveConsole = consoleHandler(settings.console.distDir ?? resolve(PROJECT_ROOT, 'console/dist'));
    app.get('/console', ({ request }) => serveConsole(splitUrl(request.url).pathname));
    app.get('/console/*', ({ request }) => serveConsole(splitUrl(request.url).pathname));
  }

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    for (const fn of registry.closers) {
      try {
        await fn();
      } catch (error) {
        logger.warn({ err: error }, 'a plugin failed to close');
      }
    }
    healthMetrics.close();
    await state.close();
    await database.close();
    unsetSaved();
    unsetSavedConfigs();
    unsetResponseStore();
    unsetFields();
  };
  // Every plugin is set up and every host service provided: plugins look up each other's services, before traffic.
  try {
    await registry.ready();
  } catch (error) {
    await close();
    throw error;
  }
  return {
    settings,
    app,
    plugins,
    state,
    logger,
    metrics,
    readiness,
    service: (token) => registry.service(token),
    // The four first-class routes (nearly all traffic) go straight to the gateway call; everything else through
    // Elysia's router. Saves Elysia's per-request context on the hot path (~0.7 µs of ~17).
    // CORS_ALLOWED_ORIGINS unset: no CORS wrapper at all.
    handle: withCors((request) => {
      if (request.method === 'POST') {
        const { pathname, search } = splitUrl(request.url);
        const endpoint = FIRST_CLASS[pathname];
        if (endpoint) return handleGatewayCall(request, endpoint, pathname.slice(3), search, deps);
      }
      return app.handle(request);
    }, settings.corsOrigins),
    close,
  };
}

/** GET /health: the database's state, and the request log's when it is degraded (journaling, replaying, dropping). */
function withRequestLog(health: DatabaseHealth, log: RequestLogStatus | undefined): Record<string, unknown> {
  const requestLog = log?.health();
  if (!requestLog || requestLog.status === 'ok') return health;
  return health.status === 'ok' ? { status: 'degraded', reason: `request log: ${requestLog.reasons.join(', ')}`, requestLog } : { ...health, requestLog };
}
