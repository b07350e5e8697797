/** The export settings from the environment; no sink is configured by default. */
import type { BatcherOptions } from './batcher.ts';
import type { S3Target } from './sinks.ts';

type Env = Readonly<Record<string, string | undefined>>;

export interface ExportSettings {
  webhook?: { url: string; headers: Record<string, string> };
  otlp?: { url: string; headers: Record<string, string>; serviceName: string };
  s3?: S3Target;
  batching: BatcherOptions;
  /** S3 objects are fewer and larger: their own flush interval. */
  s3FlushMs: number;
}

const positive = (env: Env, name: string, fallback: number): number => {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
};

const httpUrl = (name: string, value: string): string => {
  if (!/^https?:\/\//.test(value)) throw new Error(`${name} must be an http(s) URL`);
  return value;
};

/** `k=v,k2=v2`, values percent-encoded (as OTEL_EXPORTER_OTLP_HEADERS). */
export function keyValues(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) out[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return out;
}

export function readExportSettings(env: Env): ExportSettings {
  const settings: ExportSettings = {
    batching: {
      batchSize: positive(env, 'LOG_EXPORT_BATCH_SIZE', 500),
      flushMs: positive(env, 'LOG_EXPORT_FLUSH_MS', 1000),
      maxQueue: positive(env, 'LOG_EXPORT_MAX_QUEUE', 10_000),
      attempts: positive(env, 'LOG_EXPORT_ATTEMPTS', 5),
      retryBaseMs: positive(env, 'LOG_EXPORT_RETRY_BASE_MS', 500),
      bodies: !/^(off|false|0|no)$/i.test(env.LOG_EXPORT_BODIES?.trim() ?? ''),
    },
    s3FlushMs: positive(env, 'LOG_EXPORT_S3_FLUSH_MS', 60_000),
  };
  const webhook = env.LOG_EXPORT_WEBHOOK_URL?.trim();
  if (webhook) settings.webhook = { url: httpUrl('LOG_EXPORT_WEBHOOK_URL', webhook), headers: keyValues(env.LOG_EXPORT_WEBHOOK_HEADERS) };
  const otlp = env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT?.trim();
  if (otlp)
    settings.otlp = {
      url: httpUrl('OTEL_EXPORTER_OTLP_LOGS_ENDPOINT', otlp),
      headers: { ...keyValues(env.OTEL_EXPORTER_OTLP_HEADERS), ...keyValues(env.OTEL_EXPORTER_OTLP_LOGS_HEADERS) },
      serviceName: env.OTEL_SERVICE_NAME?.trim() || 'ai-gateway',
    };
  const bucket = env.LOG_EXPORT_S3_BUCKET?.trim();
  if (bucket) {
    const need = (name: string): string => {
      const value = env[name]?.trim();
      if (!value) throw new Error(`LOG_EXPORT_S3_BUCKET is set: ${name} is needed too`);
      return value;
    };
    settings.s3 = {
      endpoint: httpUrl('LOG_EXPORT_S3_ENDPOINT', need('LOG_EXPORT_S3_ENDPOINT').replace(/\/+$/, '')),
      bucket,
      region: env.LOG_EXPORT_S3_REGION?.trim() || 'us-east-1',
      accessKeyId: need('LOG_EXPORT_S3_ACCESS_KEY_ID'),
      secretAccessKey: need('LOG_EXPORT_S3_SECRET_ACCESS_KEY'),
      ...(env.LOG_EXPORT_S3_SESSION_TOKEN?.trim() ? { sessionToken: env.LOG_EXPORT_S3_SESSION_TOKEN.trim() } : {}),
      prefix: env.LOG_EXPORT_S3_PREFIX?.trim() ?? 'gateway-logs/',
    };
  }
  return settings;
}
