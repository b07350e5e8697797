// End to end: the real gateway process in front of the local OpenAI mock, called with the official `openai` SDK,
// on SQLite and on MariaDB. First-class endpoints (chat, completions, embeddings, moderations, streaming or not),
// provider selection (headers, configs: single, fallback, loadbalance, provider D scoping), /health, /metrics and
// the 401 answers.

import { beforeEach, describe, expect, test } from 'bun:test';
import OpenAI, { APIError } from 'openai';
import { fixtures as fx } from '../mocks/openai-server.ts';
import { E2E_DIALECTS, freePort } from '../helpers/e2e-database.ts';
import { useStack } from '../helpers/e2e-stack.ts';

const T = 20_000;

/** INTERFACE.md: the body of every error the gateway itself produces. */
function expectGatewayErrorBody(body: unknown): void {
  expect(Object.keys(body as object)).toEqual(['error']);
  const error = (body as { error: Record<string, unknown> }).error;
  expect(Object.keys(error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(error.message).toBeString();
  expect(error.type).toBeString();
  expect(error.code === null || typeof error.code === 'string').toBe(true);
  expect(error.param === null || typeof error.param === 'string').toBe(true);
}

describe.each(E2E_DIALECTS)('gateway calls through the OpenAI SDK (%s)', (dialect) => {
  const stack = useStack(dialect);
  beforeEach(() => stack().mock.reset());

  // ---------------------------------------------------------------------------------------------- chat
  test('chat completion: content, usage, model and the gateway response headers', async () => {
    const { mock, client, providerKey } = stack();
    const traceId = `trace-${crypto.randomUUID()}`;
    const { data, response } = await client({ 'x-gateway-trace-id': traceId })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello there' }] })
      .withResponse();

    expect(response.status).toBe(200);
    expect(data.object).toBe('chat.completion');
    expect(data.model).toBe('gpt-4o-mini');
    expect(data.choices).toHaveLength(1);
    expect(data.choices[0]!.message.content).toBe('You said: hello there');
    expect(data.choices[0]!.finish_reason).toBe('stop');
    expect(data.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });

    expect(response.headers.get('x-gateway-trace-id')).toBe(traceId);
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('config');
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('0');
    expect(response.headers.get('x-gateway-cache-status')).toBe('DISABLED');

    // provider + Authorization + custom host: the call reached the mock at the path under the custom host.
    expect(mock.requests).toHaveLength(1);
    const rec = mock.requests[0]!;
    expect(rec.method).toBe('POST');
    expect(rec.path).toBe('/v1/chat/completions');
    expect(rec.headers.authorization).toBe(`Bearer ${providerKey}`);
    expect(rec.json).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello there' }] });
  }, T);

  test('a generated trace id when the client sends none: a UUIDv7, later calls sorting after earlier ones', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { response } = await stack().client().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).withResponse();
      ids.push(response.headers.get('x-gateway-trace-id') ?? '');
      await Bun.sleep(2);
    }
    // Time-ordered, so that the request log's trace_id index grows at its end (core/sdk/src/trace-id.ts).
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(3);
  }, T);

  test('chat streaming: every chunk in order, a clean end, and each chunk forwarded as it arrives', async () => {
    const { mock, client } = stack();
    const GAP = 200;
    mock.setBehavior({ kind: 'default', chunkDelayMs: GAP });
    const started = performance.now();
    const { data: stream, response } = await client()
      .chat.completions.create({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'one two' }] })
      .withResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(response.headers.get('x-gateway-trace-id')).toBeString();

    const chunks: { at: number; chunk: OpenAI.Chat.Completions.ChatCompletionChunk }[] = [];
    for await (const chunk of stream) chunks.push({ at: performance.now() - started, chunk });

    // The mock streams: role, one chunk per word ("You", "said:", "one", "two"), finish, usage.
    expect(chunks.length).toBeGreaterThanOrEqual(5);
    const text = chunks.map((c) => c.chunk.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe('You said: one two');
    expect(chunks[0]!.chunk.choices[0]!.delta.role).toBe('assistant');
    expect(new Set(chunks.map((c) => c.chunk.id)).size).toBe(1);
    expect(chunks.every((c) => c.chunk.object === 'chat.completion.chunk' && c.chunk.model === 'gpt-4o-mini')).toBe(true);
    const finish = chunks.findIndex((c) => c.chunk.choices[0]?.finish_reason === 'stop');
    expect(finish).toBeGreaterThan(0);
    const last = chunks.at(-1)!.chunk;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 });

    // Forwarded as produced: the first chunk came (n-1) gaps before the last one was even written by the mock.
    const spread = chunks.at(-1)!.at - chunks[0]!.at;
    expect(spread).toBeGreaterThanOrEqual((chunks.length - 1) * GAP - 150);
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.at - chunks[i - 1]!.at).toBeGreaterThan(GAP / 2);
  }, T);

  // ---------------------------------------------------------------------------------------------- completions
  test('text completion, not streamed', async () => {
    const { mock, client } = stack();
    const { data, response } = await client().completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test', max_tokens: 7 }).withResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(data.object).toBe('text_completion');
    expect(data.model).toBe('gpt-3.5-turbo-instruct');
    expect(data.choices[0]!.text).toBeString();
    expect(data.choices[0]!.text.length).toBeGreaterThan(0);
    expect(data.usage!.total_tokens).toBe(data.usage!.prompt_tokens + data.usage!.completion_tokens);
    expect(mock.requests[0]!.path).toBe('/v1/completions');
    expect(mock.requests[0]!.json).toEqual({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test', max_tokens: 7 });
  }, T);

  test('text completion, streamed', async () => {
    const { mock, client } = stack();
    const stream = await client().completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test', stream: true });
    const parts: OpenAI.Completions.Completion[] = [];
    for await (const chunk of stream) parts.push(chunk);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.every((p) => p.object === 'text_completion')).toBe(true);
    const text = parts.map((p) => p.choices[0]?.text ?? '').join('');
    // The same answer, whole, as the mock gives it unstreamed.
    const direct = (await (await fetch(`${mock.url}/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
      body: JSON.stringify({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test' }),
    })).json()) as OpenAI.Completions.Completion;
    expect(text).toBe(direct.choices[0]!.text);
    expect(parts.some((p) => p.choices[0]?.finish_reason)).toBe(true);
  }, T);

  // ---------------------------------------------------------------------------------------------- embeddings, moderations
  test('embeddings (the SDK asks for base64 and decodes it)', async () => {
    const { mock, client } = stack();
    const { data, response } = await client().embeddings.create({ model: 'text-embedding-3-small', input: ['hello world', 'goodbye'] }).withResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(data.object).toBe('list');
    expect(data.model).toBe('text-embedding-3-small');
    expect(data.data.map((d) => d.index)).toEqual([0, 1]);
    expect(data.data[0]!.embedding).toHaveLength(1536);
    const expected = fx.embeddingVector('text-embedding-3-small', 'hello world', 1536);
    expect(data.data[0]!.embedding.slice(0, 8)).toEqual(Array.from(expected.slice(0, 8)));
    expect(data.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(mock.requests[0]!.path).toBe('/v1/embeddings');
  }, T);

  test('moderations', async () => {
    const { mock, client } = stack();
    const { data, response } = await client().moderations.create({ model: 'omni-moderation-latest', input: ['a quiet walk in the park', 'I will kill you'] }).withResponse();
    expect(response.status).toBe(200);
    expect(data.model).toBe('omni-moderation-latest');
    expect(data.id).toStartWith('modr-');
    expect(data.results).toHaveLength(2);
    for (const r of data.results) {
      expect(typeof r.flagged).toBe('boolean');
      expect(Object.keys(r.categories)).toContain('violence');
      expect(typeof r.category_scores.violence).toBe('number');
    }
    expect(data.results[0]!.flagged).toBe(false);
    expect(data.results[1]!.flagged).toBe(true);
    expect(mock.requests[0]!.path).toBe('/v1/moderations');
  }, T);

  // ---------------------------------------------------------------------------------------------- provider selection
  test('a config with one target: its api_key and custom_host are used', async () => {
    const { mock, client } = stack();
    const config = { provider: 'openai', api_key: 'sk-from-config', custom_host: mock.url };
    const c = client({ 'x-gateway-config': JSON.stringify(config), 'x-gateway-provider': null, 'x-gateway-custom-host': null });
    const { data, response } = await c.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'via config' }] }).withResponse();
    expect(data.choices[0]!.message.content).toBe('You said: via config');
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(mock.requests).toHaveLength(1);
    expect(mock.requests[0]!.headers.authorization).toBe('Bearer sk-from-config');
  }, T);

  test('fallback: a refused first target, the answer from the second, and its index in the header', async () => {
    const { mock, client } = stack();
    const closed = await freePort();
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: 'sk-first', custom_host: `http://127.0.0.1:${closed}/v1` },
        { provider: 'openai', api_key: 'sk-second', custom_host: mock.url },
      ],
    };
    const c = client({ 'x-gateway-config': JSON.stringify(config), 'x-gateway-provider': null, 'x-gateway-custom-host': null });
    const { data, response } = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'fall back' }] }).withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0]!.message.content).toBe('You said: fall back');
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(mock.requests).toHaveLength(1);
    expect(mock.requests[0]!.headers.authorization).toBe('Bearer sk-second');
  }, T);

  test('fallback on a provider error status: the second target answers', async () => {
    const { mock, client } = stack();
    mock.enqueue({ kind: 'error', status: 503 });
    const config = {
      strategy: { mode: 'fallback', on_status_codes: [503] },
      targets: [
        { provider: 'openai', api_key: 'sk-first', custom_host: mock.url },
        { provider: 'openai', api_key: 'sk-second', custom_host: mock.url },
      ],
    };
    const c = client({ 'x-gateway-config': JSON.stringify(config), 'x-gateway-provider': null, 'x-gateway-custom-host': null });
    const { data, response } = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'again' }] }).withResponse();
    expect(data.choices[0]!.message.content).toBe('You said: again');
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    expect(mock.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-first', 'Bearer sk-second']);
  }, T);

  test('loadbalance: both targets get traffic, and the header names the one that answered', async () => {
    const { mock, client } = stack();
    const config = {
      strategy: { mode: 'loadbalance' },
      targets: [
        { provider: 'openai', api_key: 'sk-lb-0', custom_host: mock.url, weight: 1 },
        { provider: 'openai', api_key: 'sk-lb-1', custom_host: mock.url, weight: 1 },
      ],
    };
    const c = client({ 'x-gateway-config': JSON.stringify(config), 'x-gateway-provider': null, 'x-gateway-custom-host': null });
    const seen = new Set<string>();
    for (let i = 0; i < 16; i++) {
      const { response } = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `n${i}` }] }).withResponse();
      const index = response.headers.get('x-gateway-last-used-option-index');
      expect(index).toMatch(/^config\.targets\[[01]\]$/);
      const rec = mock.requests.find((r) => (r.json as { messages: { content: string }[] }).messages[0]!.content === `n${i}`)!;
      expect(rec.headers.authorization).toBe(`Bearer sk-lb-${index!.at(-2)}`);
      seen.add(index!);
    }
    expect([...seen].sort()).toEqual(['config.targets[0]', 'config.targets[1]']); // 2 · 2^-16 to fail by chance
  }, T);

  test('svcD_organization and svcD_project reach the provider as openai-organization / openai-project', async () => {
    const { mock, client } = stack();
    const config = { provider: 'openai', api_key: 'sk-scoped', custom_host: mock.url, svcD_organization: 'org-e2e-123', svcD_project: 'proj_e2e_456' };
    const c = client({ 'x-gateway-config': JSON.stringify(config), 'x-gateway-provider': null, 'x-gateway-custom-host': null });
    await c.embeddings.create({ model: 'text-embedding-3-small', input: 'scoped' });
    const rec = mock.requests[0]!;
    expect(rec.headers['openai-organization']).toBe('org-e2e-123');
    expect(rec.headers['openai-project']).toBe('proj_e2e_456');
    expect(rec.headers.authorization).toBe('Bearer sk-scoped');
  }, T);

  test('an invalid config: 400 invalid_config listing every violation, nothing sent to the provider', async () => {
    const { mock, client } = stack();
    const config = { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai' }], bogus_field: 1 };
    const err = await client({ 'x-gateway-config': JSON.stringify(config) })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    const body = { error: (err as APIError).error };
    expectGatewayErrorBody(body);
    expect(body.error).toMatchObject({ type: 'invalid_config' });
    const message = (body.error as { message: string }).message;
    expect(message).toContain('bogus_field');
    expect(message).toContain('api_key');
    expect(mock.requests).toHaveLength(0);
  }, T);

  test('a provider error is relayed with its status and message, and the provider slug', async () => {
    const { mock, gw, headers } = stack();
    mock.enqueue({ kind: 'error', status: 429, message: 'Slow down, e2e.' });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers(), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(429);
    const body = (await res.json()) as { error: { message: string }; provider?: string };
    expect(body.error.message).toContain('Slow down, e2e.');
    expect(body.provider).toBe('openai');
    expect(res.headers.get('x-gateway-trace-id')).toBeString();
  }, T);

  // ---------------------------------------------------------------------------------------------- health, metrics
  test('/health answers {"status":"ok"}', async () => {
    const res = await fetch(`${stack().gw.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  }, T);

  test('/metrics: request counter with endpoint/provider/status labels and the duration histograms', async () => {
    const { gw, client } = stack();
    await client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'count me' }] });
    const res = await fetch(`${gw.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('# TYPE gateway_requests_total counter');
    const counter = /^gateway_requests_total\{([^}]*)\} (\d+(?:\.\d+)?)$/gm;
    const series = [...text.matchAll(counter)].map((m) => ({ labels: m[1]!, value: Number(m[2]) }));
    const ok = series.find((s) => /provider="openai"/.test(s.labels) && /status="200"/.test(s.labels) && /endpoint="[^"]+"/.test(s.labels));
    expect(ok).toBeDefined();
    expect(ok!.value).toBeGreaterThanOrEqual(1);
    expect(text).toContain('# TYPE gateway_request_duration_seconds histogram');
    expect(text).toMatch(/^gateway_request_duration_seconds_bucket\{[^}]*le="\+Inf"\} \d+$/m);
    expect(text).toMatch(/^gateway_request_duration_seconds_count\{[^}]*provider="openai"[^}]*\} [1-9]\d*$/m);
    expect(text).toMatch(/^gateway_upstream_duration_seconds_bucket\{[^}]*provider="openai"[^}]*\} \d+$/m);
  }, T);

  // ---------------------------------------------------------------------------------------------- 401
  test('401 without x-gateway-api-key, in the INTERFACE.md error shape, and nothing reaches the provider', async () => {
    const { mock, gw, client, headers } = stack();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers({ 'x-gateway-api-key': null }), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toContain('application/json');
    expectGatewayErrorBody(await res.json());

    const err = await client({ 'x-gateway-api-key': null })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as APIError).status).toBe(401);
    expect(mock.requests).toHaveLength(0);
  }, T);

  test('401 with an unknown x-gateway-api-key (also on a passthrough path)', async () => {
    const { mock, gw, client, headers } = stack();
    const err = await client({ 'x-gateway-api-key': 'gw-unknown-key-0000' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(401);
    expectGatewayErrorBody({ error: (err as APIError).error });

    const res = await fetch(`${gw.url}/v1/files`, { headers: headers({ 'x-gateway-api-key': 'gw-unknown-key-0000' }) });
    expect(res.status).toBe(401);
    const body = await res.json();
    expectGatewayErrorBody(body);
    expect(JSON.stringify(body)).not.toContain('gw-unknown-key-0000');
    expect(mock.requests).toHaveLength(0);
  }, T);
});
