// Shared pieces of the response-cache suites: configs, calls through the official `openai` SDK that return the
// x-gateway-cache-status header with the answer, raw streamed calls whose exact SSE bytes can be checked, and
// upstream call counts on the OpenAI mock.

import { expect } from 'bun:test';
import { apiKeys, hashSecret } from '@gateway/admin-api-keys';
import { organisations, workspaces } from '@gateway/admin-identity';
import { createDatabase } from '@gateway/db';
import type OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import type { OpenAIMock } from '../mocks/openai-server.ts';

export const T = 30_000;

export type CacheStatus = 'HIT' | 'MISS' | 'SEMANTIC_HIT' | 'SEMANTIC_MISS' | 'REFRESH' | 'DISABLED';

/** `x-gateway-config` with a cache block (the provider comes from the x-gateway-provider headers). */
export function cacheHeaders(cache: { mode: 'simple' | 'semantic'; max_age?: number }, extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-gateway-config': JSON.stringify({ cache }), ...extra };
}

export const SIMPLE = cacheHeaders({ mode: 'simple' });
export const SEMANTIC = cacheHeaders({ mode: 'semantic' });

export function userChat(content: string, extra: Partial<ChatCompletionCreateParamsNonStreaming> = {}): ChatCompletionCreateParamsNonStreaming {
  return { model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra };
}

export interface Answer {
  data: ChatCompletion;
  status: CacheStatus;
  headers: Headers;
}

export async function chat(client: OpenAI, body: ChatCompletionCreateParamsNonStreaming, headers: Record<string, string>): Promise<Answer> {
  const { data, response } = await client.chat.completions.create(body, { headers }).withResponse();
  return { data, status: response.headers.get('x-gateway-cache-status') as CacheStatus, headers: response.headers };
}

export interface Streamed {
  chunks: ChatCompletionChunk[];
  content: string;
  status: CacheStatus;
  ids: Set<string>;
}

/** A streamed chat call through the SDK: its chunks, the content they add up to, and the cache status. */
export async function streamChat(client: OpenAI, body: Omit<ChatCompletionCreateParamsStreaming, 'stream'>, headers: Record<string, string>): Promise<Streamed> {
  const { data: stream, response } = await client.chat.completions.create({ ...body, stream: true }, { headers }).withResponse();
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return {
    chunks,
    content: chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''),
    status: response.headers.get('x-gateway-cache-status') as CacheStatus,
    ids: new Set(chunks.map((c) => c.id)),
  };
}

/** A raw streamed call (fetch): the exact bytes, to check the SSE framing. */
export async function rawStream(url: string, headers: Record<string, string>, body: object): Promise<{ status: number; cache: CacheStatus; contentType: string; text: string }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ ...body, stream: true }),
  });
  return { status: res.status, cache: res.headers.get('x-gateway-cache-status') as CacheStatus, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** Every event is `data: <JSON chunk>` with a blank line after it, no error event, and the last one is `[DONE]`. */
export function expectValidSse(text: string): ChatCompletionChunk[] {
  expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  const events = text.split('\n\n').filter((e) => e !== '');
  const chunks: ChatCompletionChunk[] = [];
  for (const [i, event] of events.entries()) {
    expect(event.startsWith('data: ')).toBe(true);
    const payload = event.slice(6);
    if (i === events.length - 1) {
      expect(payload).toBe('[DONE]');
      continue;
    }
    const chunk = JSON.parse(payload);
    expect(chunk.error).toBeUndefined();
    expect(chunk.object).toBe('chat.completion.chunk');
    chunks.push(chunk);
  }
  return chunks;
}

/** Content of a chat stream's chunks. */
export const contentOf = (chunks: ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

/** Upstream calls the mock received on a path. */
export function upstream(mock: OpenAIMock, path = '/v1/chat/completions'): number {
  return mock.requests.filter((r) => r.path === path).length;
}

/** Waits until `cond` holds (polled), or throws after `ms`. */
export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 5_000, everyMs = 20): Promise<void> {
  const started = Date.now();
  while (!(await cond())) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await Bun.sleep(everyMs);
  }
}

/** A prompt unique to this run (and test), so that suites sharing a store never meet each other's entries. */
export const RUN = crypto.randomUUID().slice(0, 8);
export const unique = (text: string) => `${text} [${RUN}-${crypto.randomUUID().slice(0, 6)}]`;

const TOPIC_DIMS = 64;
/**
 * A stand-in embedding model that knows paraphrases: texts about France share one direction, texts about bread
 * another; anything else gets a direction of its own (what no lexical measure can do).
 */
export function topicVector(text: string): number[] {
  const v = new Array<number>(TOPIC_DIMS).fill(0);
  const t = text.toLowerCase();
  let h = 0;
  for (const ch of t) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  v[/france|french|paris/.test(t) ? 0 : /bread|bake|sourdough/.test(t) ? 1 : 2 + (h % (TOPIC_DIMS - 2))] = 1;
  v[2 + ((h >> 8) % (TOPIC_DIMS - 2))]! += 0.05; // a little noise per text
  return v;
}

/**
 * Writes a workspace-service key for chat calls straight into the gateway's database, the way the api-keys plugin
 * stores one (SHA-256 of the secret): in a new workspace of the bootstrapped organisation, or in its first (default) one.
 * Returns the key's workspace and the first workspace.
 */
export async function addWorkspaceKey(databaseUrl: string, secret: string, where: 'new' | 'first'): Promise<{ workspaceId: string; firstWorkspaceId: string }> {
  const db = await createDatabase(databaseUrl);
  try {
    const [org] = await db.select(organisations, { limit: 1 });
    const [first] = await db.select(workspaces, { limit: 1 });
    if (!org || !first) throw new Error('the gateway did not bootstrap its organisation');
    let target = first.id;
    if (where === 'new') {
      target = crypto.randomUUID();
      await db.insert(workspaces, { id: target, organisation_id: org.id, name: `Workspace ${target.slice(0, 8)}`, slug: `ws-${target.slice(0, 13)}` });
    }
    await db.insert(apiKeys, {
      id: crypto.randomUUID(),
      organisation_id: org.id,
      workspace_id: target,
      name: 'cache test key',
      type: 'workspace-service',
      hash: hashSecret(secret),
      prefix_hint: secret.slice(0, 8),
      // Chat only: the cache's own embeddings calls (gatewayCalls) are the gateway's work, not checked against it.
      scopes: ['completions.write'],
    });
    return { workspaceId: target, firstWorkspaceId: first.id };
  } finally {
    await db.close();
  }
}
