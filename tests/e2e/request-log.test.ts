// End to end: the request log and graceful shutdown of the real gateway process, on SQLite and on MariaDB.
// A handful of calls (chat, streamed chat, embeddings, passthrough, a 400, a provider 500), then a slow call in
// flight when SIGTERM arrives: it still completes, the process exits 0, and afterwards the database holds one
// `request_logs` row per call with its details, and no secret anywhere (rows, other tables, process output).

import { describe, expect, test } from 'bun:test';
import type OpenAI from 'openai';
import { APIError, toFile } from 'openai';
import { E2E_DIALECTS, jsonColumn, type Row, rowsText } from '../helpers/e2e-database.ts';
import { useStack } from '../helpers/e2e-stack.ts';

const T = 20_000;

describe.each(E2E_DIALECTS)('request log and graceful shutdown (%s)', (dialect) => {
  // debug: the most the process ever prints, for the "no secret in the output" check
  const stack = useStack(dialect, { env: { LOG_LEVEL: 'debug' } });
  const run = crypto.randomUUID().slice(0, 8);
  const trace = (name: string) => `e2e-${run}-${name}`;
  /** trace id → what the test expects of its row */
  const sent = new Map<string, { status: number }>();
  /** usage the client was given, by call */
  const usage: Record<string, { prompt_tokens: number; completion_tokens?: number; total_tokens: number }> = {};
  let rows: Row[] = [];
  const row = (name: string): Row => {
    const r = rows.find((x) => x.trace_id === trace(name));
    if (!r) throw new Error(`no request_logs row for ${trace(name)}`);
    return r;
  };

  test('calls of every kind, including failures', async () => {
    const { mock, gw, client, headers, providerKey } = stack();
    const metadata = { team: 'e2e', user: 'alice' };

    // 1. chat, with metadata and span headers
    const chat = await client({
      'x-gateway-trace-id': trace('chat'),
      'x-gateway-span-id': 'span-1',
      'x-gateway-span-name': 'e2e span',
      'x-gateway-metadata': JSON.stringify(metadata),
    }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello log' }] });
    expect(chat.choices[0]!.message.content).toBe('You said: hello log');
    usage.chat = chat.usage!;
    sent.set(trace('chat'), { status: 200 });

    // 2. streamed chat with usage in the last chunk
    const stream = await client({ 'x-gateway-trace-id': trace('stream') }).chat.completions.create({
      model: 'gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'stream this please' }],
    });
    let streamed = '';
    for await (const chunk of stream) {
      streamed += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage.stream = chunk.usage;
    }
    expect(usage.stream).toBeDefined();
    expect(streamed).toBe('You said: stream this please');
    sent.set(trace('stream'), { status: 200 });

    // 3. embeddings, the provider key inside a config (the config must not be logged either)
    const config = { provider: 'openai', api_key: providerKey, custom_host: mock.url };
    const embedding = await client({ 'x-gateway-trace-id': trace('embed'), 'x-gateway-config': JSON.stringify(config), 'x-gateway-provider': null, 'x-gateway-custom-host': null })
      .embeddings.create({ model: 'text-embedding-3-small', input: 'log me' });
    usage.embed = embedding.usage;
    sent.set(trace('embed'), { status: 200 });

    // 4. passthrough GET with a query, 5. passthrough POST with a JSON body
    const models = await fetch(`${gw.url}/v1/models?limit=2`, { headers: headers({ 'x-gateway-trace-id': trace('proxy-get') }) });
    expect(models.status).toBe(200);
    await models.arrayBuffer();
    sent.set(trace('proxy-get'), { status: 200 });
    mock.enqueue({ kind: 'respond', status: 201, body: { id: 'asst_log', object: 'assistant', model: 'gpt-4o' } });
    const created = await fetch(`${gw.url}/v1/assistants`, {
      method: 'POST',
      headers: { ...headers({ 'x-gateway-trace-id': trace('proxy-post') }), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', name: 'log-assistant' }),
    });
    expect(created.status).toBe(201);
    await created.arrayBuffer();
    sent.set(trace('proxy-post'), { status: 201 });

    // 5b. a multipart upload through the SDK (passthrough)
    const file = await client({ 'x-gateway-trace-id': trace('upload') }).files.create({
      file: await toFile(new Uint8Array([0, 1, 2, 255, 254, 10, 13]), 'log.bin'),
      purpose: 'batch',
    });
    expect(file.bytes).toBe(7);
    sent.set(trace('upload'), { status: 200 });

    // 6. an invalid body (no messages): 400 from the gateway, the provider never called
    const before = mock.requests.length;
    const invalid = await client({ 'x-gateway-trace-id': trace('invalid') })
      .chat.completions.create({ model: 'gpt-4o-mini' } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(APIError);
    expect((invalid as APIError).status).toBe(400);
    sent.set(trace('invalid'), { status: 400 });

    // 7. malformed JSON: 400
    const malformed = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers({ 'x-gateway-trace-id': trace('malformed') }), 'content-type': 'application/json' },
      body: '{"model": "gpt-4o-mini", "messages": [',
    });
    expect(malformed.status).toBe(400);
    await malformed.arrayBuffer();
    sent.set(trace('malformed'), { status: 400 });
    expect(mock.requests.length).toBe(before);

    // 8. the provider fails with a 500
    mock.enqueue({ kind: 'error', status: 500, message: 'The e2e provider broke.' });
    const failed = await client({ 'x-gateway-trace-id': trace('provider-500') })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'break' }] })
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(APIError);
    expect((failed as APIError).status).toBe(500);
    expect((failed as APIError).message).toContain('The e2e provider broke.');
    sent.set(trace('provider-500'), { status: 500 });
  }, T);

  test('SIGTERM with a slow request and a stream in flight: both complete and the process exits 0', async () => {
    const { mock, gw, client } = stack();
    mock.setBehavior((req) => {
      const text = JSON.stringify(req.json ?? '');
      if (text.includes('take your time')) return { kind: 'default', delayMs: 1000 };
      if (text.includes('keep streaming')) return { kind: 'default', chunkDelayMs: 200 };
      return undefined;
    });
    const seen = mock.requests.length;
    const started = performance.now();
    const slow = client({ 'x-gateway-trace-id': trace('slow') })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'take your time' }] })
      .withResponse();
    const stream = await client({ 'x-gateway-trace-id': trace('slow-stream') }).chat.completions.create({
      model: 'gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'keep streaming' }],
    });
    await mock.waitForRequests(seen + 2, 5_000); // both calls are at the provider now
    const exit = gw.stop(); // SIGTERM, then wait for the process to end

    let streamed = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      streamed += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(streamed).toBe('You said: keep streaming');
    expect(finish).toBe('stop');
    sent.set(trace('slow-stream'), { status: 200 });

    const { data, response } = await slow;
    expect(response.status).toBe(200);
    expect(data.choices[0]!.message.content).toBe('You said: take your time');
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    sent.set(trace('slow'), { status: 200 });

    expect(await exit).toBe(0);
    expect(gw.output()).toContain('shutting down');
    // Nothing listens any more.
    expect(await fetch(`${gw.url}/health`).then(() => 'answered', () => 'refused')).toBe('refused');
  }, T);

  const tokens = (r: Row) => {
    const out: Record<string, number> = { prompt_tokens: Number(r.prompt_tokens), total_tokens: Number(r.total_tokens) };
    if (r.completion_tokens !== null) out.completion_tokens = Number(r.completion_tokens);
    return out;
  };
  /** The three counters of a usage object the client was given. */
  const pick = (u: object): Record<string, number> =>
    Object.fromEntries(Object.entries(u).filter(([k]) => ['prompt_tokens', 'completion_tokens', 'total_tokens'].includes(k)));

  test('request_logs: one row per call, with trace id, provider, model, endpoint, status, usage, metadata and bodies', async () => {
    const { db } = stack();
    rows = await db.query('SELECT * FROM request_logs');
    const ours = rows.filter((r) => String(r.trace_id).startsWith(`e2e-${run}-`));
    expect(ours.map((r) => r.trace_id).sort()).toEqual([...sent.keys()].sort());
    expect(rows).toHaveLength(sent.size); // nothing else was logged, and nothing twice
    for (const [id, want] of sent) expect({ id, status: Number(rows.find((r) => r.trace_id === id)!.status) }).toEqual({ id, status: want.status });

    const chat = row('chat');
    expect(chat).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', method: 'POST', span_id: 'span-1', span_name: 'e2e span' });
    expect(chat.endpoint).toBe('chatComplete');
    expect(String(chat.path)).toEndWith('/chat/completions');
    expect(usage.chat!.total_tokens).toBeGreaterThan(0);
    expect(tokens(chat)).toEqual(pick(usage.chat!));
    expect(jsonColumn(chat.metadata)).toEqual({ team: 'e2e', user: 'alice' });
    expect(JSON.parse(String(chat.request_body))).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello log' }] });
    expect(JSON.parse(String(chat.response_body)).choices[0].message.content).toBe('You said: hello log');
    expect(chat.workspace_id).toBeTruthy();
    expect(chat.api_key_id).toBeTruthy();
    expect(chat.target_index).toBe('config');
    expect(Number(chat.latency_ms)).toBeGreaterThanOrEqual(0);
    expect(chat.error_code).toBeNull();

    const stream = row('stream');
    expect(stream).toMatchObject({ provider: 'openai', model: 'gpt-4o', endpoint: 'chatComplete' });
    expect(tokens(stream)).toEqual(pick(usage.stream!));
    expect(String(stream.response_body)).toContain('data: [DONE]');
    expect(jsonColumn(stream.metadata) ?? {}).toEqual({});

    const embed = row('embed');
    expect(embed).toMatchObject({ provider: 'openai', model: 'text-embedding-3-small', endpoint: 'embed' });
    expect(tokens(embed)).toEqual(pick(usage.embed!));

    const get = row('proxy-get');
    // GET /v1/models is its own endpoint kind (a provider may translate its model list); openai passes it through.
    expect(get).toMatchObject({ provider: 'openai', endpoint: 'listModels', method: 'GET' });
    expect(String(get.path)).toEndWith('/models');
    expect(String(get.response_body)).toContain('"object": "list"');

    const post = row('proxy-post');
    expect(post).toMatchObject({ provider: 'openai', endpoint: 'proxy', method: 'POST' });
    expect(String(post.path)).toEndWith('/assistants');
    expect(JSON.parse(String(post.request_body))).toEqual({ model: 'gpt-4o', name: 'log-assistant' });
    expect(JSON.parse(String(post.response_body)).id).toBe('asst_log');

    const upload = row('upload');
    expect(upload).toMatchObject({ provider: 'openai', endpoint: 'proxy', method: 'POST' });
    expect(String(upload.path)).toEndWith('/files');
    expect(JSON.parse(String(upload.response_body))).toMatchObject({ object: 'file', filename: 'log.bin', bytes: 7 });

    const invalid = row('invalid');
    expect(invalid.endpoint).toBe('chatComplete');
    expect(invalid.error_code).toBeTruthy();
    expect(String(invalid.error_message)).toContain('messages');

    expect(row('malformed').error_code).toBeTruthy();

    const failed = row('provider-500');
    expect(failed).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', endpoint: 'chatComplete' });
    expect(failed.error_code).toBeTruthy();
    expect(String(failed.response_body)).toContain('The e2e provider broke.');

    const slow = row('slow');
    expect(Number(slow.latency_ms)).toBeGreaterThanOrEqual(950);
    expect(JSON.parse(String(slow.response_body)).choices[0].message.content).toBe('You said: take your time');
    const slowStream = row('slow-stream');
    expect(slowStream).toMatchObject({ provider: 'openai', endpoint: 'chatComplete', error_code: null });
    expect(String(slowStream.response_body)).toContain('data: [DONE]');
  }, T);

  test('neither the provider key nor the gateway key is stored or printed', async () => {
    const { db, gw, providerKey } = stack();
    expect(rows.length).toBeGreaterThan(0);
    const logged = rowsText(rows);
    expect(logged).not.toContain(providerKey);
    expect(logged).not.toContain(gw.adminKey);
    for (const table of await db.tables()) {
      const text = rowsText(await db.query(`SELECT * FROM ${table}`));
      expect({ table, provider: text.includes(providerKey), gateway: text.includes(gw.adminKey) }).toEqual({ table, provider: false, gateway: false });
    }
    const output = gw.output();
    expect(output).toContain('gateway listening');
    expect(output).not.toContain(providerKey);
    expect(output).not.toContain(gw.adminKey);
  }, T);
});
