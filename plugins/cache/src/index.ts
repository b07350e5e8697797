/**
 * The response cache plugin (config `cache`: `{"mode": "simple" | "semantic", "max_age": seconds}`): an attempt stage
 * that answers a repeated request from the store without calling the provider, and sets `x-gateway-cache-status`.
 * README.md describes the key, the modes, streaming, the backends and every setting.
 */
import { defineService, definePlugin, type GatewayCalls, Services, type WorkspaceCacheSettings } from '@gateway/sdk';
import { MemoryBackend } from './backends/memory.ts';
import { RedisBackend } from './backends/redis.ts';
import { EmbedderChoice } from './embedders.ts';
import { cacheFields } from './config-fields.ts';
import { readCacheSettings } from './settings.ts';
import { ResponseCache, type StageBackend } from './stage.ts';

export { MemoryBackend } from './backends/memory.ts';
export { cacheFields } from './config-fields.ts';
export { RedisBackend, RedisUnavailableError } from './backends/redis.ts';
export { decodeEntry, encodeEntry, type Entry, type EntryKind } from './entry.ts';
export { canonicalJson, conversationOf, exactKey, keyHead, scopeOf, targetIdentity, textHash } from './key.ts';
export { ConfigEmbedder, EMBEDDINGS_SPAN, EmbedderChoice } from './embedders.ts';
export { bestMatch, decodeIndex, dot, type EmbedContext, type Embedder, encodeIndex, LexicalEmbedder, RemoteEmbedder, withItem } from './semantic.ts';
export { type CacheSettings, DEFAULTS, readCacheSettings } from './settings.ts';
export { type CacheBackend, type CacheStatus, hasCache, ResponseCache, type ResponseCacheOptions, type StageBackend } from './stage.ts';
export { assembleStream, replayAsStream, sseEvents } from './stream.ts';

/** The services of this plugin. */
export const CacheServices = {
  /** The stage's cache (tests flush it). */
  responseCache: defineService<ResponseCache>('responseCache'),
} as const;

export default definePlugin({
  setup(api) {
    api.configFields(cacheFields);
    const settings = readCacheSettings(api.env);
    let backend: StageBackend;
    let redis: RedisBackend | undefined;
    if (settings.backend === 'redis' && settings.redisUrl) {
      redis = new RedisBackend({ url: settings.redisUrl, keyPrefix: settings.keyPrefix, timeoutMs: settings.redisTimeoutMs, logger: api.logger });
      backend = redis;
    } else {
      backend = new MemoryBackend(settings.maxBytes);
    }
    // Both services once ready: the core provides `gatewayCalls` once every plugin is loaded, and the administration
    // side (workspace targets) may load after this plugin or not at all.
    let calls: GatewayCalls | undefined;
    let workspaceSettings: WorkspaceCacheSettings | undefined;
    api.onReady(() => {
      calls = api.optional(Services.gatewayCalls);
      workspaceSettings = api.optional(Services.workspaceCacheSettings);
    });
    const embedders = new EmbedderChoice({
      settings,
      calls: () => calls,
      workspaceTarget: (workspaceId) => workspaceSettings?.embeddingsConfig(workspaceId),
      logger: api.logger,
    });
    const cache = new ResponseCache({ backend, settings, embedder: (req) => embedders.for(req), logger: api.logger });
    api.stage(cache.stage);
    api.provide(CacheServices.responseCache, cache);
    // Stores still in flight finish before the connection closes.
    api.onClose(async () => {
      await cache.flush();
      await redis?.close();
    });
    api.logger.info(
      { backend: backend.name, maxBytes: backend.name === 'memory' ? settings.maxBytes : undefined, embeddings: embedders.describe() },
      'response cache ready',
    );
  },
});
