/**
 * Which embedder a semantic lookup uses (README.md "Embeddings"), per request:
 *
 *   the workspace's embeddings target (a saved config, set in the administration side)
 *   ─► else the gateway's (GATEWAY_CACHE_EMBEDDINGS_CONFIG: a config, JSON or a saved config's id)
 *   ─► else an OpenAI-compatible URL (GATEWAY_CACHE_EMBEDDINGS_URL)
 *   ─► else the local lexical embedding.
 *
 * A configured target is called through the gateway's own pipeline (service `gatewayCalls`), as the request's
 * caller: any provider with an embeddings endpoint, with stored credentials (`@slug`, virtual keys) resolved in the
 * caller's workspace. A target that cannot be resolved or fails makes the lookup a miss, never the request fail.
 */
import type { GatewayCalls, GatewayConfig, GatewayRequest, JsonObject, Logger } from '@gateway/sdk';
import { canonicalJson } from './key.ts';
import { CallingEmbedder, type CallingEmbedderOptions, type EmbedContext, type Embedder, LexicalEmbedder, RemoteEmbedder } from './semantic.ts';
import type { CacheSettings } from './settings.ts';

/** Span name of the embeddings calls in the request log. */
export const EMBEDDINGS_SPAN = 'response-cache.embeddings';

/** An embeddings target named by a gateway config, called through the pipeline. */
export class ConfigEmbedder extends CallingEmbedder {
  readonly id: string;

  constructor(
    private readonly config: GatewayConfig,
    private readonly calls: GatewayCalls,
    o: CallingEmbedderOptions,
  ) {
    super(o);
    // The config's content, not its name: a saved config that changes is another vector space.
    const digest = new Bun.CryptoHasher('sha256').update(canonicalJson(config)).digest('hex').slice(0, 32);
    this.id = `config/1/${digest}/${o.model}/${o.dimensions ?? ''}`;
  }

  protected async request(body: Record<string, unknown>, context: EmbedContext, signal: AbortSignal): Promise<unknown> {
    const res = await this.calls.call({
      endpoint: 'embed',
      body: body as JsonObject,
      config: this.config,
      caller: context.caller,
      traceId: context.traceId,
      spanName: EMBEDDINGS_SPAN,
      signal,
    });
    if (!res.ok) throw new Error(`embeddings target answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
    return res.json();
  }
}

export interface EmbedderChoiceOptions {
  settings: CacheSettings;
  /** Service `gatewayCalls` (set by the core once every plugin is loaded). */
  calls: () => GatewayCalls | undefined;
  /** The workspace's embeddings target, when the administration side sets one (service `workspaceCacheSettings`). */
  workspaceTarget: (workspaceId: string) => string | undefined;
  logger?: Logger;
}

export class EmbedderChoice {
  private readonly fallback: Embedder;
  /** One embedder per resolved config object (configs are parsed once and shared), so its cooldown is shared too. */
  private readonly byConfig = new WeakMap<GatewayConfig, ConfigEmbedder>();
  /** Targets already reported as unusable, so that a bad one is logged once, not per request. */
  private readonly reported = new Set<string>();

  constructor(private readonly o: EmbedderChoiceOptions) {
    const e = o.settings.embeddings;
    this.fallback = e.url ? new RemoteEmbedder({ ...e, url: e.url, logger: o.logger }) : new LexicalEmbedder();
  }

  /** What the gateway uses when no workspace sets its own (for the start-up log). */
  describe(): string {
    return this.o.settings.embeddings.config !== undefined ? 'config (GATEWAY_CACHE_EMBEDDINGS_CONFIG)' : this.fallback.id;
  }

  /** The embedder of a request's semantic lookup; throws when its configured target cannot be resolved. */
  for(req: GatewayRequest): Embedder {
    const target = this.o.workspaceTarget(req.caller.workspaceId) ?? this.o.settings.embeddings.config;
    if (target === undefined) return this.fallback;
    const calls = this.o.calls();
    if (!calls) throw new Error('an embeddings target is configured but the gateway offers no internal calls');
    let config: GatewayConfig;
    try {
      config = calls.resolveConfig(target, req.caller);
    } catch (error) {
      const key = `${req.caller.workspaceId}\u0000${target}`;
      if (!this.reported.has(key)) {
        if (this.reported.size > 1000) this.reported.clear();
        this.reported.add(key);
        this.o.logger?.warn(
          { workspaceId: req.caller.workspaceId, error: error instanceof Error ? error.message : String(error) },
          'response cache: the embeddings target cannot be resolved; semantic lookups are misses',
        );
      }
      throw error;
    }
    let embedder = this.byConfig.get(config);
    if (!embedder) {
      const e = this.o.settings.embeddings;
      embedder = new ConfigEmbedder(config, calls, { model: e.model, dimensions: e.dimensions, timeoutMs: e.timeoutMs, logger: this.o.logger });
      this.byConfig.set(config, embedder);
    }
    return embedder;
  }
}
