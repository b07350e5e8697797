/** Settings from the environment (INTERFACE.md "Running"), read once at start. */
export interface Settings {
  port: number;
  host: string;
  databaseUrl: string;
  reader: { host: string; user?: string; pass?: string; port?: number } | undefined;
  hadrMode: boolean;
  redisUrl: string | undefined;
  adminApiKey: string | undefined;
  apiKeyPrefix: string | undefined;
  logLevel: string;
  /** LOG_FORMAT: `pretty` (readable lines) or `json`; unset: pretty on a terminal, JSON otherwise. */
  logFormat: 'pretty' | 'json' | undefined;
  maxRequestBodyBytes: number;
  /** Limit of an administration body: ADMIN_MAX_BODY_BYTES, never above maxRequestBodyBytes. */
  adminMaxBodyBytes: number;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  trustedCustomHosts: string[];
  disabledPlugins: string[];
  /** Upper bound on one provider attempt when the config sets no request_timeout. */
  defaultRequestTimeoutMs: number;
  streamIdleTimeoutMs: number;
  /** Bytes of each request and response body kept in the log. */
  logBodyBytes: number;
  /** CORS_ALLOWED_ORIGINS: origins browsers may call from (`*` for any); empty: CORS off. */
  corsOrigins: string[];
  /** GATEWAY_DRAIN_TIMEOUT_MS: after a stop signal, how long in-flight requests and streams may go on. */
  drainTimeoutMs: number;
  /** CONSOLE_ENABLED (default on): the web console at /console (docs/console.md); CONSOLE_DIST_DIR: its built files. */
  console: { enabled: boolean; distDir: string | undefined };
  features: Record<'guardrails' | 'apiAccess' | 'dataExports' | 'usageLimits' | 'auditLogs' | 'scim' | 'policy', boolean>;
}

/** The shortest GATEWAY_ADMIN_API_KEY accepted: the bootstrap key has every scope, so it must not be guessable. */
export const MIN_ADMIN_API_KEY_LENGTH = 32;

const on = (value: string | undefined) => (value ?? 'ON').toUpperCase() !== 'OFF';
const int = (value: string | undefined, fallback: number) => {
  const n = Number(value);
  return value !== undefined && value !== '' && Number.isFinite(n) && n > 0 ? Math.floor(n) : fallback;
};
const list = (value: string | undefined, fallback: string[]) =>
  value === undefined ? fallback : value.split(',').map((s) => s.trim()).filter(Boolean);

/** Throws on a setting the gateway must not start with (the message names the variable and the fix). */
export function readSettings(env: Record<string, string | undefined>): Settings {
  const adminApiKey = env.GATEWAY_ADMIN_API_KEY || undefined;
  // Refused whatever the database holds: an operator learns at once that the value is too weak, also on a database
  // already bootstrapped (where the variable is ignored but the stored key may be this short; rotate it).
  if (adminApiKey !== undefined && adminApiKey.length < MIN_ADMIN_API_KEY_LENGTH)
    throw new Error(
      `GATEWAY_ADMIN_API_KEY is ${adminApiKey.length} characters long; it must have at least ${MIN_ADMIN_API_KEY_LENGTH} ` +
        '(e.g. `openssl rand -hex 32`), or be unset to have one generated on an empty database',
    );
  const databaseUrl = env.DATABASE_URL || 'sqlite:./data/gateway.db';
  // Checked here rather than when the first credential is sealed: every MySQL process must share one key, and a
  // gateway that started without it would fail later on every stored credential.
  if (databaseUrl.startsWith('mysql') && !env.GATEWAY_ENCRYPTION_KEY)
    throw new Error(
      'GATEWAY_ENCRYPTION_KEY is not set: a MySQL deployment needs it (at least 16 characters, the same in every ' +
        'process; e.g. `openssl rand -hex 32`) to seal stored provider credentials',
    );
  const logFormat = env.LOG_FORMAT?.toLowerCase();
  if (logFormat && logFormat !== 'pretty' && logFormat !== 'json') throw new Error(`LOG_FORMAT is "${env.LOG_FORMAT}"; use pretty or json (or leave it unset)`);
  const maxRequestBodyBytes = int(env.MAX_REQUEST_BODY_BYTES, 33_554_432);
  return {
    // 0 asks the system for a free port.
    port: /^\d+$/.test(env.PORT ?? '') && Number(env.PORT) <= 65_535 ? Number(env.PORT) : 8787,
    host: env.HOST || '0.0.0.0',
    databaseUrl,
    reader: env.DB_READER_HOST
      ? { host: env.DB_READER_HOST, user: env.DB_READER_USER, pass: env.DB_READER_PASS, port: env.DB_READER_PORT ? int(env.DB_READER_PORT, 3306) : undefined }
      : undefined,
    hadrMode: (env.MYSQL_WRITER_HADR_MODE ?? 'OFF').toUpperCase() === 'ON',
    redisUrl: env.REDIS_URL || undefined,
    adminApiKey,
    apiKeyPrefix: env.API_KEY_PREFIX || undefined,
    logLevel: env.LOG_LEVEL || 'info',
    logFormat: logFormat as Settings['logFormat'],
    maxRequestBodyBytes,
    adminMaxBodyBytes: Math.min(int(env.ADMIN_MAX_BODY_BYTES, 1_048_576), maxRequestBodyBytes),
    metricsToken: env.METRICS_TOKEN || undefined,
    // Nothing is trusted by default: a model server on this machine must be named (INTERFACE.md, docs/security.md).
    trustedCustomHosts: list(env.TRUSTED_CUSTOM_HOSTS, []),
    disabledPlugins: list(env.GATEWAY_DISABLED_PLUGINS, []),
    defaultRequestTimeoutMs: int(env.GATEWAY_DEFAULT_REQUEST_TIMEOUT_MS, 600_000),
    streamIdleTimeoutMs: int(env.GATEWAY_STREAM_IDLE_TIMEOUT_MS, 120_000),
    logBodyBytes: int(env.GATEWAY_LOG_BODY_BYTES, 65_536),
    corsOrigins: list(env.CORS_ALLOWED_ORIGINS, []).map((origin) => origin.replace(/\/+$/, '')),
    drainTimeoutMs: int(env.GATEWAY_DRAIN_TIMEOUT_MS, 25_000),
    console: { enabled: on(env.CONSOLE_ENABLED), distDir: env.CONSOLE_DIST_DIR || undefined },
    features: {
      guardrails: on(env.GUARDRAILS_ENABLED),
      apiAccess: on(env.API_ACCESS_ENABLED),
      dataExports: on(env.DATA_EXPORTS_ENABLED),
      usageLimits: on(env.USAGE_LIMITS_ENABLED),
      auditLogs: on(env.AUDIT_LOGS_ENABLED),
      scim: on(env.SCIM_ENABLED),
      policy: on(env.POLICY_ENABLED),
    },
  };
}
