/**
 * `prompt_id` in a config (issue #18, item 4), on SQLite and MariaDB through the real gateway process: a chat call
 * whose config names a prompt sends the prompt rendered with the body's `variables` and its hyperparameters over the
 * saved ones (no messages needed), the config routing it; `@n` on targets; the request log names the prompt; a body
 * without messages is still refused when no prompt is named; mismatches are 400s.
 */
import { describe, expect, test } from 'bun:test';
import { E2E_DIALECTS, type Row } from '../helpers/e2e-database.ts';
import { type E2EStack, useStack } from '../helpers/e2e-stack.ts';

type Json = Record<string, unknown>;

async function call(s: E2EStack, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.gw.url}/v1${path}`, {
    method,
    headers: { 'x-gateway-api-key': s.gw.adminKey, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
}

async function logRow(s: E2EStack, traceId: string): Promise<Row> {
  for (let i = 0; i < 200; i++) {
    const rows = await s.db.query(`SELECT * FROM request_logs WHERE trace_id = '${traceId}'`);
    if (rows[0]) return rows[0];
    await Bun.sleep(50);
  }
  throw new Error(`no request_logs row for ${traceId}`);
}

for (const dialect of E2E_DIALECTS) {
  describe(`prompt_id in a config [${dialect}]`, () => {
    const stack = useStack(dialect);
    const slug = `greeter-${crypto.randomUUID().slice(0, 8)}`;
    let vk = '';
    let promptId = '';

    test('a config naming a prompt sends it rendered; root hyperparameters override; the log names it', async () => {
      const s = stack();
      const key = await call(s, 'POST', '/virtual-keys', { name: 'Config prompt target', provider: 'openai', key: 'sk-config-prompt-0001', configurations: { custom_host: s.mock.url } });
      vk = String(key.body.slug);
      const created = await call(s, 'POST', '/prompts', {
        name: 'Greeter',
        slug,
        messages: [
          { role: 'system', content: 'Greet {{name}}{{#formal}} formally{{/formal}}.' },
          { role: 'user', content: 'Hello from {{place}}' },
        ],
        parameters: { model: 'gpt-4o-mini', temperature: 0.2 },
        virtual_key: vk,
      });
      expect(created.status).toBe(201);
      promptId = String(created.body.id);

      const traceId = `config-prompt-${crypto.randomUUID()}`;
      // Through the openai SDK: a body of variables and hyperparameters (no messages) on /chat/completions.
      const client = s.client({ 'x-gateway-provider': null, 'x-gateway-custom-host': null, 'x-gateway-config': JSON.stringify({ prompt_id: slug, virtual_key: vk }), 'x-gateway-trace-id': traceId });
      const answer = await client.post<{ object: string; choices: { message: { content: string } }[] }>('/chat/completions', {
        body: { variables: { name: 'Ann', formal: true, place: 'Oslo' }, temperature: 0.9 },
      });
      expect(answer.object).toBe('chat.completion');
      expect(answer.choices[0]?.message.content).toBe('You said: Hello from Oslo');
      const sent = s.mock.requests.at(-1);
      expect(sent?.headers.authorization).toBe('Bearer sk-config-prompt-0001');
      expect(sent?.json).toEqual({
        model: 'gpt-4o-mini',
        temperature: 0.9,
        messages: [
          { role: 'system', content: 'Greet Ann formally.' },
          { role: 'user', content: 'Hello from Oslo' },
        ],
      });
      const row = await logRow(s, traceId);
      expect({ prompt_id: row.prompt_id, prompt_version: Number(row.prompt_version) }).toEqual({ prompt_id: promptId, prompt_version: 1 });
    });

    test('on targets, with @n: a saved config whose fallback targets name the prompt at version 2', async () => {
      const s = stack();
      expect((await call(s, 'PUT', `/prompts/${promptId}`, { patch: true, messages: [{ role: 'user', content: 'Version two for {{name}}' }] })).status).toBe(200);
      const saved = await call(s, 'POST', '/configs', {
        name: 'Prompt fallback',
        config: { strategy: { mode: 'fallback' }, targets: [{ virtual_key: vk, prompt_id: `${slug}@2` }, { virtual_key: vk, prompt_id: `${slug}@2` }] },
      });
      expect(saved.status).toBe(201);
      const res = await call(s, 'POST', '/chat/completions', { variables: { name: 'Bo' } }, { 'x-gateway-config': String(saved.body.slug) });
      expect(res.status).toBe(200);
      expect(s.mock.requests.at(-1)?.json).toMatchObject({ messages: [{ role: 'user', content: 'Version two for Bo' }] });
      // Without a suffix the published version (1) still answers.
      await call(s, 'POST', '/chat/completions', { variables: { name: 'Cy', place: 'Rome' } }, { 'x-gateway-config': JSON.stringify({ prompt_id: promptId, virtual_key: vk }) });
      expect(s.mock.requests.at(-1)?.json).toMatchObject({ messages: [{ role: 'system', content: 'Greet Cy.' }, {}] });
    });

    test('refusals: a missing variable, different prompts on targets, a text prompt on chat; no prompt means messages are required', async () => {
      const s = stack();
      const config = (c: Json) => ({ 'x-gateway-config': JSON.stringify(c) });
      const missing = await call(s, 'POST', '/chat/completions', { variables: { name: 'x' } }, config({ prompt_id: slug, virtual_key: vk }));
      expect(missing.status).toBe(400);
      expect(JSON.stringify(missing.body)).toContain('place');
      const text = await call(s, 'POST', '/prompts', { name: 'Text one', string: 'Complete {{x}}', model: 'gpt-3.5-turbo-instruct', virtual_key: vk });
      const two = await call(s, 'POST', '/chat/completions', { variables: {} }, config({ strategy: { mode: 'fallback' }, targets: [{ virtual_key: vk, prompt_id: slug }, { virtual_key: vk, prompt_id: String(text.body.id) }] }));
      expect(two.status).toBe(400);
      const wrongKind = await call(s, 'POST', '/chat/completions', { variables: { x: 'y' } }, config({ prompt_id: String(text.body.id), virtual_key: vk }));
      expect(wrongKind.status).toBe(400);
      expect(JSON.stringify(wrongKind.body)).toContain('/completions');
      const asText = await call(s, 'POST', '/completions', { variables: { x: 'y' } }, config({ prompt_id: String(text.body.id), virtual_key: vk }));
      expect(asText.status).toBe(200);
      expect(s.mock.requests.at(-1)?.json).toMatchObject({ prompt: 'Complete y', model: 'gpt-3.5-turbo-instruct' });
      // The config routes the call (with the provider headers where it is silent); the prompt's own target is for
      // /prompts/:id/completions, so a config of only prompt_id and no provider header has nowhere to send it.
      const viaHeader = await call(s, 'POST', '/chat/completions', { variables: { name: 'H', place: 'y' } }, { ...config({ prompt_id: slug }), 'x-gateway-provider': 'openai', 'x-gateway-custom-host': s.mock.url, authorization: 'Bearer sk-header-000001' });
      expect(viaHeader.status).toBe(200);
      expect(s.mock.requests.at(-1)?.headers.authorization).toBe('Bearer sk-header-000001');
      const alone = await call(s, 'POST', '/chat/completions', { variables: { name: 'x', place: 'y' } }, config({ prompt_id: slug }));
      expect(alone.status).toBe(400);
      expect(JSON.stringify(alone.body)).toContain('No provider');
      const noPrompt = await call(s, 'POST', '/chat/completions', { variables: { name: 'x' }, model: 'gpt-4o-mini' }, config({ virtual_key: vk }));
      expect(noPrompt.status).toBe(400);
      expect(JSON.stringify(noPrompt.body)).toContain('messages');
    });
  });
}
