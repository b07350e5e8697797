/**
 * Semantic lookup (README.md "Semantic mode"): embeddings of the conversation's texts, and the per-partition index
 * of earlier conversations that a request is compared with.
 *
 * Similarity of two conversations of the same shape = the LOWEST cosine similarity of their corresponding messages
 * (identical texts count 1 without being compared): every message must be close, so a different system prompt or an
 * earlier turn that differs cannot hide behind a long shared text.
 */
import type { Caller, Logger } from '@gateway/sdk';

/** The request an embedding is made for: an embeddings target is called as its caller, in its trace. */
export interface EmbedContext {
  caller: Caller;
  traceId: string;
}

export interface Embedder {
  /** Identifies the vector space: part of every partition key, so vectors of two embedders never meet. */
  readonly id: string;
  /** Unit-length vectors, one per text. Rejects when the embeddings cannot be had (the lookup is then a miss). */
  embed(texts: readonly string[], context: EmbedContext): Promise<Float32Array[]>;
}

export function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += (v[i] as number) * (v[i] as number);
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / n;
  return v;
}

export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

// ---- the local lexical embedding --------------------------------------------------------------------------------

/** English function words: weighted down so that the words carrying the meaning decide. Negations are NOT here. */
const STOP_WORDS = new Set(
  (
    'a an the is are was were be been being am of to in on at by for with about as into from and or but if then so than that this ' +
    'these those it its i me my we our you your he she they them his her their what which who whom whose how why when where do ' +
    'does did can could would should will shall may might must please tell s t d ll re ve m just hi hello hey kindly'
  ).split(' '),
);

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * A bag of hashed features, no network, no model: NFKC-normalised lower-case words (`[\p{L}\p{N}]+`), each content
 * word with weight 1 and each stop word 0.2; character trigrams of content words (0.3 each, for inflections and
 * typos); pairs of consecutive content words (0.5, for word order). Features are hashed (FNV-1a, signed) into 512
 * dimensions and the vector is normalised to unit length. Rewordings that keep the content words (punctuation, case,
 * polite phrases, contractions) come out above 0.95; a swapped content word ("France" → "Germany") well below.
 */
export class LexicalEmbedder implements Embedder {
  static readonly DIMENSIONS = 512;
  readonly id = `lexical/1/${LexicalEmbedder.DIMENSIONS}`;

  embedOne(text: string): Float32Array {
    const dims = LexicalEmbedder.DIMENSIONS;
    const v = new Float32Array(dims);
    const words = text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    const weights = new Map<string, number>();
    const add = (feature: string, w: number) => weights.set(feature, (weights.get(feature) ?? 0) + w);
    let previous: string | undefined;
    for (const word of words) {
      if (STOP_WORDS.has(word)) {
        add(`w:${word}`, 0.2);
        continue;
      }
      add(`w:${word}`, 1);
      const padded = ` ${word} `;
      for (let j = 0; j + 3 <= padded.length; j++) add(`c:${padded.slice(j, j + 3)}`, 0.3);
      if (previous !== undefined) add(`b:${previous} ${word}`, 0.5);
      previous = word;
    }
    for (const [feature, w] of weights) {
      const h = fnv1a(feature);
      v[h % dims] = (v[h % dims] as number) + (h & 0x80000000 ? -w : w);
    }
    return normalise(v);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }
}

/** Unit vectors from an OpenAI embedding list answering `count` texts; throws on any other shape. */
export function vectorsOf(answer: unknown, count: number): Float32Array[] {
  const data = (answer as { data?: { index?: number; embedding?: unknown }[] } | null)?.data;
  if (!Array.isArray(data) || data.length !== count) throw new Error('embeddings endpoint answered an unexpected shape');
  const out: Float32Array[] = new Array(count);
  data.forEach((d, i) => {
    const index = typeof d?.index === 'number' ? d.index : i;
    if (!Array.isArray(d?.embedding) || index < 0 || index >= count) throw new Error('embeddings endpoint answered an unexpected shape');
    out[index] = normalise(Float32Array.from(d.embedding as number[]));
  });
  for (let i = 0; i < count; i++) if (out[i] === undefined) throw new Error('embeddings endpoint answered an unexpected shape');
  return out;
}

// ---- an OpenAI-compatible embeddings endpoint ------------------------------------------------------------------

