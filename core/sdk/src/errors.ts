/**
 * The one error type of the gateway. Every failure a client can see is a GatewayError; anything else thrown is
 * wrapped into `internal` (not exposed) by the server. The catalogue of codes is in docs/errors.md.
 */
export interface ErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
  [extra: string]: unknown;
}

export interface GatewayErrorInit {
  /** Stable machine code, e.g. `invalid_config`. */
  code: string;
  /** HTTP status the client gets. */
  status: number;
  message: string;
  /** The `type` field of the error body; defaults to the code. */
  type?: string;
  param?: string | null;
  /** Safe to show the client as is. When false the client sees a generic message. */
  expose?: boolean;
  /** Worth trying again (another attempt or another target). */
  retryable?: boolean;
  /** Extra top-level properties of the error body (`provider`, `hook_results`). */
  extra?: Record<string, unknown>;
  /** Extra response headers (`Retry-After`). */
  headers?: Record<string, string>;
  plugin?: string;
  phase?: string;
  cause?: unknown;
}

/**
 * Marks a GatewayError of any copy of this package. A plugin installed with its own copy of the SDK throws errors of
 * that copy's class, which `instanceof` on the host's class would not recognise (and the host would answer 500):
 * the gateway recognises them by this registry-wide symbol instead, so they keep their status, code and exposure.
 */
const GATEWAY_ERROR = Symbol.for('gateway.error');

export class GatewayError extends Error {
  readonly code: string;
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly expose: boolean;
  readonly retryable: boolean;
  readonly extra: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;
  plugin: string | undefined;
  phase: string | undefined;

  constructor(init: GatewayErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'GatewayError';
    this.code = init.code;
    this.status = init.status;
    this.type = init.type ?? init.code;
    this.param = init.param ?? null;
    this.expose = init.expose ?? true;
    this.retryable = init.retryable ?? false;
    this.extra = init.extra;
    this.headers = init.headers;
    this.plugin = init.plugin;
    this.phase = init.phase;
  }

  /** The body of INTERFACE.md: `{"error": {message, type, code, param}}` plus any extra properties. */
  toBody(): ErrorBody {
    const message = this.expose ? this.message : 'Internal error';
    return {
      error: { message, type: this.type, code: this.code, param: this.param },
      ...this.extra,
    };
  }

  toResponse(extraHeaders?: Record<string, string>): Response {
    return new Response(JSON.stringify(this.toBody()), {
      status: this.status,
      headers: { 'content-type': 'application/json', ...this.headers, ...extraHeaders },
    });
  }

  /** A GatewayError of this or any other copy of the SDK (the brand, not the prototype chain). */
  static is(value: unknown): value is GatewayError {
    return typeof value === 'object' && value !== null && (value as { [GATEWAY_ERROR]?: unknown })[GATEWAY_ERROR] === true;
  }

  /**
   * `error instanceof GatewayError` is the brand check too, so that code on either side of two copies (the host
   * reading a plugin's error, a plugin reading the host's) agrees. Subclasses keep the ordinary prototype check.
   */
  static [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class asked about, GatewayError or a subclass of it.
    return this === GatewayError ? GatewayError.is(value) : Function.prototype[Symbol.hasInstance].call(this, value);
  }

  /** Wraps anything thrown into a GatewayError, keeping plugin and phase for the log. */
  static from(value: unknown, where?: { plugin?: string; phase?: string }): GatewayError {
    if (GatewayError.is(value)) {
      if (where?.plugin && !value.plugin) value.plugin = where.plugin;
      if (where?.phase && !value.phase) value.phase = where.phase;
      return value;
    }
    const message = value instanceof Error ? value.message : String(value);
    return new GatewayError({
      code: 'internal',
      status: 500,
      type: 'internal_error',
      message,
      expose: false,
      cause: value,
      plugin: where?.plugin,
      phase: where?.phase,
    });
  }
}
// The brand, on the prototype: every instance of every copy (and of subclasses) carries it. Not part of the type, so
// the classes of two copies stay interchangeable for the type checker.
Object.defineProperty(GatewayError.prototype, GATEWAY_ERROR, { value: true });

