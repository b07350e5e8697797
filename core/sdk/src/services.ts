/**
 * Typed services. A service is a value one plugin (or the host) provides and others look up, named by a token
 * declared once: here for what the core provides or reads, in the owning plugin's package for a service only its
 * dependents use. Lookups go by the token's id, a string, so two copies of the SDK agree on a service. See
 * docs/plugins.md, "Services".
 */
import type { AdminAuthorizer, AuditSink, FeatureFlag } from './admin.ts';
import type { GatewayConfig, TargetConfig } from './config.ts';
import type { DeclaredConfigFields } from './config-fields.ts';
import type { Database } from './db.ts';
import type { OutboundGuard } from './outbound.ts';
import type { Caller, GatewayCalls, GatewayRequest, GuardrailCheck } from './plugin.ts';
import type { IntegrationPrices, Pricing } from './pricing.ts';
import type { ProviderAdapter } from './provider.ts';
import type { ToolCallPhase } from './tool-calls.ts';

/** The name of a service whose value is a T. Made with `defineService`; compared by `id`. */
export interface ServiceToken<T> {
  readonly id: string;
  /** Carries T for the type checker only (never set): tokens of different types do not mix. */
  readonly type?: (value: T) => T;
}

/**
 * A service's token. The id is the service's name in messages and must be unique among installed plugins: a
 * third party prefixes it with its package name (`@acme/gateway-quotas.ledger`).
 */
export function defineService<T>(id: string): ServiceToken<T> {
  return Object.freeze({ id });
}

type MaybePromise<T> = T | Promise<T>;

/** The host's settings a plugin may read (from the environment, read once at start). */
export interface HostSettings {
  readonly databaseUrl: string;
  /** The MySQL read replica (DB_READER_*), when one is set. */
  readonly reader: DatabaseReader | undefined;
  /** The `*_ENABLED` switches (`OFF` disables). */
  readonly features: Readonly<Record<FeatureFlag, boolean>>;
}

/** The MySQL read replica (DB_READER_*). */
export interface DatabaseReader {
  readonly host: string;
  readonly user?: string;
  readonly pass?: string;
  readonly port?: number;
}

/** A database as settings name it: DATABASE_URL and the read replica. */
export interface DatabaseConnection {
  readonly url: string;
  readonly reader?: DatabaseReader;
}

/**
 * For a plugin that writes from a worker thread with its own connection (the request log): the host's reading of
 * DATABASE_URL, whether a connection reaches the `database` service's database, and the module that opens one.
 */
export interface DatabaseThreads {
  /** DATABASE_URL and DB_READER_* as the host reads them from an environment, its default URL included. */
  fromEnv(env: Readonly<Record<string, string | undefined>>): DatabaseConnection;
  /**
   * Why a thread that opens `connection` would not reach `database` (in memory, another file, host, port or
   * database), or undefined when it would: logs written elsewhere would go where nobody reads them.
   */
  mismatch(connection: DatabaseConnection, database: Database): string | undefined;
  /** A module (file URL) a worker thread imports: its `openDatabase(connection)` resolves to the thread's `Database`. */
  readonly module: string;
}

/** Checks a gateway API key (the server's authentication step). */
export interface KeyVerifier {
  verify(secret: string): Promise<Caller | undefined>;
  /** A cached answer without a promise (the common case), or undefined to call `verify`. */
  peek?(secret: string): Caller | undefined;
}

/** The scopes an API key may be given; a plugin adds the scopes of its routes (adding is idempotent). */
export interface ScopeRegistry {
  add(scopes: readonly string[]): void;
  has(scope: string): boolean;
}

/** Whether a target may be tried now (an open circuit says no); asked synchronously while planning. */
export interface TargetAvailability {
  isAvailable(req: GatewayRequest, index: string, target: TargetConfig): boolean;
}