/** What every embedder that calls out shares: a failure makes it refuse at once for a while. */
export interface CallingEmbedderOptions {
  model: string;
  dimensions: number | undefined;
  timeoutMs: number;
  logger?: Logger;
  /** After a failure, lookups skip the target for this long (they are misses at once). Default 10 s. */
  cooldownMs?: number;
  now?: () => number;
}

/**
 * An embedder that asks a service: `{model, input: [texts], encoding_format: "float"[, dimensions]}` in OpenAI's
 * shape. A failure or a timeout rejects, and the service is left alone for the cooldown, so that no request waits
 * on it meanwhile.
 */
export abstract class CallingEmbedder implements Embedder {
  abstract readonly id: string;
  private coolUntil = 0;
  private readonly now: () => number;

  constructor(protected readonly o: CallingEmbedderOptions) {
    this.now = o.now ?? Date.now;
  }

  /** The OpenAI-shaped answer to `body`. */
  protected abstract request(body: Record<string, unknown>, context: EmbedContext, signal: AbortSignal): Promise<unknown>;

  async embed(texts: readonly string[], context: EmbedContext): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    if (this.now() < this.coolUntil) throw new Error('embeddings target cooling down after a failure');
    try {
      const body: Record<string, unknown> = { model: this.o.model, input: texts, encoding_format: 'float' };
      if (this.o.dimensions) body.dimensions = this.o.dimensions;
      return vectorsOf(await this.request(body, context, AbortSignal.timeout(this.o.timeoutMs)), texts.length);
    } catch (error) {
      this.coolUntil = this.now() + (this.o.cooldownMs ?? 10_000);
      this.o.logger?.warn(
        { embedder: this.id, error: error instanceof Error ? error.message : String(error) },
        'response cache: embeddings target failed, semantic lookups are misses for a while',
      );
      throw error;
    }
  }
}

// ---- an OpenAI-compatible embeddings endpoint ------------------------------------------------------------------

export interface RemoteEmbedderOptions extends CallingEmbedderOptions {
  url: string;
  apiKey: string | undefined;
}

/**
 * `POST <url>` with `Authorization: Bearer <key>`; `<url>` is the endpoint itself (`…/v1/embeddings`) or a base URL
 * to which `/embeddings` is added.
 */
export class RemoteEmbedder extends CallingEmbedder {
  readonly id: string;
  private readonly url: string;
  private readonly apiKey: string | undefined;

  constructor(o: RemoteEmbedderOptions) {
    super(o);
    this.url = /\/embeddings\/?$/.test(o.url) ? o.url : `${o.url.replace(/\/+$/, '')}/embeddings`;
    this.apiKey = o.apiKey;
    this.id = `remote/1/${this.url}/${o.model}/${o.dimensions ?? ''}`;
  }

  protected async request(body: Record<string, unknown>, _context: EmbedContext, signal: AbortSignal): Promise<unknown> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const res = await fetch(this.url, { method: 'POST', headers, body: JSON.stringify(body), signal });
    if (!res.ok) throw new Error(`embeddings endpoint answered ${res.status}`);
    return res.json();
  }
}

// ---- the partition index ------------------------------------------------------------------------------------------

export interface IndexItem {
  /** Exact key of the stored answer. */
  key: string;
  storedAt: number;
  expiresAt: number;
  /** Per message: index into the text table. */
  texts: number[];
}

