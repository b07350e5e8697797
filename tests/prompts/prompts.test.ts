/**
 * Prompts end to end (issue #18), on SQLite and MariaDB, through the real gateway process over HTTP: the store
 * (create, versions, patch, publish, @latest, @n), partials, render (sections, inverted sections, partials, no HTML
 * escaping, hyperparameters at the root, missing variables), completions through the openai SDK (whole and streamed,
 * to a virtual key, a @slug integration and a saved config, with the prompt in the request log), text templates, and
 * a prompt of another workspace refused.
 */
import { describe, expect, test } from 'bun:test';
import type OpenAI from 'openai';
import { E2E_DIALECTS, type Row } from '../helpers/e2e-database.ts';
import { type E2EStack, useStack } from '../helpers/e2e-stack.ts';

type Json = Record<string, unknown>;
interface Answer<T = Json> {
  status: number;
  body: T;
  headers: Headers;
}
type ErrorBody = { error: { message: string; type: string; code: string; param: string | null } };

async function call<T = Json>(s: E2EStack, method: string, path: string, body?: unknown, key = s.gw.adminKey, extra: Record<string, string> = {}): Promise<Answer<T>> {
  const res = await fetch(`${s.gw.url}/v1${path}`, {
    method,
    headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...extra },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T, headers: res.headers };
}

/** An SDK client that sends only the gateway key: a prompt names its own target. */
function promptClient(s: E2EStack, key = s.gw.adminKey, extra: Record<string, string | null> = {}): OpenAI {
  return s.client({ 'x-gateway-provider': null, 'x-gateway-custom-host': null, 'x-gateway-api-key': key, ...extra });
}

/** Polls the request log for a trace id until its row is written (the log is flushed in batches). */
async function logRow(s: E2EStack, traceId: string): Promise<Row> {
  for (let i = 0; i < 200; i++) {
    const rows = await s.db.query(`SELECT * FROM request_logs WHERE trace_id = '${traceId}'`);
    if (rows[0]) return rows[0];
    await Bun.sleep(50);
  }
  throw new Error(`no request_logs row for ${traceId}`);
}

const SUPPORT = [
  { role: 'system', content: 'You help {{company}} customers. {{#vip}}Treat {{name}} as a VIP.{{/vip}}{{^vip}}Be kind.{{/vip}} {{> signature}}' },
  { role: 'user', content: [{ type: 'text', text: 'Question: {{question}}' }] },
];