/**
 * Stored objects the administration side resolves (virtual keys, `@slug` providers). They answer from memory; a
 * promise only when an outside lookup is needed (a secret reference not cached). A resolver throws a GatewayError to
 * refuse (403 for a workspace without access).
 */
export interface StoredAccess {
  virtualKey?(id: string, caller: Caller): MaybePromise<TargetConfig | undefined>;
  /** `model`: the model the request asks for, when known (a stored provider may route or refuse it per model). */
  providerSlug?(slug: string, caller: Caller, model?: string): MaybePromise<{ provider: string; target: TargetConfig; integrationId?: string } | undefined>;
}

/**
 * The config store's lookup of a saved config by id, for the calling workspace: the config (validated when it was
 * saved), undefined when there is none, or a thrown GatewayError (403 for a workspace without access).
 */
export type SavedConfigResolver = (id: string, caller: Caller | undefined) => GatewayConfig | undefined;

/**
 * Which saved config a config object is: the config store marks every object it hands out with the saved config's
 * id (`markSavedConfig`), and the request log reads it back from the request's config (`savedConfigIdOf`) into
 * `request_logs.config_id`. A WeakMap, not a field: a config is closed (no unknown field) and shared, frozen.
 */
const savedConfigIds = new WeakMap<GatewayConfig, string>();
export function markSavedConfig(config: GatewayConfig, id: string): void {
  if (savedConfigIds.get(config) !== id) savedConfigIds.set(config, id);
}
/** The id of the saved config `config` is (or was copied from, by the core's header merge); undefined for inline JSON. */
export function savedConfigIdOf(config: GatewayConfig): string | undefined {
  return savedConfigIds.get(config);
}

/** A saved guardrail: the object form of a guardrail entry (`id`, `deny`, `async`, `on_fail`, `on_success`, checks). */
export type SavedGuardrail = Readonly<Record<string, unknown>>;

/** The keys of a guardrail entry that say how it acts; every other key of the entry names a check. */
export const GUARDRAIL_POLICY_KEYS: ReadonlySet<string> = new Set(['id', 'deny', 'async', 'on_fail', 'on_success']);

/**
 * Whose saved guardrails a config may name: those of its organisation that are organisation-wide or of
 * `workspaceId`; `null`: of any workspace of the organisation (an organisation-service key).
 */
export interface GuardrailScope {
  readonly organisationId: string;
  readonly workspaceId: string | null;
}

/** A saved guardrail by id, when `scope` may use it; undefined otherwise, as for an unknown id (ids cannot be probed). */
export type SavedGuardrailResolver = (id: string, scope: GuardrailScope) => SavedGuardrail | undefined;

/** A routing config checked: the config, or every violation by path (`targets[1].provider: …`). */
export type ConfigValidation = { ok: true; config: GatewayConfig } | { ok: false; violations: string[] };

/** The host's routing-config checks, for plugins that store configs or guardrail entries. */
export interface ConfigValidator {
  /**
   * Checked as a header config is (the schema of the loaded plugins, SPEC.md's rules); `scope`: whose saved
   * guardrails it may name (none without).
   */
  validate(value: unknown, scope?: GuardrailScope): ConfigValidation;
  /** Forgets the parsed header configs: they may hold a saved guardrail that just changed. */
  clearCache(): void;
}

/** A workspace's settings for the response cache (the settings plugin's), answered from memory. */
export interface WorkspaceCacheSettings {
  /**
   * The id of the saved config the workspace uses as its embeddings target for semantic lookups; undefined when it
   * sets none. Synchronous, no I/O.
   */
  embeddingsConfig(workspaceId: string): string | undefined;
}

/** The request log's state (plugins/request-log), shown by GET /metrics and GET /health. Cheap: read from memory. */
export interface RequestLogStatus {
  /** Prometheus text exposition (HELP and TYPE lines included), appended to GET /metrics. */
  metrics(): string;
  /** `degraded` while rows are journaled instead of written, replayed, or dropped; GET /health shows it then. */
  health(): { status: 'ok' | 'degraded'; reasons: string[] } & Record<string, unknown>;
}

