// Semantic mode with an embeddings TARGET: a gateway config (any provider whose adapter has embeddings), called through
// the gateway's own pipeline as the request's caller. Here the target is Cohere (its local server speaks the Embed API
// v2), so the embeddings call is translated like a client's would be.
//
// - gateway-wide: GATEWAY_CACHE_EMBEDDINGS_CONFIG (JSON): a paraphrase the target finds similar is a SEMANTIC_HIT, an
//   unrelated prompt a SEMANTIC_MISS; Cohere receives its own wire format, with the configured key and model;
// - per workspace: PUT /v1/workspaces/{id}/cache-settings names one of the workspace's saved configs; that workspace
//   embeds with it, another workspace keeps the local lexical embedding (a paraphrase is a miss there);
// - a target that fails or cannot be resolved: requests are answered at once as SEMANTIC_MISS.

import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import { createDatabase } from '@gateway/db';
import { requestLogs } from '@gateway/plugin-request-log';
import { eq } from '@gateway/sdk';
import { useStack } from '../helpers/e2e-stack.ts';
import { startCohereServer } from '../providers/cohere/server.ts';
import { addWorkspaceKey, chat, RUN, SEMANTIC, T, topicVector, upstream, userChat } from './support.ts';

let cohereDown = false;
/** Cohere's Embed API v2: `texts`, `input_type` and `embedding_types` in, `embeddings.float` out. */
const cohere = startCohereServer({
  respond(body, request) {
    if (request.path !== '/v2/embed') return undefined;
    if (cohereDown) return Response.json({ message: 'service unavailable' }, { status: 503 });
    const texts = body.texts;
    if (!Array.isArray(texts) || typeof body.input_type !== 'string' || !Array.isArray(body.embedding_types) || !body.embedding_types.includes('float'))
      return Response.json({ message: 'invalid request' }, { status: 400 });
    return Response.json({
      id: 'embed-cache-test',
      embeddings: { float: texts.map((t) => topicVector(String(t))) },
      texts,
      meta: { api_version: { version: '2' }, billed_units: { input_tokens: texts.length } },
      response_type: 'embeddings_by_type',
    });
  },
});
afterAll(() => cohere.stop());

const cohereTarget = (key: string) => ({ provider: 'cohere', api_key: key, custom_host: cohere.baseUrl, override_params: { model: 'embed-v4.0' } });
const embedCalls = () => cohere.requests.filter((r) => r.path === '/v2/embed');
const ns = (name: string) => ({ ...SEMANTIC, 'x-gateway-cache-namespace': `${RUN}-${name}` });

describe('the gateway-wide embeddings target (GATEWAY_CACHE_EMBEDDINGS_CONFIG)', () => {
  const stack = useStack('sqlite', { env: { GATEWAY_CACHE_EMBEDDINGS_CONFIG: JSON.stringify(cohereTarget('co-gateway-key')) } });
  beforeEach(() => {
    stack().mock.reset();
    cohere.requests.length = 0;
    cohereDown = false;
  });

  test('a paraphrase the target finds similar is a hit; Cohere is called in its own format, with the configured key and model', async () => {
    const { client, mock } = stack();
    const h = ns('cohere');
    const first = await chat(client(), userChat('What is the capital of France?'), h);
    expect(first.status).toBe('SEMANTIC_MISS');
    const para = await chat(client(), userChat('Which town hosts the French government?'), h);
    expect(para.status).toBe('SEMANTIC_HIT');
    expect(para.data.id).toBe(first.data.id);
    expect((await chat(client(), userChat('How do I bake bread?'), h)).status).toBe('SEMANTIC_MISS');
    expect(upstream(mock)).toBe(2);

    const calls = embedCalls();
    expect(calls.length).toBeGreaterThan(0);
    expect(calls[0]?.headers.authorization).toBe('Bearer co-gateway-key');
    const sent = calls.map((c) => JSON.parse(c.body) as { model: string; texts: string[]; input_type: string });
    expect(sent[0]?.model).toBe('embed-v4.0');
    expect(sent.flatMap((b) => b.texts)).toContain('Which town hosts the French government?');

    // The embeddings calls are requests of the caller's, in the request log under their own span name and the
    // trace of the request that needed them (the log is written asynchronously: waited for).
    const db = await createDatabase(stack().db.url);
    try {
      let rows: { trace_id: string; endpoint: string; provider: string | null; status: number }[] = [];
      for (let i = 0; i < 50 && rows.length === 0; i++) {
        rows = await db.select(requestLogs, { where: (c) => eq(c.span_name, 'response-cache.embeddings') });
        if (rows.length === 0) await Bun.sleep(100);
      }
      expect(rows.length).toBeGreaterThan(0);
      expect(rows[0]?.endpoint).toBe('embed');
      expect(rows[0]?.provider).toBe('cohere');
      expect(rows[0]?.status).toBe(200);
      expect(rows.map((r) => r.trace_id)).toContain(para.headers.get('x-gateway-trace-id') as string);
    } finally {
      await db.close();
    }
  }, T);

  test('a target that fails: requests are answered at once as SEMANTIC_MISS, exact repeats still hit', async () => {
    const { client, mock } = stack();
    const h = ns('cohere-down');
    await chat(client(), userChat('Tell me about French wine.'), h);
    cohereDown = true;
    for (const text of ['Tell me about wine from France.', 'Describe French wines.']) {
      const started = performance.now();
      const answer = await chat(client(), userChat(text), h);
      expect(answer.status).toBe('SEMANTIC_MISS');
      expect(answer.data.choices[0]?.message.content).toBe(`You said: ${text}`);
      expect(performance.now() - started).toBeLessThan(1_000);
    }
    expect(upstream(mock)).toBe(3);
    expect((await chat(client(), userChat('Tell me about French wine.'), h)).status).toBe('SEMANTIC_HIT');
  }, T);
});

