/**
 * `@gateway/sdk/testing`: what a plugin's own tests need, without a gateway. `buildGatewayRequest` makes the request
 * the server would hand to stages, strategies and checks; `testPluginApi` runs a plugin's `setup` against an
 * in-memory api that records what it registers. Nothing here touches the network, a database or bun:test.
 */
import type { AdminRoute } from './admin.ts';
import type { GatewayConfig } from './config.ts';
import type { ConfigFieldSet } from './config-fields.ts';
import type { Caller, GatewayRequest, GuardrailCheck, PluginApi, Stage, Strategy } from './plugin.ts';
import type { ProviderAdapter } from './provider.ts';
import type { ServiceToken } from './services.ts';
import type { EndpointKind, JsonObject, Logger, StateStore } from './types.ts';

// ---- requests ---------------------------------------------------------------------------------------------------

/** The path after `/v1` the server gives each first-class endpoint. */
const PATHS: Readonly<Record<Exclude<EndpointKind, 'proxy'>, string>> = {
  chatComplete: '/chat/completions',
  complete: '/completions',
  embed: '/embeddings',
  moderate: '/moderations',
  messages: '/messages',
  countTokens: '/messages/count_tokens',
  responses: '/responses',
  listModels: '/models',
};

/**
 * What to change of the default request; every field of `GatewayRequest` may be given. Only `caller` is merged
 * (the fields given replace the default's), and `headers` may be anything `new Headers()` takes.
 */
export type GatewayRequestInit = Partial<Omit<GatewayRequest, 'caller' | 'headers'>> & {
  caller?: Partial<Caller>;
  headers?: ConstructorParameters<typeof Headers>[0];
};

/** The caller of a built request: a workspace-service key with every scope. */
export const TEST_CALLER: Caller = Object.freeze({
  apiKeyId: 'key-1',
  organisationId: 'org-1',
  workspaceId: 'ws-1',
  scopes: Object.freeze(['*']),
  keyType: 'workspace-service',
  userId: null,
});

/**
 * A request as the server builds it: by default a chat completion (`POST /chat/completions`, a one-message body,
 * JSON content type) from `TEST_CALLER` with an empty config. As on the server, `rawBody` is the body's bytes and
 * `parsedBody` the body itself (so `body === parsedBody` says it is unchanged) unless given; `body: undefined` makes
 * a request without one.
 */
export function buildGatewayRequest(init: GatewayRequestInit = {}): GatewayRequest {
  const endpoint = init.endpoint ?? 'chatComplete';
  const body: JsonObject | undefined = 'body' in init ? init.body : { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] };
  const config: GatewayConfig = init.config ?? {};
  return {
    traceId: init.traceId ?? 'trace-1',
    endpoint,
    method: init.method ?? (endpoint === 'listModels' ? 'GET' : 'POST'),
    path: init.path ?? (endpoint === 'proxy' ? '/' : PATHS[endpoint]),
    search: init.search ?? '',
    headers: new Headers(init.headers ?? (body === undefined ? {} : { 'content-type': 'application/json' })),
    body,
    rawBody: 'rawBody' in init ? init.rawBody : body === undefined ? undefined : new TextEncoder().encode(JSON.stringify(body)),
    parsedBody: 'parsedBody' in init ? init.parsedBody : body,
    metadata: init.metadata ?? {},
    caller: { ...TEST_CALLER, ...init.caller },
    config,
    signal: init.signal ?? new AbortController().signal,
    receivedAt: init.receivedAt ?? performance.now(),
    locals: init.locals ?? {},
  };
}

// ---- a PluginApi --------------------------------------------------------------------------------------------------

export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: object | string;
  msg?: string;
}

/** A logger that keeps what it is given. */
export function testLogger(): Logger & { records: LogRecord[] } {
  const records: LogRecord[] = [];
  const at = (level: LogRecord['level']) => (obj: object | string, msg?: string) => void records.push({ level, obj, msg });
  return { records, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export interface TestPluginApi {
  api: PluginApi;
  /** What the plugin registered, in order. */
  stages: Stage[];
  providers: ProviderAdapter[];
  strategies: Strategy[];
  guardrails: GuardrailCheck[];
  routes: AdminRoute[];
  /** Config fields it declared (`api.configFields`). */
  configFields: ConfigFieldSet[];
  /** Services by id: those given, and those the plugin provided. */
  services: Map<string, unknown>;
  logger: Logger & { records: LogRecord[] };
  /** Runs the plugin's onReady hooks, as the loader does once every plugin is set up. */
  ready(): Promise<void>;
  /** Runs the plugin's onClose callbacks, as the server does at shutdown. */
  close(): Promise<void>;
}

export interface TestPluginApiOptions {
  /** The plugin's package name (`api.name`); default `test-plugin`. */
  name?: string;
  /** Services by id (`{ [Services.database.id]: database }`): what `api.service` and `api.optional` find. */
  services?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
}

/**
 * A PluginApi that records registrations (stages, providers, strategies, checks, routes, config fields), services, ready hooks
 * and closers. `state` is not available: give a plugin that needs it a real gateway.
 */
export function testPluginApi(options: TestPluginApiOptions = {}): TestPluginApi {
  const services = new Map<string, unknown>(Object.entries(options.services ?? {}));
  const recorded = { stages: [] as Stage[], providers: [] as ProviderAdapter[], strategies: [] as Strategy[], guardrails: [] as GuardrailCheck[], routes: [] as AdminRoute[], configFields: [] as ConfigFieldSet[] };
  const readyHooks: (() => Promise<void> | void)[] = [];
  const closers: (() => Promise<void> | void)[] = [];
  const logger = testLogger();
  // The test gave the service under the token's id: its type is the test's word.
  const optional = <T>(token: ServiceToken<T>): T | undefined => services.get(token.id) as T | undefined;
  const name = options.name ?? 'test-plugin';
  const api: PluginApi = {
    name,
    env: options.env ?? {},
    logger,
    get state(): StateStore {
      throw new Error('state is not available in the test plugin api');
    },
    service<T>(token: ServiceToken<T>): T {
      if (!services.has(token.id)) throw new Error(`no service "${token.id}" in the test plugin api`);
      return optional(token) as T;
    },
    optional,
    provide<T>(token: ServiceToken<T>, value: T): void {
      if (services.has(token.id)) throw new Error(`service "${token.id}" from plugin ${name} is already provided`);
      services.set(token.id, value);
    },
    stage: (stage) => void recorded.stages.push(stage),
    provider: (adapter) => void recorded.providers.push(adapter),
    strategy: (strategy) => void recorded.strategies.push(strategy),
    guardrail: (check) => void recorded.guardrails.push(check),
    route: (route) => void recorded.routes.push(route),
    configFields: (fields) => void recorded.configFields.push(fields),
    onReady: (fn) => void readyHooks.push(fn),
    onClose: (fn) => void closers.push(fn),
  };
  return {
    api,
    ...recorded,
    services,
    logger,
    ready: async () => {
      for (const fn of readyHooks.splice(0)) await fn();
    },
    close: async () => {
      for (const fn of closers) await fn();
    },
  };
}