/** The error catalogue: every code the gateway itself produces. Documented in docs/errors.md. */
export const Errors = {
  badRequest: (message: string, param: string | null = null) =>
    new GatewayError({ code: 'invalid_request', type: 'invalid_request_error', status: 400, message, param }),
  malformedJson: (message: string) =>
    new GatewayError({ code: 'malformed_json', type: 'invalid_request_error', status: 400, message }),
  invalidConfig: (violations: readonly string[]) =>
    new GatewayError({
      code: 'invalid_config',
      type: 'invalid_config',
      status: 400,
      message: `Invalid config: ${violations.join('; ')}`,
    }),
  unknownProvider: (provider: string) =>
    new GatewayError({
      code: 'unknown_provider',
      type: 'invalid_request_error',
      status: 400,
      message: `Unknown provider: ${provider}`,
      param: 'provider',
    }),
  unsupportedEndpoint: (provider: string, endpoint: string) =>
    new GatewayError({
      code: 'unsupported_endpoint',
      type: 'invalid_request_error',
      status: 400,
      message: `Provider ${provider} does not support ${endpoint}`,
    }),
  unauthorized: (message = 'Missing or invalid x-gateway-api-key') =>
    new GatewayError({ code: 'unauthorized', type: 'authentication_error', status: 401, message }),
  forbidden: (message = 'This API key is not allowed to make this call') =>
    new GatewayError({ code: 'forbidden', type: 'permission_error', status: 403, message }),
  notFound: (message = 'Not found') =>
    new GatewayError({ code: 'not_found', type: 'not_found_error', status: 404, message }),
  /** An administration write that clashes with what is stored (a taken slug or name). */
  conflict: (message: string, param: string | null = null) =>
    new GatewayError({ code: 'conflict', type: 'invalid_request_error', status: 409, message, param }),
  /** A feature switched off by its `*_ENABLED=OFF` setting. */
  featureDisabled: (feature: string) =>
    new GatewayError({ code: 'feature_disabled', type: 'permission_error', status: 403, message: `${feature} is disabled on this deployment` }),
  /** The writer database is down (HADR mode): reads and gateway traffic go on, administration writes wait. */
  writerUnavailable: () =>
    new GatewayError({
      code: 'database_writer_unavailable',
      type: 'service_unavailable',
      status: 503,
      message: 'The writer database is unavailable; reads continue, try the change again shortly',
      retryable: true,
    }),
  timeout: (ms: number) =>
    new GatewayError({
      code: 'request_timeout',
      type: 'timeout_error',
      status: 408,
      message: `The request timed out after ${ms} ms`,
      retryable: true,
    }),
  payloadTooLarge: (limit: number) =>
    new GatewayError({
      code: 'payload_too_large',
      type: 'invalid_request_error',
      status: 413,
      message: `The request body is larger than ${limit} bytes`,
    }),
  rateLimited: (message: string, retryAfterSeconds: number) =>
    new GatewayError({
      code: 'rate_limited',
      type: 'rate_limit_error',
      status: 429,
      message,
      headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    }),
  /**
   * A rate-limit policy (or a key's `rate_limits`) is exhausted for this window: INTERFACE.md's type
   * `rate_limit_exceeded`, the policy in the message, `retry-after` and the `x-ratelimit-*` headers given.
   */
  rateLimitExceeded: (message: string, headers: Record<string, string>) =>
    new GatewayError({ code: 'rate_limit_exceeded', type: 'rate_limit_exceeded', status: 429, message, headers }),
  /**
   * A usage limit (a policy, or the `usage_limits` of an API key, virtual key or integration workspace) is exhausted
   * until its next reset or a raise: INTERFACE.md's type `usage_limit_exceeded`, the limit in the message, and
   * `retry-after` (seconds to the next reset) when it has one.
   */
  usageLimitExceeded: (message: string, retryAfterSeconds: number | null) =>
    new GatewayError({
      code: 'usage_limit_exceeded',
      type: 'usage_limit_exceeded',
      status: 429,
      message,
      headers: retryAfterSeconds === null ? undefined : { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    }),
  /** The limits' counters cannot be reached (Redis down) and the fail mode is `closed`. */
  limitsUnavailable: (what: string) =>
    new GatewayError({
      code: 'limits_unavailable',
      type: 'service_unavailable',
      status: 503,
      message: `The ${what} cannot be checked right now; try again shortly`,
      retryable: true,
      headers: { 'retry-after': '1' },
    }),
  forbiddenHost: (host: string, unresolvable = false) =>
    new GatewayError({
      code: 'forbidden_custom_host',
      type: 'invalid_request_error',
      status: 400,
      message: unresolvable
        ? `Custom host ${host} could not be resolved, so it cannot be checked against private addresses; add it to TRUSTED_CUSTOM_HOSTS to allow it`
        : `Custom host ${host} resolves to a private or metadata address; add it to TRUSTED_CUSTOM_HOSTS to allow it`,
      param: 'custom_host',
    }),
  upstreamUnreachable: (provider: string, detail: string) =>
    new GatewayError({
      code: 'upstream_unreachable',
      type: 'upstream_error',
      status: 502,
      message: `Could not reach provider ${provider}: ${detail}`,
      retryable: true,
      extra: { provider },
    }),
  upstreamInvalid: (provider: string, detail: string) =>
    new GatewayError({
      code: 'upstream_invalid_response',
      type: 'upstream_error',
      status: 502,
      message: `Provider ${provider} sent an answer that could not be read: ${detail}`,
      extra: { provider },
    }),
  streamInterrupted: (provider: string, detail: string) =>
    new GatewayError({
      code: 'stream_interrupted',
      type: 'upstream_error',
      status: 502,
      message: `The stream from provider ${provider} broke before it was complete: ${detail}`,
      extra: { provider },
    }),
  /** A stream's first content event did not come within `first_token_timeout` (nothing was sent to the client). */
  firstTokenTimeout: (provider: string, ms: number) =>
    new GatewayError({
      code: 'first_token_timeout',
      type: 'timeout_error',
      status: 408,
      message: `Provider ${provider} sent no content within the first-token timeout of ${ms} ms`,
      retryable: true,
      extra: { provider },
    }),
  /** A provider's own error, relayed with its status and message. */
  provider: (
    provider: string,
    status: number,
    message: string,
    type = 'provider_error',
    code: string | null = null,
    param: string | null = null,
  ) =>
    new GatewayError({
      code: code ?? 'provider_error',
      type,
      status,
      message,
      param,
      extra: { provider },
      retryable: status === 429 || status >= 500,
    }),
  internal: (message: string, cause?: unknown) =>
    new GatewayError({ code: 'internal', type: 'internal_error', status: 500, message, expose: false, cause }),
} as const;