describe("a workspace's own embeddings target (a saved config named in its cache settings)", () => {
  const stack = useStack('sqlite');
  const otherKey = `gw-embed-ws2-${crypto.randomUUID()}`;
  let workspaceId = '';

  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack().gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': stack().gw.adminKey, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    workspaceId = (await addWorkspaceKey(stack().db.url, otherKey, 'new')).firstWorkspaceId;
  });
  beforeEach(() => {
    stack().mock.reset();
    cohere.requests.length = 0;
    cohereDown = false;
  });

  test('the workspace embeds with its saved config; another workspace keeps the lexical embedding', async () => {
    const { client } = stack();
    const saved = await admin('POST', '/configs', { name: 'Embeddings', slug: `embeddings-${RUN}`, workspace_id: workspaceId, config: cohereTarget('co-workspace-key') });
    expect(saved.status).toBe(201);
    const set = await admin('PUT', `/workspaces/${workspaceId}/cache-settings`, { embeddings_config: `embeddings-${RUN}` });
    expect(set.status).toBe(200);
    expect(set.body.embeddings_config).toBe(saved.body.id);

    const h = ns('workspace-target');
    expect((await chat(client(), userChat('What is the capital of France?'), h)).status).toBe('SEMANTIC_MISS');
    expect((await chat(client(), userChat('Which town hosts the French government?'), h)).status).toBe('SEMANTIC_HIT');
    expect(embedCalls()[0]?.headers.authorization).toBe('Bearer co-workspace-key');

    // The other workspace: no target of its own, none for the gateway: lexical, so a paraphrase is a miss there.
    const other = client({ 'x-gateway-api-key': otherKey });
    const before = embedCalls().length;
    expect((await chat(other, userChat('What is the capital of France?'), h)).status).toBe('SEMANTIC_MISS');
    expect((await chat(other, userChat('Which town hosts the French government?'), h)).status).toBe('SEMANTIC_MISS');
    expect(embedCalls().length).toBe(before);
  }, T);

  test('cleared: the workspace is back on the lexical embedding', async () => {
    const { client } = stack();
    expect((await admin('PUT', `/workspaces/${workspaceId}/cache-settings`, { embeddings_config: null })).status).toBe(200);
    const h = ns('workspace-cleared');
    expect((await chat(client(), userChat('What is the capital of France?'), h)).status).toBe('SEMANTIC_MISS');
    expect((await chat(client(), userChat('Which town hosts the French government?'), h)).status).toBe('SEMANTIC_MISS');
    expect(embedCalls()).toHaveLength(0);
  }, T);
});
