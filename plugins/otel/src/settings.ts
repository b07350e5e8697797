/**
 * The plugin's settings, from the standard OpenTelemetry environment variables (the SDK's own env reading is not
 * used: a plugin reads `api.env`, so tests and embedders can pass their own). Undefined means tracing is off and the
 * OpenTelemetry packages are never imported.
 */
export interface OtelSettings {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string;
  protocol: 'http/json' | 'http/protobuf';
  headers: Record<string, string>;
  serviceName: string;
  resourceAttributes: Record<string, string>;
  /** Per export request (OTEL_EXPORTER_OTLP_TRACES_TIMEOUT / OTEL_EXPORTER_OTLP_TIMEOUT), ms. */
  exportTimeoutMs: number;
  /** BatchSpanProcessor (OTEL_BSP_*). */
  scheduledDelayMs: number;
  maxQueueSize: number;
  maxExportBatchSize: number;
  /** GATEWAY_OTEL_CAPTURE_BODIES=ON: request and answer bodies (size-capped) as span attributes. Off by default. */
  captureBodies: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

const positive = (env: Env, name: string, fallback: number): number => {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
};

/** `k1=v1,k2=v2` with percent-encoded values (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES). */
export function parseKeyValues(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    out[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return out;
}

const isTrue = (v: string | undefined) => /^(1|true|on|yes)$/i.test(v?.trim() ?? '');

export function readOtelSettings(env: Env): OtelSettings | undefined {
  if (isTrue(env.OTEL_SDK_DISABLED)) return undefined;
  const exporters = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporters && !exporters.split(',').map((e) => e.trim()).includes('otlp')) return undefined;
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!tracesEndpoint && !endpoint) return undefined;
  const url = tracesEndpoint || `${(endpoint as string).replace(/\/+$/, '')}/v1/traces`;
  if (!/^https?:\/\//.test(url)) throw new Error(`OTLP endpoint must be an http(s) URL, got ${JSON.stringify(url)}`);
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  if (protocol !== 'http/json' && protocol !== 'http/protobuf')
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL: this gateway exports over http/protobuf or http/json, not ${JSON.stringify(protocol)}`);
  const resourceAttributes = parseKeyValues(env.OTEL_RESOURCE_ATTRIBUTES);
  return {
    url,
    protocol,
    headers: { ...parseKeyValues(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseKeyValues(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    serviceName: env.OTEL_SERVICE_NAME?.trim() || resourceAttributes['service.name'] || 'ai-gateway',
    resourceAttributes,
    exportTimeoutMs: positive(env, env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ? 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT' : 'OTEL_EXPORTER_OTLP_TIMEOUT', 10_000),
    scheduledDelayMs: positive(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000),
    maxQueueSize: positive(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048),
    maxExportBatchSize: positive(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512),
    captureBodies: isTrue(env.GATEWAY_OTEL_CAPTURE_BODIES),
  };
}