export interface PartitionIndex {
  embedder: string;
  dims: number;
  /** Text table: hash of each distinct text, and its vector (same position). */
  hashes: string[];
  vectors: Float32Array[];
  /** Oldest first. */
  items: IndexItem[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `[u32 LE header length][header JSON][padding to 4][float32 vectors, one per text]`. */
export function encodeIndex(index: PartitionIndex): Uint8Array {
  const header = encoder.encode(
    JSON.stringify({ v: 1, e: index.embedder, d: index.dims, h: index.hashes, i: index.items.map((it) => [it.key, it.storedAt, it.expiresAt, it.texts]) }),
  );
  const vectorsAt = Math.ceil((4 + header.byteLength) / 4) * 4;
  const out = new Uint8Array(vectorsAt + index.vectors.length * index.dims * 4);
  new DataView(out.buffer).setUint32(0, header.byteLength, true);
  out.set(header, 4);
  const floats = new Float32Array(out.buffer, vectorsAt, index.vectors.length * index.dims);
  index.vectors.forEach((v, i) => floats.set(v, i * index.dims));
  return out;
}

export function decodeIndex(bytes: Uint8Array, embedder: string): PartitionIndex | undefined {
  try {
    if (bytes.byteLength < 4) return undefined;
    const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
    const header = JSON.parse(decoder.decode(bytes.subarray(4, 4 + length))) as {
      v: number;
      e: string;
      d: number;
      h: string[];
      i: [string, number, number, number[]][];
    };
    if (header.v !== 1 || header.e !== embedder || !Array.isArray(header.h) || !Array.isArray(header.i)) return undefined;
    const dims = header.d;
    const vectorsAt = Math.ceil((4 + length) / 4) * 4;
    const count = header.h.length;
    if (bytes.byteLength < vectorsAt + count * dims * 4) return undefined;
    let section = bytes.subarray(vectorsAt, vectorsAt + count * dims * 4);
    // Float32Array views need 4-byte alignment; a buffer from the network may not give it.
    if (section.byteOffset % 4 !== 0) section = section.slice();
    const floats = new Float32Array(section.buffer, section.byteOffset, count * dims);
    const vectors: Float32Array[] = [];
    for (let i = 0; i < count; i++) vectors.push(floats.subarray(i * dims, (i + 1) * dims));
    const items = header.i.map(([key, storedAt, expiresAt, texts]) => ({ key, storedAt, expiresAt, texts }));
    if (items.some((it) => it.texts.some((t) => t < 0 || t >= count))) return undefined;
    return { embedder: header.e, dims, hashes: header.h, vectors, items };
  } catch {
    return undefined;
  }
}

export interface Match {
  item: IndexItem;
  similarity: number;
}

/**
 * The most similar live item at or above `threshold`: texts identical to the item's count 1, others are compared by
 * cosine; the conversation's similarity is the lowest of its messages'. `vectorOf(i)` is the query's i-th vector.
 */
export function bestMatch(
  index: PartitionIndex,
  hashes: readonly string[],
  vectorOf: (i: number) => Float32Array,
  threshold: number,
  notBefore: number,
  now: number,
): Match | undefined {
  let best: Match | undefined;
  for (let k = index.items.length - 1; k >= 0; k--) {
    const item = index.items[k] as IndexItem;
    if (item.expiresAt <= now || item.storedAt < notBefore || item.texts.length !== hashes.length) continue;
    let similarity = 1;
    for (let i = 0; i < hashes.length && similarity >= threshold; i++) {
      const t = item.texts[i] as number;
      if (index.hashes[t] === hashes[i]) continue;
      similarity = Math.min(similarity, dot(vectorOf(i), index.vectors[t] as Float32Array));
    }
    if (similarity >= threshold && (!best || similarity > best.similarity)) best = { item, similarity };
  }
  return best;
}

/**
 * The index with one more item (replacing any item of the same key), live items only, at most `maxItems` (the oldest
 * go first), and a text table that holds only the texts still referenced.
 */
export function withItem(
  index: PartitionIndex | undefined,
  embedder: string,
  item: { key: string; storedAt: number; expiresAt: number },
  hashes: readonly string[],
  vectors: readonly Float32Array[],
  maxItems: number,
  now: number,
): PartitionIndex {
  const dims = vectors[0]?.length ?? index?.dims ?? 0;
  const old = index && index.dims === dims ? index : undefined;
  const live = (old?.items ?? []).filter((it) => it.expiresAt > now && it.key !== item.key);
  const kept = live.slice(Math.max(0, live.length - (maxItems - 1)));
  const table = new Map<string, Float32Array>();
  const texts = (hashesOf: readonly string[], vectorAt: (i: number) => Float32Array) =>
    hashesOf.map((h, i) => {
      if (!table.has(h)) table.set(h, vectorAt(i));
      return h;
    });
  const rows: { item: Omit<IndexItem, 'texts'>; hashes: string[] }[] = [];
  for (const it of kept)
    rows.push({ item: it, hashes: texts(it.texts.map((t) => (old as PartitionIndex).hashes[t] as string), (i) => (old as PartitionIndex).vectors[it.texts[i] as number] as Float32Array) });
  rows.push({ item, hashes: texts(hashes, (i) => vectors[i] as Float32Array) });
  const order = [...table.keys()];
  const position = new Map(order.map((h, i) => [h, i]));
  return {
    embedder,
    dims,
    hashes: order,
    vectors: order.map((h) => table.get(h) as Float32Array),
    items: rows.map((r) => ({ ...r.item, texts: r.hashes.map((h) => position.get(h) as number) })),
  };
}
