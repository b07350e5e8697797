/**
 * The response cache as an attempt stage (README.md). Per attempt of a target whose config has `cache`:
 *
 *   force refresh? ─► no lookup, status REFRESH
 *   lookup: exact key ─► (semantic mode) similar conversation in the same partition ─► HIT / SEMANTIC_HIT: answered
 *           from the store, the provider is not called
 *   miss ─► next() (the provider, through the inner stages) ─► a 2xx whole answer is stored; a stream is stored once
 *           it ended complete ([DONE], no error, client still there)
 *
 * The stage never fails a request: a store that errs or is slow is a miss; storing happens off the response path.
 */
import type {
  Attempt,
  AttemptResult,
  AttemptStage,
  GatewayConfig,
  GatewayRequest,
  JsonObject,
  Logger,
} from '@gateway/sdk';
import { WholeAnswer } from '@gateway/sdk';
import { decodeEntry, type Entry, type EntryKind, encodeEntry, entryKind } from './entry.ts';
import { type Conversation, conversationOf, exactKey, FORCE_REFRESH_HEADER, keyHead, scopeOf, textHash } from './key.ts';
import { bestMatch, decodeIndex, type Embedder, encodeIndex, type PartitionIndex, withItem } from './semantic.ts';
import type { CacheSettings } from './settings.ts';
import { assembleStream, replayAsStream, wantsUsage } from './stream.ts';

export type CacheStatus = 'HIT' | 'MISS' | 'SEMANTIC_HIT' | 'SEMANTIC_MISS' | 'REFRESH' | 'DISABLED';

/** Where entries are kept (backends/: in memory, Redis). */
export interface CacheBackend {
  name: string;
  get(key: string): Promise<Uint8Array | null>;
  set(key: string, value: Uint8Array, ttlSeconds: number): Promise<void>;
}

/** A backend the stage can use: a CacheBackend, optionally with synchronous access (the in-process one). */
export type StageBackend = CacheBackend & {
  peek?(key: string): Uint8Array | null;
  put?(key: string, value: Uint8Array, ttlSeconds: number): void;
};

export interface ResponseCacheOptions {
  backend: StageBackend;
  settings: CacheSettings;
  /** The embedder of semantic lookups: one for every request, or chosen per request (embedders.ts). */
  embedder: Embedder | ((req: GatewayRequest) => Embedder);
  logger?: Logger;
  now?: () => number;
}


const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' } as const;

const configured = new WeakMap<GatewayConfig, boolean>();

/** Whether a config node or anything under it has `cache`; once per (shared, parsed once) config object. */
export function hasCache(node: GatewayConfig): boolean {
  let answer = configured.get(node);
  if (answer === undefined) {
    answer = node.cache !== undefined || (node.targets ?? []).some((child) => hasCache(child));
    configured.set(node, answer);
  }
  return answer;
}


/** What a semantic lookup learnt, reused when the answer is indexed. */
interface SemanticContext {
  embedder: Embedder;
  conversation: Conversation;
  partitionKey: string;
  hashes: string[];
  /** Query vectors computed so far, by message position. */
  vectors: Map<number, Float32Array>;
}

interface Lookup {
  req: GatewayRequest;
  attempt: Attempt;
  kind: EntryKind;
  key: string;
  head: string;
  stream: boolean;
  includeUsage: boolean;
  maxAgeMs: number;
  semantic: SemanticContext | undefined;
}

export class ResponseCache {
  readonly stage: AttemptStage;
  readonly stats = { hits: 0, semanticHits: 0, misses: 0, refreshes: 0, stored: 0, notStored: 0, storeErrors: 0, lookupErrors: 0 };
  private readonly backend: StageBackend;
  private readonly settings: CacheSettings;
  private readonly embedderFor: (req: GatewayRequest) => Embedder;
  private readonly logger: Logger | undefined;
  private readonly now: () => number;
  /** Index updates per partition, one after the other within this process. */
  private readonly indexing = new Map<string, Promise<void>>();
  /** Stores still running (tests, shutdown). */
  private readonly pending = new Set<Promise<void>>();

  constructor(o: ResponseCacheOptions) {
    this.backend = o.backend;
    this.settings = o.settings;
    const embedder = o.embedder;
    this.embedderFor = typeof embedder === 'function' ? embedder : () => embedder;
    this.logger = o.logger;
    this.now = o.now ?? Date.now;
    this.stage = {
      name: 'response-cache',
      phase: 'attempt',
      rule: 'sequential',
      // Outside the circuit breaker: a hit never reaches (or counts against) a circuit.
      before: 'circuit-breaker',
      applies: (req) => entryKind(req.endpoint) !== undefined && hasCache(req.config),
      run: (req, attempt, next) => this.run(req, attempt, next),
    };
  }