for (const dialect of E2E_DIALECTS) {
  describe(`prompts [${dialect}]`, () => {
    const stack = useStack(dialect);
    let vk = '';
    let promptId = '';
    const slug = `support-${crypto.randomUUID().slice(0, 8)}`;

    test('a virtual key and a partial to use', async () => {
      const s = stack();
      const key = await call(s, 'POST', '/virtual-keys', { name: 'Prompt target', provider: 'openai', key: 'sk-prompt-target-0001', configurations: { custom_host: s.mock.url } });
      expect(key.status).toBe(201);
      vk = String(key.body.slug);
      const partial = await call(s, 'POST', '/prompts/partials', { name: 'Signature', slug: 'signature', string: '-- {{agent}} of {{company}}' });
      expect(partial.status).toBe(201);
      expect(partial.body).toMatchObject({ object: 'prompt_partial', slug: 'signature', version: 1 });
    });

    test('create answers 201 {id, slug, version_id, version}; the first version is published', async () => {
      const s = stack();
      const created = await call(s, 'POST', '/prompts', {
        name: 'Support bot',
        slug,
        messages: SUPPORT,
        parameters: { model: 'gpt-4o-mini', temperature: 0.2, max_tokens: 50 },
        virtual_key: vk,
        template_metadata: { team: 'support' },
        version_description: 'first',
      });
      expect(created.status).toBe(201);
      expect(Object.keys(created.body).sort()).toEqual(['id', 'object', 'slug', 'version', 'version_id']);
      expect(created.body).toMatchObject({ object: 'prompt', slug, version: 1 });
      promptId = String(created.body.id);
      const got = await call(s, 'GET', `/prompts/${slug}`);
      expect(got.body).toMatchObject({ id: promptId, published_version: 1, latest_version: 1, version: 1, model: 'gpt-4o-mini', virtual_key: vk, template_metadata: { team: 'support' }, messages: SUPPORT });
    });

    test('render: variables, sections, inverted sections, partials, no HTML escaping, saved parameters', async () => {
      const s = stack();
      const variables = { company: 'A&B <Ltd>', name: 'Ann', vip: true, question: 'Is 1 < 2?', agent: 'Bo' };
      const res = await call<{ success: boolean; data: Json }>(s, 'POST', `/prompts/${promptId}/render`, { variables });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          model: 'gpt-4o-mini',
          temperature: 0.2,
          max_tokens: 50,
          messages: [
            { role: 'system', content: 'You help A&B <Ltd> customers. Treat Ann as a VIP. -- Bo of A&B <Ltd>' },
            { role: 'user', content: [{ type: 'text', text: 'Question: Is 1 < 2?' }] },
          ],
        },
      });
      // Without vip (a section's variable is not required) the inverted section shows, and `name` is not needed.
      const plain = await call<{ data: { messages: { content: unknown }[] } }>(s, 'POST', `/prompts/${slug}/render`, { variables: { company: 'C', question: 'q', agent: 'D' } });
      expect(plain.status).toBe(200);
      expect(plain.body.data.messages[0]?.content).toBe('You help C customers. Be kind. -- D of C');
    });

    test('render: a missing required variable is a 400 naming it (a partial\'s too); variables are required', async () => {
      const s = stack();
      const missing = await call<ErrorBody>(s, 'POST', `/prompts/${promptId}/render`, { variables: { company: 'C', question: 'q' } });
      expect(missing.status).toBe(400);
      expect(missing.body.error.message).toContain('agent');
      expect(missing.body.error.param).toBe('variables.agent');
      const none = await call<ErrorBody>(s, 'POST', `/prompts/${promptId}/render`, { temperature: 1 });
      expect({ status: none.status, param: none.body.error.param }).toEqual({ status: 400, param: 'variables' });
      // The template makes the messages: they are not a hyperparameter.
      const messages = await call<ErrorBody>(s, 'POST', `/prompts/${promptId}/render`, { variables: {}, messages: [] });
      expect({ status: messages.status, param: messages.body.error.param }).toEqual({ status: 400, param: 'messages' });
    });

    test('render: hyperparameters at the root override the saved ones; max_completion_tokens is preferred to max_tokens', async () => {
      const s = stack();
      const variables = { company: 'C', question: 'q', agent: 'D' };
      const a = await call<{ data: Json }>(s, 'POST', `/prompts/${promptId}/render`, { variables, temperature: 0.9, seed: 7, max_completion_tokens: 20 });
      expect(a.body.data).toMatchObject({ temperature: 0.9, seed: 7, max_completion_tokens: 20 });
      expect(a.body.data.max_tokens).toBeUndefined();
      const b = await call<{ data: Json }>(s, 'POST', `/prompts/${promptId}/render`, { variables, max_tokens: 30 });
      expect(b.body.data).toMatchObject({ max_tokens: 30 });
      expect(b.body.data.max_completion_tokens).toBeUndefined();
    });

    test('versions: PUT adds one, patch keeps what it leaves out, makeDefault publishes, @latest and @n select', async () => {
      const s = stack();
      const variables = { company: 'C', question: 'q', agent: 'D' };
      // Version 2: a whole new version (no patch): what it leaves out is gone.
      const v2 = await call(s, 'PUT', `/prompts/${promptId}`, { string: 'Say hi to {{company}}', model: 'gpt-4o', virtual_key: vk, version_description: 'text' });
      expect(v2.status).toBe(200);
      expect(v2.body).toMatchObject({ latest_version: 2, published_version: 1, version: 2, kind: 'text', parameters: { model: 'gpt-4o' } });
      // Version 3: patch — new parameters; the template, model and target come from version 2.
      const v3 = await call(s, 'PUT', `/prompts/${slug}`, { patch: true, parameters: { temperature: 0.5 } });
      expect(v3.status).toBe(200);
      expect(v3.body).toMatchObject({ latest_version: 3, version: 3, string: 'Say hi to {{company}}', parameters: { model: 'gpt-4o', temperature: 0.5 }, virtual_key: vk });

      const versions = await call<{ total: number; data: { version: number; is_published: boolean }[] }>(s, 'GET', `/prompts/${promptId}/versions`);
      expect(versions.body.total).toBe(3);
      expect(versions.body.data.map((v) => [v.version, v.is_published])).toEqual([[3, false], [2, false], [1, true]]);
      expect((await call(s, 'GET', `/prompts/${promptId}/versions/2`)).body).toMatchObject({ version: 2, version_description: 'text' });

      const render = async (ref: string) => (await call<{ data: Json }>(s, 'POST', `/prompts/${ref}/render`, { variables })).body.data;
      expect((await render(slug)).messages).toBeDefined(); // published: version 1, chat
      expect(await render(`${slug}@latest`)).toEqual({ model: 'gpt-4o', temperature: 0.5, prompt: 'Say hi to C' });
      expect(await render(`${promptId}@2`)).toEqual({ model: 'gpt-4o', prompt: 'Say hi to C' });
      expect(await render(`${slug}@3`)).toEqual(await render(`${slug}@latest`));
      expect((await call(s, 'POST', `/prompts/${promptId}@9/render`, { variables })).status).toBe(404);
      expect((await call(s, 'POST', `/prompts/${promptId}@x/render`, { variables })).status).toBe(400);

      expect((await call(s, 'PUT', `/prompts/${promptId}/makeDefault`, { version: 3 })).status).toBe(200);
      expect(await render(slug)).toEqual({ model: 'gpt-4o', temperature: 0.5, prompt: 'Say hi to C' });
      expect((await call(s, 'PUT', `/prompts/${promptId}/makeDefault`, { version: 1 })).status).toBe(200);
      expect((await call(s, 'GET', `/prompts?name=${encodeURIComponent('SUPPORT B')}`)).body).toMatchObject({ total: 1 });
    });

    test('completions through the openai SDK: {status, headers, body}, the rendered body sent, the prompt and the metadata in the request log', async () => {
      const s = stack();
      const traceId = `prompt-${crypto.randomUUID()}`;
      const client = promptClient(s, s.gw.adminKey, { 'x-gateway-trace-id': traceId, 'x-gateway-metadata': JSON.stringify({ team: 'support', ticket: 7 }) });
      const answer = await client.post<{ status: string; headers: Record<string, string>; body: OpenAI.ChatCompletion }>(`/prompts/${slug}@1/completions`, {
        body: { variables: { company: 'C', question: 'what now?', agent: 'D' }, temperature: 1.1 },
      });
      expect(answer.status).toBe('success');
      expect(answer.headers['x-gateway-provider']).toBe('openai');
      expect(answer.body.object).toBe('chat.completion');
      expect(answer.body.choices[0]?.message.content).toBe('You said: Question: what now?');
      const sent = s.mock.requests.at(-1);
      expect(sent?.headers.authorization).toBe('Bearer sk-prompt-target-0001');
      expect(sent?.json).toMatchObject({ model: 'gpt-4o-mini', temperature: 1.1, max_tokens: 50, messages: [{ role: 'system', content: 'You help C customers. Be kind. -- D of C' }, {}] });
      const row = await logRow(s, traceId);
      expect({ prompt_id: row.prompt_id, prompt_version: Number(row.prompt_version), status: Number(row.status) }).toEqual({ prompt_id: promptId, prompt_version: 1, status: 200 });
      expect(typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata).toEqual({ team: 'support', ticket: '7' });
      const badMetadata = await call<ErrorBody>(s, 'POST', `/prompts/${slug}/completions`, { variables: {} }, s.gw.adminKey, { 'x-gateway-metadata': '[1]' });
      expect({ status: badMetadata.status, param: badMetadata.body.error.param }).toEqual({ status: 400, param: 'x-gateway-metadata' });
    });

    test('completions streamed through the openai SDK, as /chat/completions streams', async () => {
      const s = stack();
      const stream = await promptClient(s).post<unknown>(`/prompts/${promptId}/completions`, {
        body: { variables: { company: 'C', question: 'stream it', agent: 'D' }, stream: true },
        stream: true,
      }) as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>;
      let text = '';
      let chunks = 0;
      for await (const chunk of stream) {
        chunks++;
        text += chunk.choices[0]?.delta?.content ?? '';
      }
      expect(chunks).toBeGreaterThan(1);
      expect(text).toBe('You said: Question: stream it');
      expect(s.mock.requests.at(-1)?.json).toMatchObject({ stream: true });
    });

    test('a client that leaves a completion ends the provider call: while waiting for a whole answer, and mid-stream', async () => {
      const s = stack();
      const variables = { company: 'C', question: 'one two three four five six seven eight', agent: 'D' };
      const leave = async (stream: boolean, behavior: Parameters<typeof s.mock.enqueue>[0]) => {
        s.mock.enqueue(behavior);
        const before = s.mock.requests.length;
        const aborter = new AbortController();
        const answer = fetch(`${s.gw.url}/v1/prompts/${promptId}/completions`, {
          method: 'POST',
          headers: { 'x-gateway-api-key': s.gw.adminKey, 'content-type': 'application/json' },
          body: JSON.stringify({ variables, stream }),
          signal: aborter.signal,
        });
        if (stream) await (await answer).body?.getReader().read();
        else {
          await s.mock.waitForRequests(before + 1, 5_000);
          answer.catch(() => {});
        }
        const upstream = s.mock.requests[before];
        aborter.abort();
        // A hang guard, not a timing assertion: the provider would otherwise answer seconds later.
        for (let i = 0; i < 100 && upstream?.abortedAt === undefined; i++) await Bun.sleep(50);
        return upstream?.abortedAt;
      };
      expect(await leave(false, { kind: 'default', delayMs: 5_000 })).toBeDefined();
      expect(await leave(true, { kind: 'default', chunkDelayMs: 300 })).toBeDefined();
    }, 30_000);

    test('a text template runs as a text completion; a provider error comes back as the gateway error', async () => {
      const s = stack();
      const text = await call(s, 'POST', '/prompts', { name: 'Completer', string: 'Complete: {{start}}', model: 'gpt-3.5-turbo-instruct', virtual_key: vk });
      expect(text.status).toBe(201);
      const answer = await call<{ status: string; body: { object: string; choices: { text: string }[] } }>(s, 'POST', `/prompts/${text.body.id}/completions`, { variables: { start: 'once upon' } });
      expect(answer.status).toBe(200);
      expect(answer.body.body.object).toBe('text_completion');
      expect(s.mock.requests.at(-1)?.json).toMatchObject({ prompt: 'Complete: once upon' });
      s.mock.enqueue({ kind: 'error', status: 429 });
      const failed = await call<ErrorBody>(s, 'POST', `/prompts/${text.body.id}/completions`, { variables: { start: 'x' } });
      expect(failed.status).toBe(429);
      expect(failed.body.error).toBeDefined();
    });

    test('targets: a @slug integration and a saved config', async () => {
      const s = stack();
      const integration = `pi-${crypto.randomUUID().slice(0, 8)}`;
      const made = await call(s, 'POST', '/integrations', {
        name: 'Prompt integration',
        slug: integration,
        ai_provider_id: 'openai',
        key: 'sk-prompt-integration-02',
        configurations: { custom_host: s.mock.url },
        workspaces: [{ id: 'default' }],
      });
      expect(made.status).toBe(201);
      const config = await call(s, 'POST', '/configs', { name: 'Prompt config', config: { virtual_key: vk, override_params: { seed: 42 } } });
      expect(config.status).toBe(201);
      const byProvider = await call(s, 'POST', '/prompts', { name: 'Via integration', string: '[{"role":"user","content":"Hi {{who}}"}]', model: 'gpt-4o-mini', provider: `@${integration}` });
      const byConfig = await call(s, 'POST', '/prompts', { name: 'Via config', messages: [{ role: 'user', content: 'Hey {{who}}' }], model: 'gpt-4o-mini', config: String(config.body.slug) });
      expect([byProvider.status, byConfig.status]).toEqual([201, 201]);

      expect((await call(s, 'POST', `/prompts/${byProvider.body.id}/completions`, { variables: { who: 'Quotes "in" JSON' } })).status).toBe(200);
      expect(s.mock.requests.at(-1)?.headers.authorization).toBe('Bearer sk-prompt-integration-02');
      expect(s.mock.requests.at(-1)?.json).toMatchObject({ messages: [{ role: 'user', content: 'Hi Quotes "in" JSON' }] });

      expect((await call(s, 'POST', `/prompts/${byConfig.body.id}/completions`, { variables: { who: 'you' } })).status).toBe(200);
      expect(s.mock.requests.at(-1)?.json).toMatchObject({ seed: 42, messages: [{ role: 'user', content: 'Hey you' }] });
    });

    test('the pipeline applies to completions: a saved config\'s cache answers the second identical run', async () => {
      const s = stack();
      const config = await call(s, 'POST', '/configs', { name: 'Cached prompt config', config: { virtual_key: vk, cache: { mode: 'simple', max_age: 60 } } });
      expect(config.status).toBe(201);
      const prompt = await call(s, 'POST', '/prompts', { name: 'Cached', messages: [{ role: 'user', content: 'Cache {{n}}' }], model: 'gpt-4o-mini', config: String(config.body.id) });
      const before = s.mock.requests.length;
      const run = () => call<{ headers: Record<string, string>; body: { choices: { message: { content: string } }[] } }>(s, 'POST', `/prompts/${prompt.body.id}/completions`, { variables: { n: crypto.randomUUID() } });
      const variables = { n: `same-${crypto.randomUUID()}` };
      const first = await call<{ headers: Record<string, string> }>(s, 'POST', `/prompts/${prompt.body.id}/completions`, { variables });
      const second = await call<{ headers: Record<string, string> }>(s, 'POST', `/prompts/${prompt.body.id}/completions`, { variables });
      expect([first.body.headers['x-gateway-cache-status'], second.body.headers['x-gateway-cache-status']]).toEqual(['MISS', 'HIT']);
      expect(second.headers.get('x-gateway-cache-status')).toBe('HIT');
      expect(s.mock.requests.length).toBe(before + 1);
      expect((await run()).body.headers['x-gateway-cache-status']).toBe('MISS');
    });

    test("the pipeline applies to completions: a saved config's input guardrail judges the rendered prompt", async () => {
      const s = stack();
      const config = await call(s, 'POST', '/configs', {
        name: 'Guarded prompt config',
        config: { virtual_key: vk, input_guardrails: [{ deny: true, 'default.contains': { words: ['forbidden'], operator: 'none' } }] },
      });
      expect(config.status).toBe(201);
      const prompt = await call(s, 'POST', '/prompts', { name: 'Guarded', messages: [{ role: 'user', content: 'Tell me about {{topic}}' }], model: 'gpt-4o-mini', config: String(config.body.id) });
      const before = s.mock.requests.length;
      const denied = await call<ErrorBody>(s, 'POST', `/prompts/${prompt.body.id}/completions`, { variables: { topic: 'forbidden things' } });
      expect(denied.status).toBeGreaterThanOrEqual(400);
      expect(denied.body.error.type).toBe('guardrail_denied');
      expect(s.mock.requests.length).toBe(before);
      expect((await call(s, 'POST', `/prompts/${prompt.body.id}/completions`, { variables: { topic: 'cats' } })).status).toBe(200);
    });

    test("a prompt of another workspace is refused: 403 by id, unknown by slug; its partials are not this workspace's", async () => {
      const s = stack();
      const ws = await call(s, 'POST', '/workspaces', { name: 'Other', slug: `other-${crypto.randomUUID().slice(0, 8)}` });
      expect(ws.status).toBe(201);
      const key = await call<{ key: string }>(s, 'POST', '/api-keys', {
        name: 'other',
        type: 'workspace-service',
        workspace_id: ws.body.id,
        scopes: ['prompts.read', 'prompts.write', 'completions.write'],
      });
      const other = key.body.key;
      expect((await call<ErrorBody>(s, 'POST', `/prompts/${promptId}/render`, { variables: {} }, other)).status).toBe(403);
      expect((await call<ErrorBody>(s, 'POST', `/prompts/${promptId}/completions`, { variables: {} }, other)).status).toBe(403);
      expect((await call(s, 'POST', `/prompts/${slug}/completions`, { variables: {} }, other)).status).toBe(404);
      expect((await call(s, 'GET', `/prompts/${promptId}`, undefined, other)).status).toBe(404);
      expect((await call(s, 'PUT', `/prompts/${promptId}`, { name: 'taken over' }, other)).status).toBe(404);
      const listed = await call<{ data: { id: string }[] }>(s, 'GET', '/prompts', undefined, other);
      expect(listed.body.data.some((p) => p.id === promptId)).toBe(false);
      // In the other workspace, {{> signature}} finds no partial: a 400 naming it, not a silent blank.
      const own = await call(s, 'POST', '/prompts', { name: 'Own', string: 'Hi {{> signature}}', model: 'gpt-4o-mini', virtual_key: vk }, other);
      expect(own.status).toBe(201);
      const render = await call<ErrorBody>(s, 'POST', `/prompts/${own.body.id}/render`, { variables: {} }, other);
      expect(render.status).toBe(400);
      expect(render.body.error.message).toContain('signature');
    });

    test('bad bodies: every problem in one 400, nothing written', async () => {
      const s = stack();
      const before = (await call<{ total: number }>(s, 'GET', '/prompts')).body.total;
      const bad = await call<ErrorBody>(s, 'POST', '/prompts', { name: 'Bad', messages: [{ role: 'user', content: '{{#open}} never closed' }], provider: 'openai' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('messages[0].content');
      expect(bad.body.error.message).toContain('provider');
      expect((await call(s, 'POST', '/prompts', { name: 'No target', string: 'x' })).status).toBe(400);
      expect((await call(s, 'POST', '/prompts', { name: 'Reserved', slug: 'partials', string: 'x', virtual_key: vk })).status).toBe(400);
      expect((await call<{ total: number }>(s, 'GET', '/prompts')).body.total).toBe(before);
    });

    test('partials: versions and publishing change what prompts include', async () => {
      const s = stack();
      const v2 = await call(s, 'PUT', '/prompts/partials/signature', { string: '~ {{agent}}' });
      expect(v2.body).toMatchObject({ latest_version: 2, published_version: 1 });
      const variables = { company: 'C', question: 'q', agent: 'D' };
      const content = async () => ((await call<{ data: { messages: { content: string }[] } }>(s, 'POST', `/prompts/${promptId}/render`, { variables })).body.data.messages[0]?.content);
      expect(await content()).toEndWith('-- D of C');
      expect((await call(s, 'PUT', '/prompts/partials/signature/makeDefault', { version: 2 })).status).toBe(200);
      expect(await content()).toEndWith('~ D');
      const versions = await call<{ total: number }>(s, 'GET', '/prompts/partials/signature/versions');
      expect(versions.body.total).toBe(2);
      expect((await call(s, 'GET', '/prompts/partials/signature@1')).body).toMatchObject({ version: 1, string: '-- {{agent}} of {{company}}' });
    });
  });
}
