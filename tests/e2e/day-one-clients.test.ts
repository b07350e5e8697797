// End to end, on SQLite and on MariaDB: a client that can be given nothing but a base URL and a key (the openai SDK
// with no extra header) reaches the workspace's stored provider by `@slug/model`, by a model alias (of a provider and
// model, and of a saved config) and by the workspace's default config; its model picker fills from GET /v1/models;
// the gateway key never reaches a provider. Precedence: `x-gateway-api-key` beside `Authorization` keeps today's
// meaning (Authorization is the provider key); without it, Authorization is the gateway key and a provider key comes
// only from stored credentials or a config. Then the workspace's `defaults.metadata` in its log rows, and token counts
// of streams whose client did not ask for usage (a chat stream, a passthrough stream longer than the logged body).

import { describe, expect, test } from 'bun:test';
import OpenAI, { AuthenticationError, BadRequestError } from 'openai';
import { E2E_DIALECTS, jsonColumn, type Row } from '../helpers/e2e-database.ts';
import { useStack } from '../helpers/e2e-stack.ts';

const T = 20_000;
const STORED_KEY = 'sk-day-one-stored-0001';

describe.each(E2E_DIALECTS)('day one: a base URL and a key are enough (%s)', (dialect) => {
  const stack = useStack(dialect, { env: { GATEWAY_ENCRYPTION_KEY: 'day-one-encryption-key' } });
  const run = crypto.randomUUID().slice(0, 8);
  const slug = `day1-${run}`;
  const trace = (name: string) => `day1-${run}-${name}`;

  /** The SDK as a chat front-end configures it: a base URL and the gateway key, nothing else. */
  const bare = (traceName?: string) => {
    const { gw } = stack();
    return new OpenAI({
      baseURL: `${gw.url}/v1`,
      apiKey: gw.adminKey,
      maxRetries: 0,
      timeout: 15_000,
      // Only so the log rows can be found; it does not route.
      defaultHeaders: traceName ? { 'x-gateway-trace-id': trace(traceName) } : undefined,
    });
  };
  const admin = async (method: string, path: string, body?: unknown) => {
    const { gw } = stack();
    const res = await fetch(`${gw.url}/v1${path}`, {
      method,
      headers: { 'x-gateway-api-key': gw.adminKey, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
  };
  const ask = (model: string, content = 'hello day one') => ({ model, messages: [{ role: 'user' as const, content }] });
  const lastUpstream = () => stack().mock.requests.at(-1)!;

  test('setup: a stored provider with two models, through the administration API', async () => {
    const { mock } = stack();
    const created = await admin('POST', '/integrations', {
      name: 'Day one',
      slug,
      ai_provider_id: 'openai',
      key: STORED_KEY,
      configurations: { custom_host: mock.url },
      workspaces: [{ id: 'default' }],
    });
    expect(created.status).toBe(201);
    expect((await admin('PUT', `/integrations/${slug}/integration-models`, { models: [{ slug: 'gpt-4o-mini' }, { slug: 'gpt-4o' }] })).status).toBe(200);
  }, T);

  test('without a model that routes and without a default config: 400 naming every way to say it', async () => {
    const error = await bare().chat.completions.create(ask('gpt-4o-mini')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).message).toContain('@<provider>/<model>');
    expect((error as BadRequestError).message).toContain('default config');
  }, T);

  test('@slug/model: the stored provider answers with the stored key; the gateway key goes nowhere upstream', async () => {
    const { gw } = stack();
    const answer = await bare('slug').chat.completions.create(ask(`@${slug}/gpt-4o-mini`));
    expect(answer.choices[0]!.message.content).toBe('You said: hello day one');
    const upstream = lastUpstream();
    expect(upstream.headers.authorization).toBe(`Bearer ${STORED_KEY}`);
    expect(upstream.json).toMatchObject({ model: 'gpt-4o-mini' });
    expect(JSON.stringify(upstream.headers)).not.toContain(gw.adminKey);
  }, T);

  test('a model alias of a provider and model, and one of a saved config', async () => {
    expect((await admin('POST', '/model-aliases', { alias: 'fast', provider: `@${slug}`, model: 'gpt-4o-mini' })).status).toBe(201);
    const answer = await bare().chat.completions.create(ask('fast'));
    expect(answer.choices[0]!.message.content).toBe('You said: hello day one');
    expect(lastUpstream().json).toMatchObject({ model: 'gpt-4o-mini' });
    expect(lastUpstream().headers.authorization).toBe(`Bearer ${STORED_KEY}`);

    const config = await admin('POST', '/configs', { name: 'Smart', config: { provider: `@${slug}`, retry: { attempts: 1 } } });
    expect(config.status).toBe(201);
    const byConfig = await admin('POST', '/model-aliases', { alias: 'smart', config_id: config.body.id, model: 'gpt-4o' });
    expect(byConfig.status).toBe(201);
    await bare().chat.completions.create(ask('smart'));
    expect(lastUpstream().json).toMatchObject({ model: 'gpt-4o' });

    // An alias is routing, checked when written: one target, a known config of the workspace, a provider as @slug.
    expect((await admin('POST', '/model-aliases', { alias: 'fast', provider: `@${slug}`, model: 'gpt-4o' })).status).toBe(409);
    expect((await admin('POST', '/model-aliases', { alias: 'both', provider: `@${slug}`, model: 'x', config_id: config.body.id })).status).toBe(400);
    expect((await admin('POST', '/model-aliases', { alias: 'nomodel', provider: `@${slug}` })).status).toBe(400);
    expect((await admin('POST', '/model-aliases', { alias: '@looks/like-a-slug', provider: `@${slug}`, model: 'x' })).status).toBe(400);
    expect((await admin('POST', '/model-aliases', { alias: 'ghost', config_id: crypto.randomUUID() })).status).toBe(400);
    // A config an alias names is not deleted from under it.
    expect((await admin('DELETE', `/configs/${String(config.body.id)}`)).status).toBe(409);

    // Changed and deleted: the next call sees it (the in-memory set reloads before the admin call answers).
    expect((await admin('PUT', '/model-aliases/fast', { model: 'gpt-4o' })).status).toBe(200);
    await bare().chat.completions.create(ask('fast'));
    expect(lastUpstream().json).toMatchObject({ model: 'gpt-4o' });
    expect((await admin('DELETE', '/model-aliases/fast')).status).toBe(204);
    expect(await bare().chat.completions.create(ask('fast')).catch((e: unknown) => e)).toBeInstanceOf(BadRequestError);
    expect((await admin('POST', '/model-aliases', { alias: 'fast', provider: `@${slug}`, model: 'gpt-4o-mini' })).status).toBe(201);
  }, T);

  test('the default config applies to a call that names no route; an alias and @slug still win', async () => {
    const config = await admin('POST', '/configs', {
      name: 'House default',
      is_default: true,
      config: { provider: `@${slug}`, override_params: { temperature: 0.25 } },
    });
    expect(config.status).toBe(201);
    const answer = await bare('default').chat.completions.create(ask('gpt-4o-mini', 'by default'));
    expect(answer.choices[0]!.message.content).toBe('You said: by default');
    expect(lastUpstream().json).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.25 });
    expect(lastUpstream().headers.authorization).toBe(`Bearer ${STORED_KEY}`);

    await bare().chat.completions.create(ask('fast'));
    expect((lastUpstream().json as Record<string, unknown>).temperature).toBeUndefined();
    await bare().chat.completions.create(ask(`@${slug}/gpt-4o`));
    expect(lastUpstream().json).toMatchObject({ model: 'gpt-4o' });
    expect((lastUpstream().json as Record<string, unknown>).temperature).toBeUndefined();
  }, T);

  test('GET /v1/models fills a model picker: the stored provider\'s models and the aliases, in OpenAI\'s shape', async () => {
    const ids: string[] = [];
    for await (const model of bare().models.list()) {
      expect(model.object).toBe('model');
      expect(typeof model.created).toBe('number');
      expect(model.created).toBeGreaterThan(1_600_000_000);
      expect(typeof model.owned_by).toBe('string');
      ids.push(model.id);
    }
    expect(ids).toEqual(expect.arrayContaining([`@${slug}/gpt-4o`, `@${slug}/gpt-4o-mini`, 'fast', 'smart']));
    const { gw } = stack();
    const raw = (await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.adminKey}` } })).json()) as Record<string, unknown>;
    expect(raw.object).toBe('list');
    // Aliases are searched by name, and belong to no provider or integration.
    const search = (await (await fetch(`${gw.url}/v1/models?search=smar`, { headers: { authorization: `Bearer ${gw.adminKey}` } })).json()) as { data: { id: string }[] };
    expect(search.data.map((m) => m.id)).toEqual(['smart']);
    const byProvider = (await (await fetch(`${gw.url}/v1/models?provider=openai`, { headers: { authorization: `Bearer ${gw.adminKey}` } })).json()) as { data: { id: string }[] };
    expect(byProvider.data.map((m) => m.id).sort()).toEqual([`@${slug}/gpt-4o`, `@${slug}/gpt-4o-mini`]);
  }, T);

  test('precedence of the two keys', async () => {
    const { gw, mock, providerKey } = stack();
    // x-gateway-api-key present: Authorization is the provider key, as before.
    const classic = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': gw.adminKey,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': mock.url,
        authorization: `Bearer ${providerKey}`,
      },
      body: JSON.stringify(ask('gpt-4o-mini')),
    });
    expect(classic.status).toBe(200);
    expect(lastUpstream().headers.authorization).toBe(`Bearer ${providerKey}`);

    // Bearer is the gateway key and a provider is named by header: no provider key is taken from Authorization.
    const before = mock.requests.length;
    const bearerOnly = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url, authorization: `Bearer ${gw.adminKey}` },
      body: JSON.stringify(ask('gpt-4o-mini')),
    });
    await bearerOnly.text();
    const sent = mock.requests.slice(before);
    expect(sent.length).toBe(1);
    expect(sent[0]!.headers.authorization ?? '').not.toContain(gw.adminKey);

    // Both headers and a stored provider: the stored key goes upstream, not Authorization's.
    const both = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gw.adminKey, authorization: `Bearer ${providerKey}` },
      body: JSON.stringify(ask(`@${slug}/gpt-4o-mini`)),
    });
    expect(both.status).toBe(200);
    expect(lastUpstream().headers.authorization).toBe(`Bearer ${STORED_KEY}`);

    // An unknown Bearer value without x-gateway-api-key is an unknown gateway key: 401, as an unknown x-gateway-api-key.
    const unknown = await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-not-a-gateway-key', maxRetries: 0 }).chat.completions.create(ask('fast')).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(AuthenticationError);
    const unknownHeader = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': 'sk-not-a-gateway-key' },
      body: JSON.stringify(ask('fast')),
    });
    expect(unknownHeader.status).toBe(401);
    expect(((await unknownHeader.json()) as { error: unknown }).error).toEqual((unknown as AuthenticationError).error);
  }, T);

  test('calls logged with the workspace\'s defaults.metadata under their own; streams without include_usage counted', async () => {
    const { gw, mock } = stack();
    const put = await admin('PUT', '/workspaces/default', { defaults: { metadata: { team: 'search', env: 'prod' } } });
    expect(put.status).toBe(200);
    await bare('meta').chat.completions.create(ask('fast', 'with defaults'), { headers: { 'x-gateway-metadata': JSON.stringify({ env: 'dev' }) } });

    // A chat stream whose client did not ask for usage.
    const stream = await bare('stream').chat.completions.create({ ...ask('fast', 'stream without usage please'), stream: true });
    let streamed = '';
    for await (const chunk of stream) {
      expect(chunk.usage ?? null).toBeNull();
      streamed += chunk.choices[0]?.delta?.content ?? '';
    }
    expect(streamed).toBe('You said: stream without usage please');

    // OpenAI-compatible vendors that document stream_options.include_usage are asked for it too, and it is hidden.
    for (const vendor of ['groq', 'deepseek', 'dashscope']) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': gw.adminKey,
          'x-gateway-provider': vendor,
          'x-gateway-custom-host': mock.url,
          authorization: `Bearer ${stack().providerKey}`,
          'x-gateway-trace-id': trace(vendor),
        },
        body: JSON.stringify({ ...ask('gpt-4o-mini', `stream from ${vendor}`), stream: true }),
      });
      const body = await res.text();
      expect(res.status).toBe(200);
      expect(body).not.toContain('"usage":{');
      expect(lastUpstream().json).toMatchObject({ stream_options: { include_usage: true } });
    }

    // A passthrough stream (Assistants run events) longer than the logged body: its usage comes at the very end.
    const filler = 'x'.repeat(2_000);
    const events = [
      { event: 'thread.run.created', data: { id: 'run_1', object: 'thread.run', status: 'queued', usage: null } },
      ...Array.from({ length: 60 }, (_, i) => ({
        event: 'thread.message.delta',
        data: { id: 'msg_1', object: 'thread.message.delta', delta: { content: [{ index: 0, type: 'text', text: { value: `${i}${filler}` } }] } },
      })),
      {
        event: 'thread.run.completed',
        data: { id: 'run_1', object: 'thread.run', status: 'completed', usage: { prompt_tokens: 37, completion_tokens: 1234, total_tokens: 1271 } },
      },
    ];
    mock.setBehavior({ kind: 'stream', frames: events });
    const passthrough = await fetch(`${gw.url}/v1/threads/thread_1/runs`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': gw.adminKey,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': mock.url,
        authorization: `Bearer ${stack().providerKey}`,
        'x-gateway-trace-id': trace('passthrough'),
      },
      body: JSON.stringify({ assistant_id: 'asst_1', stream: true }),
    });
    const text = await passthrough.text();
    expect(text.length).toBeGreaterThan(100_000);
    mock.setBehavior(null);

    // The rows are written by the time the process has stopped (it drains its log queue).
    await gw.stop();
    const rows = await stack().db.query('SELECT * FROM request_logs');
    const row = (name: string): Row => {
      const r = rows.find((x) => x.trace_id === trace(name));
      if (!r) throw new Error(`no row for ${name}`);
      return r;
    };
    expect(jsonColumn(row('meta').metadata)).toEqual({ team: 'search', env: 'dev' });
    expect(jsonColumn(row('slug').metadata) ?? {}).toEqual({});
    expect(Number(row('stream').prompt_tokens)).toBeGreaterThan(0);
    expect(Number(row('stream').completion_tokens)).toBeGreaterThan(0);
    expect([Number(row('passthrough').prompt_tokens), Number(row('passthrough').completion_tokens)]).toEqual([37, 1234]);
    for (const vendor of ['groq', 'deepseek', 'dashscope']) expect(Number(row(vendor).completion_tokens)).toBeGreaterThan(0);
  }, 40_000);
});