/** The services of the contract: provided by the host, or by a plugin and read by the core or by several plugins. */
export const Services = {
  // ---- provided by the host, before any plugin is set up
  database: defineService<Database>('database'),
  settings: defineService<HostSettings>('settings'),
  /** The outbound-URL guard (docs/plugins.md, "Outbound URLs"). */
  hostGuard: defineService<OutboundGuard>('hostGuard'),
  /** Worker threads' own database connections (docs/plugins.md, "Services"). */
  databaseThreads: defineService<DatabaseThreads>('databaseThreads'),
  /** Routing-config validation: saved configs and saved guardrails check what they store with it. */
  configValidator: defineService<ConfigValidator>('configValidator'),
  /** Every loaded guardrail check by id; complete once every plugin is set up. */
  guardrailChecks: defineService<ReadonlyMap<string, GuardrailCheck>>('guardrailChecks'),
  /** Every loaded provider adapter by id; complete once every plugin is set up. */
  providerAdapters: defineService<ReadonlyMap<string, ProviderAdapter>>('providerAdapters'),
  /** The top-level config fields plugins declare (`api.configFields`), in load order; complete once every plugin is set up. */
  pluginConfigFields: defineService<readonly DeclaredConfigFields[]>('pluginConfigFields'),

  // ---- provided by the host once every plugin is set up (look it up in `onReady`)
  /** Calls through the gateway's own pipeline (docs/plugins.md, "Calls through the gateway"). */
  gatewayCalls: defineService<GatewayCalls>('gatewayCalls'),
  /** The tool-call phase (tool-calls.ts), for the proxies of tool and agent calls. */
  toolCalls: defineService<ToolCallPhase>('toolCalls'),

  // ---- provided by a plugin, read by the core
  apiKeyVerifier: defineService<KeyVerifier>('apiKeyVerifier'),
  /**
   * Decoupled JWT authentication of gateway calls (admin/jwt-auth; docs/jwt.md): a JWT-shaped secret on the data plane
   * goes here instead of `apiKeyVerifier`. `verify` rejects with a descriptive 401 (expired, wrong audience, unknown key
   * id…) rather than answering undefined; `peek` answers a recently verified token without a promise.
   */
  jwtVerifier: defineService<KeyVerifier>('jwtVerifier'),
  /**
   * Sessions of users signed in with SSO (admin/sso; docs/admin/sso.md): the administration API gives a `gws_`
   * secret (the `gw_session` cookie, when no key header is sent) to it. `verify` rejects with a descriptive 401
   * (ended, older than the organisation's max_session_ttl…).
   */
  sessionVerifier: defineService<KeyVerifier>('sessionVerifier'),
  adminAuthorizer: defineService<AdminAuthorizer>('adminAuthorizer'),
  auditLog: defineService<AuditSink>('auditLog'),
  circuitBreaker: defineService<TargetAvailability>('circuitBreaker'),
  storedAccess: defineService<StoredAccess>('storedAccess'),
  savedConfigs: defineService<SavedConfigResolver>('savedConfigs'),
  savedGuardrails: defineService<SavedGuardrailResolver>('savedGuardrails'),
  requestLogStatus: defineService<RequestLogStatus>('requestLogStatus'),

  // ---- provided by a plugin, read by plugins that work without it
  apiKeyScopes: defineService<ScopeRegistry>('apiKeyScopes'),
  workspaceCacheSettings: defineService<WorkspaceCacheSettings>('workspaceCacheSettings'),
  /** The cost of an answer from its usage (plugins/pricing; README, "Cost"); complete once every plugin is set up. */
  pricing: defineService<Pricing>('pricing'),
  /** An integration's own model prices and multipliers (the integrations' administration), read by `pricing`. */
  integrationPrices: defineService<IntegrationPrices>('integrationPrices'),
} as const;
