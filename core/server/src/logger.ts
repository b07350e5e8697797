import pino from 'pino';

export const REDACTED = '[redacted]';

/**
 * Key names (compared in lower case without `-` and `_`) whose values never reach a log, at any depth: provider and
 * gateway keys, authorization and cookie headers, passwords, tokens, client secrets, stored secret blobs; and the
 * config fields the loaded plugins declare secret (`redactSecretFields`).
 */
const SECRET_NAMES = new Set([
  'authorization',
  'proxyauthorization',
  'cookie',
  'setcookie',
  'apikey',
  'xapikey',
  'xgatewayapikey',
  'key',
  'secret',
  'secrets',
  'password',
  'passwd',
  'token',
  'credentials',
  'privatekey',
  'authconfig',
]);
/** Any name containing these (`client_secret`, `db_password`, `pending_secret`). */
const SECRET_PARTS = ['secret', 'password', 'passwd'];
/** Any name ending with these (`access_token`, `openai_api_key`, `private_key`). */
const SECRET_ENDINGS = ['token', 'apikey', 'privatekey', 'authorization', 'serviceaccountjson'];

const verdicts = new Map<string, boolean>();

const normalise = (key: string) => key.toLowerCase().replace(/[-_]/g, '');

/** Names the loaded plugins declare secret (config-fields.ts in the SDK), whatever they look like. */
const declared = new Set<string>();

/**
 * Adds the config fields a plugin declares secret (a provider's `targetFields.secret`), so that a third party's
 * credential field is never written even when its name says nothing (`svcX_passphrase_b64`). Set at start-up.
 */
export function redactSecretFields(names: Iterable<string>): void {
  for (const name of names) declared.add(normalise(name));
  verdicts.clear();
}

export function isSecretKey(key: string): boolean {
  let verdict = verdicts.get(key);
  if (verdict === undefined) {
    const name = normalise(key);
    verdict =
      SECRET_NAMES.has(name) || declared.has(name) || SECRET_PARTS.some((part) => name.includes(part)) || SECRET_ENDINGS.some((end) => name.endsWith(end));
    // Log keys are a small fixed vocabulary; the bound only guards against keys made from data.
    if (verdicts.size < 10_000) verdicts.set(key, verdict);
  }
  return verdict;
}

/** Deeper than this a value is cut, not printed: a secret can hide at any depth, so nothing unvisited is written. */
const MAX_DEPTH = 64;

/**
 * A copy of `value` with every secret-named property replaced, at any depth, through objects, arrays and errors
 * (serialized as pino does, their own properties and causes included). The caller's object is never changed.
 */
export function redactDeep(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof Date) return value;
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => redactDeep(item, depth + 1, seen));
    let source: object = value;
    if (value instanceof Error) source = pino.stdSerializers.err(value);
    else if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      const json = (value as { toJSON(): unknown }).toJSON();
      if (json === null || typeof json !== 'object') return json;
      source = json;
    }
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(source)) {
      const item = (source as Record<string, unknown>)[key];
      out[key] = isSecretKey(key) && item !== undefined && item !== null ? REDACTED : redactDeep(item, depth + 1, seen);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/**
 * pino's `redact` takes fixed paths (a wildcard stands for one level only), so a secret one level deeper than
 * foreseen would be written. Every logged object, and the bindings of every child logger (which pino writes without
 * the formatters), go through `redactDeep` instead. This runs only when a line is written or a child is made, never
 * on a request that logs nothing.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): pino.Logger {
  const logger = pino(
    {
      level,
      base: { service: 'gateway' },
      formatters: { log: (object) => redactDeep(object) as Record<string, unknown> },
      // Errors were serialized and redacted by the formatter; this covers one that reaches the serializer directly.
      serializers: { err: (err: unknown) => (err instanceof Error ? redactDeep(err) : err) },
    },
    destination,
  );
  // Children are made from their parent's prototype, so every descendant goes through these two.
  const { child, setBindings } = logger;
  logger.child = function (this: pino.Logger, bindings, options) {
    return child.call(this, redactDeep(bindings) as pino.Bindings, options);
  } as typeof logger.child;
  logger.setBindings = function (this: pino.Logger, bindings) {
    setBindings.call(this, redactDeep(bindings) as pino.Bindings);
  };
  return logger;
}