  /** Resolves once the stores started so far are done. */
  async flush(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  async run(req: GatewayRequest, attempt: Attempt, next: () => Promise<AttemptResult>): Promise<AttemptResult> {
    const config = attempt.target.cache;
    const body = attempt.body;
    const kind = entryKind(req.endpoint);
    if (!config || !body || !kind) {
      req.locals.cacheStatus = 'DISABLED';
      return next();
    }
    const semanticMode = config.mode === 'semantic';
    const maxAge = config.max_age ?? this.settings.defaultMaxAgeSeconds;
    const refresh = isTrue(req.headers.get(FORCE_REFRESH_HEADER));
    let lookup: Lookup | undefined;
    try {
      const head = keyHead(req, attempt, scopeOf(req, attempt.target));
      lookup = {
        req,
        attempt,
        kind,
        key: exactKey(head, body),
        head,
        stream: req.body?.stream === true,
        includeUsage: wantsUsage(body),
        maxAgeMs: maxAge * 1000,
        semantic: undefined,
      };
    } catch (error) {
      this.logger?.warn({ error: describe(error) }, 'response cache: could not key the request');
    }

    if (lookup && !refresh && maxAge > 0) {
      try {
        const hit = await this.lookup(lookup, semanticMode);
        if (hit) {
          req.locals.cacheStatus = semanticMode ? 'SEMANTIC_HIT' : 'HIT';
          if (semanticMode) this.stats.semanticHits++;
          else this.stats.hits++;
          return hit;
        }
      } catch (error) {
        this.stats.lookupErrors++;
        this.logger?.debug({ error: describe(error) }, 'response cache: lookup failed, treated as a miss');
      }
    }
    req.locals.cacheStatus = refresh ? 'REFRESH' : semanticMode ? 'SEMANTIC_MISS' : 'MISS';
    if (refresh) this.stats.refreshes++;
    else this.stats.misses++;

    const result = await next();
    if (!lookup || maxAge <= 0) return result;
    try {
      return this.keep(lookup, result, semanticMode, maxAge);
    } catch (error) {
      this.stats.storeErrors++;
      this.logger?.warn({ error: describe(error) }, 'response cache: could not store an answer');
      return result;
    }
  }

  // ---- lookup -------------------------------------------------------------------------------------------------

  private async read(key: string): Promise<Uint8Array | null> {
    return this.backend.peek ? this.backend.peek(key) : this.backend.get(key);
  }

  private async lookup(l: Lookup, semanticMode: boolean): Promise<AttemptResult | undefined> {
    const bytes = await this.read(l.key);
    if (bytes) {
      const hit = this.serve(l, bytes);
      if (hit) return hit;
    }
    if (!semanticMode) return undefined;
    const semantic = this.semanticContext(l);
    if (!semantic) return undefined;
    l.semantic = semantic;
    // An answer of this partition still being added to its index (in this process) is waited for, so that a
    // request right after it sees it; nothing to wait for in the common case.
    const indexing = this.indexing.get(semantic.partitionKey);
    if (indexing) await indexing;
    const indexBytes = await this.read(semantic.partitionKey);
    const index = indexBytes ? decodeIndex(indexBytes, semantic.embedder.id) : undefined;
    if (!index) return undefined;
    const now = this.now();
    const notBefore = now - l.maxAgeMs;
    if (!index.items.some((it) => it.expiresAt > now && it.storedAt >= notBefore)) return undefined;
    await this.queryVectors(l.req, semantic, index);
    const table = new Map(index.hashes.map((h, i) => [h, i]));
    const vectorOf = (i: number): Float32Array =>
      semantic.vectors.get(i) ?? (index.vectors[table.get(semantic.hashes[i] as string) as number] as Float32Array);
    const match = bestMatch(index, semantic.hashes, vectorOf, this.settings.semanticThreshold, notBefore, now);
    if (!match) return undefined;
    const entryBytes = await this.read(match.item.key);
    return entryBytes ? this.serve(l, entryBytes) : undefined;
  }

  /**
   * The semantic side of a lookup: the request's embedder (whose identity is part of the partition) and its
   * conversation; undefined when there is nothing to compare. Throws when the embedder cannot be chosen.
   */
  private semanticContext(l: Lookup): SemanticContext | undefined {
    const embedder = this.embedderFor(l.req);
    const conversation = conversationOf(`${l.head}\u0000${embedder.id}`, l.req.endpoint, l.attempt.body as JsonObject);
    if (!conversation) return undefined;
    return { embedder, conversation, partitionKey: `s:${conversation.partition}`, hashes: conversation.texts.map(textHash), vectors: new Map() };
  }

  /** Embeds the query texts the index does not already hold a vector for (one call for all of them). */
  private async queryVectors(req: GatewayRequest, semantic: SemanticContext, index: PartitionIndex | undefined): Promise<void> {
    const known = new Set(index?.hashes ?? []);
    const missing: number[] = [];
    semantic.hashes.forEach((h, i) => {
      if (!known.has(h) && !semantic.vectors.has(i)) missing.push(i);
    });
    if (!missing.length) return;
    const texts = missing.map((i) => semantic.conversation.texts[i] as string);
    const vectors = await semantic.embedder.embed(texts, { caller: req.caller, traceId: req.traceId });
    missing.forEach((i, k) => semantic.vectors.set(i, vectors[k] as Float32Array));
  }

  /** The answer for this request from a stored entry, or undefined when the entry cannot serve it. */
  private serve(l: Lookup, bytes: Uint8Array): AttemptResult | undefined {
    const entry = decoded(bytes);
    const now = this.now();
    if (!entry || entry.kind !== l.kind || entry.expiresAt <= now || entry.storedAt < now - l.maxAgeMs) return undefined;
    const providerId = l.attempt.provider.id;
    if (l.stream && entry.kind !== 'embed') {
      const sse = replayAsStream(entry.kind, entry.body, l.includeUsage);
      if (sse === undefined) return undefined;
      return {
        response: new Response(sse, { status: 200, headers: SSE_HEADERS }),
        status: 200,
        providerId,
        settled: Promise.resolve({ body: sse }),
      };
    }
    // A whole answer always carries usage; one assembled from a stream that did not send it serves streams only.
    if (entry.source === 'sse' && !entry.usage && entry.kind !== 'embed') return undefined;
    return new WholeAnswer(entry.body, entry.status, providerId);
  }

  // ---- store --------------------------------------------------------------------------------------------------

  /** The result to hand on; stores it (whole answers now, streams once they ended complete) without waiting. */
  private keep(l: Lookup, result: AttemptResult, semanticMode: boolean, maxAge: number): AttemptResult {
    if (result.error || result.status < 200 || result.status >= 300) {
      this.stats.notStored++;
      return result;
    }
    const answer = result.answer;
    if (answer) {
      if (answer.status >= 200 && answer.status < 300 && answer.contentType.includes('json')) {
        this.track(this.store(l, { kind: l.kind, source: 'json', usage: true, status: answer.status, body: answer.text }, semanticMode, maxAge));
      } else this.stats.notStored++;
      return result;
    }
    const response = result.response;
    const isStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    if (!l.stream || l.kind === 'embed' || !isStream || !response.body) {
      this.stats.notStored++;
      return result;
    }
    const kind = l.kind;
    const teed = this.tee(response.body, (sse) => {
      result.settled.then((end) => {
        // Only a stream that ended whole: no error frame, [DONE] seen, the client still reading.
        if (end.error || end.clientAborted || sse === undefined) {
          this.stats.notStored++;
          return;
        }
        const assembled = assembleStream(kind, sse);
        if (!assembled) {
          this.stats.notStored++;
          return;
        }
        this.track(this.store(l, { kind, source: 'sse', usage: assembled.usage, status: 200, body: assembled.body }, semanticMode, maxAge));
      });
    });
    return {
      response: new Response(teed, { status: response.status, headers: response.headers }),
      status: result.status,
      providerId: result.providerId,
      error: result.error,
      upstreamLatencyMs: result.upstreamLatencyMs,
      retryAfterMs: result.retryAfterMs,
      settled: result.settled,
      // A stream that breaks is still continued (issue #15); the copy stored is what the client got.
      resumption: result.resumption,
    };
  }

  /**
   * The same bytes, passed on as they come; `onEnd` gets the whole text when the stream ended normally (undefined
   * when it outgrew the largest entry). A client that goes away cancels the source as before, and `onEnd` is not
   * called.
   */
  private tee(source: ReadableStream<Uint8Array>, onEnd: (text: string | undefined) => void): ReadableStream<Uint8Array> {
    const reader = source.getReader();
    const parts: Uint8Array[] = [];
    let size = 0;
    let tooBig = false;
    const limit = this.settings.maxEntryBytes;
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          let read: Awaited<ReturnType<typeof reader.read>>;
          try {
            read = await reader.read();
          } catch (error) {
            controller.error(error);
            return;
          }
          if (read.done) {
            controller.close();
            onEnd(tooBig ? undefined : Buffer.concat(parts).toString('utf8'));
            return;
          }
          const chunk = read.value;
          if (!tooBig) {
            size += chunk.byteLength;
            if (size > limit) {
              tooBig = true;
              parts.length = 0;
            } else parts.push(chunk);
          }
          controller.enqueue(chunk);
        },
        cancel(reason) {
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
  }

  private track(p: Promise<void>): void {
    this.pending.add(p);
    p.finally(() => this.pending.delete(p));
  }

  private async store(l: Lookup, e: Omit<Entry, 'storedAt' | 'expiresAt'>, semanticMode: boolean, maxAge: number): Promise<void> {
    const storedAt = this.now();
    const entry: Entry = { ...e, storedAt, expiresAt: storedAt + maxAge * 1000 };
    const bytes = encodeEntry(entry);
    if (bytes.byteLength > this.settings.maxEntryBytes) {
      this.stats.notStored++;
      return;
    }
    try {
      if (this.backend.put) this.backend.put(l.key, bytes, maxAge);
      else await this.backend.set(l.key, bytes, maxAge);
      this.stats.stored++;
    } catch (error) {
      this.stats.storeErrors++;
      this.logger?.debug({ error: describe(error) }, 'response cache: store failed');
      return;
    }
    if (semanticMode) {
      try {
        await this.index(l, entry);
      } catch (error) {
        this.stats.storeErrors++;
        this.logger?.debug({ error: describe(error) }, 'response cache: semantic index update failed');
      }
    }
  }

  /** Adds the stored answer's conversation to its partition's index (one update at a time per partition here). */
  private index(l: Lookup, entry: Entry): Promise<void> {
    const s = l.semantic ?? this.semanticContext(l);
    if (!s) return Promise.resolve();
    const previous = this.indexing.get(s.partitionKey) ?? Promise.resolve();
    const run = previous.then(async () => {
      const bytes = await this.read(s.partitionKey).catch(() => null);
      const index = bytes ? decodeIndex(bytes, s.embedder.id) : undefined;
      await this.queryVectors(l.req, s, index);
      const table = new Map((index?.hashes ?? []).map((h, i) => [h, i]));
      const vectors = s.hashes.map((h, i) => s.vectors.get(i) ?? (index?.vectors[table.get(h) as number] as Float32Array));
      const now = this.now();
      const next = withItem(index, s.embedder.id, { key: l.key, storedAt: entry.storedAt, expiresAt: entry.expiresAt }, s.hashes, vectors, this.settings.semanticMaxEntries, now);
      const ttl = Math.ceil((Math.max(...next.items.map((it) => it.expiresAt)) - now) / 1000);
      const encoded = encodeIndex(next);
      if (this.backend.put) this.backend.put(s.partitionKey, encoded, ttl);
      else await this.backend.set(s.partitionKey, encoded, ttl);
    });
    const settledRun = run.catch(() => {});
    this.indexing.set(s.partitionKey, settledRun);
    settledRun.then(() => {
      if (this.indexing.get(s.partitionKey) === settledRun) this.indexing.delete(s.partitionKey);
    });
    return run;
  }
}

/**
 * Entries decoded before, by their stored bytes: the in-process backend hands out the same bytes on every hit, so a
 * hot entry is decoded once, not per hit (the UTF-8 decoding of the answer was the largest cost of a hit).
 * Redis hands out new bytes each time, which simply miss here.
 */
const decodedEntries = new WeakMap<Uint8Array, Entry | null>();

function decoded(bytes: Uint8Array): Entry | undefined {
  let entry = decodedEntries.get(bytes);
  if (entry === undefined) {
    entry = decodeEntry(bytes) ?? null;
    decodedEntries.set(bytes, entry);
  }
  return entry ?? undefined;
}

function isTrue(value: string | null): boolean {
  return value !== null && value.trim().toLowerCase() === 'true';
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
