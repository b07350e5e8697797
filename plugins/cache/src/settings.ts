/** The cache's settings, from the environment the gateway hands its plugins (README.md "Settings"). */

export interface CacheSettings {
  /** `memory` (in-process LRU) or `redis`. Default: `redis` when a Redis URL is set, else `memory`. */
  backend: 'memory' | 'redis';
  /** GATEWAY_CACHE_REDIS_URL, else REDIS_URL. */
  redisUrl: string | undefined;
  /** Prefix of every Redis key the cache writes; processes that share a cache must use the same. */
  keyPrefix: string;
  /** A Redis command that takes longer is given up (the request goes on as a miss). */
  redisTimeoutMs: number;
  /** Bound of the in-process store, in bytes. */
  maxBytes: number;
  /** Answers larger than this are not stored (nor streams that grow past it). */
  maxEntryBytes: number;
  /** Seconds an answer stays when the config's `cache` sets no `max_age`. */
  defaultMaxAgeSeconds: number;
  /** Cosine similarity at or above which a semantic lookup counts as a hit. */
  semanticThreshold: number;
  /** Earlier conversations kept for semantic lookup per partition (workspace, namespace, target, parameters). */
  semanticMaxEntries: number;
  embeddings: {
    /**
     * The gateway's embeddings target: a config (JSON, or a saved config's id resolved in the caller's workspace)
     * called through the gateway's pipeline. Wins over `url`; a workspace's own target wins over it.
     */
    config: string | undefined;
    /** OpenAI-compatible embeddings endpoint; unset (and no config): the local lexical embedding. */
    url: string | undefined;
    apiKey: string | undefined;
    model: string;
    dimensions: number | undefined;
    timeoutMs: number;
  };
}

export const DEFAULTS = {
  keyPrefix: 'gw:cache:',
  redisTimeoutMs: 250,
  maxBytes: 64 * 1024 * 1024,
  maxEntryBytes: 4 * 1024 * 1024,
  defaultMaxAgeSeconds: 3600,
  semanticThreshold: 0.95,
  semanticMaxEntries: 100,
  embeddingsModel: 'text-embedding-3-small',
  embeddingsTimeoutMs: 2_000,
} as const;

const positiveInt = (value: string | undefined, fallback: number): number => {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : fallback;
};

export function readCacheSettings(env: Readonly<Record<string, string | undefined>>): CacheSettings {
  const redisUrl = env.GATEWAY_CACHE_REDIS_URL || env.REDIS_URL || undefined;
  const wanted = (env.GATEWAY_CACHE_BACKEND ?? '').trim().toLowerCase();
  // Redis whenever there is a URL, unless GATEWAY_CACHE_BACKEND=memory keeps the cache in the process.
  const backend = wanted === 'memory' || !redisUrl ? 'memory' : 'redis';
  const threshold = Number(env.GATEWAY_CACHE_SEMANTIC_THRESHOLD);
  const maxBytes = positiveInt(env.GATEWAY_CACHE_MAX_BYTES, DEFAULTS.maxBytes);
  const url = env.GATEWAY_CACHE_EMBEDDINGS_URL?.trim() || undefined;
  const dims = positiveInt(env.GATEWAY_CACHE_EMBEDDINGS_DIMENSIONS, 0);
  return {
    backend,
    redisUrl,
    keyPrefix: env.GATEWAY_CACHE_KEY_PREFIX || DEFAULTS.keyPrefix,
    redisTimeoutMs: positiveInt(env.GATEWAY_CACHE_REDIS_TIMEOUT_MS, DEFAULTS.redisTimeoutMs),
    maxBytes,
    maxEntryBytes: Math.min(positiveInt(env.GATEWAY_CACHE_MAX_ENTRY_BYTES, DEFAULTS.maxEntryBytes), maxBytes),
    defaultMaxAgeSeconds: positiveInt(env.GATEWAY_CACHE_DEFAULT_MAX_AGE, DEFAULTS.defaultMaxAgeSeconds),
    semanticThreshold:
      env.GATEWAY_CACHE_SEMANTIC_THRESHOLD !== undefined && Number.isFinite(threshold) && threshold > 0 && threshold <= 1
        ? threshold
        : DEFAULTS.semanticThreshold,
    semanticMaxEntries: positiveInt(env.GATEWAY_CACHE_SEMANTIC_MAX_ENTRIES, DEFAULTS.semanticMaxEntries),
    embeddings: {
      config: env.GATEWAY_CACHE_EMBEDDINGS_CONFIG?.trim() || undefined,
      url,
      apiKey: env.GATEWAY_CACHE_EMBEDDINGS_API_KEY || undefined,
      model: env.GATEWAY_CACHE_EMBEDDINGS_MODEL || DEFAULTS.embeddingsModel,
      dimensions: dims > 0 ? dims : undefined,
      timeoutMs: positiveInt(env.GATEWAY_CACHE_EMBEDDINGS_TIMEOUT_MS, DEFAULTS.embeddingsTimeoutMs),
    },
  };
}
