/**
 * An attacker inside the organisation with a workspace-service key of workspace B who learned the ids of workspace
 * A's prompt and saved config: reading, rendering or running A's prompt (directly, or as a config's prompt_id) is
 * refused without the template or A's virtual key reaching anyone, and a model alias of B cannot name A's saved
 * config (by id or slug).
 */
import { describe, expect, test } from 'bun:test';
import { type Stack, uniqueSlug, useStack, workspaceWithKey } from '../stored-access/support.ts';

const SECRET = 'SECRET-TEMPLATE-OF-A';

async function call(s: Stack, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await s.gw.handle(
    new Request(`http://gateway/v1${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await res.text();
  return { status: res.status, text, json: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

describe('cross-workspace prompts and model aliases [sqlite]', () => {
  const stack = useStack('sqlite');

  test("B cannot read, render or run A's prompt, nor name it as a config's prompt_id", async () => {
    const s = stack();
    const a = await workspaceWithKey(s, ['completions.write']);
    const b = await workspaceWithKey(s, ['completions.write', 'prompts.read']);
    const vk = await s.admin<{ slug: string }>('POST', '/virtual-keys', {
      name: 'A key',
      provider: 'openai',
      key: 'sk-workspace-a-only-0001',
      workspace_id: a.id,
      configurations: { custom_host: s.mock.url },
    });
    expect(vk.status).toBe(201);
    const slug = uniqueSlug('a-prompt');
    const prompt = await s.admin<{ id: string }>('POST', '/prompts', {
      name: 'A prompt',
      slug,
      workspace_id: a.id,
      messages: [{ role: 'system', content: `${SECRET} {{x}}` }],
      parameters: { model: 'gpt-4o-mini' },
      virtual_key: vk.body.slug,
    });
    expect(prompt.status).toBe(201);
    const id = prompt.body.id;
    const before = s.mock.requests.length;

    for (const ref of [id, slug]) {
      const read = await call(s, b.key, 'GET', `/prompts/${ref}`);
      expect(read.status).toBe(404);
      const rendered = await call(s, b.key, 'POST', `/prompts/${ref}/render`, { variables: { x: '1' } });
      expect([403, 404]).toContain(rendered.status);
      expect(rendered.text).not.toContain(SECRET);
      const ran = await call(s, b.key, 'POST', `/prompts/${ref}/completions`, { variables: { x: '1' } });
      expect([403, 404]).toContain(ran.status);
      const config = JSON.stringify({ prompt_id: ref, provider: 'openai', custom_host: s.mock.url, api_key: 'sk-of-b' });
      const viaConfig = await call(s, b.key, 'POST', '/chat/completions', { variables: { x: '1' } }, { 'x-gateway-config': config });
      expect([400, 403, 404]).toContain(viaConfig.status);
      expect(viaConfig.text).not.toContain(SECRET);
    }
    expect(s.mock.requests.length).toBe(before);

    // A runs it: the template does reach the provider (the refusals above are not a broken prompt).
    const mine = await call(s, a.key, 'POST', `/prompts/${id}/completions`, { variables: { x: '1' } });
    expect(mine.status).toBe(200);
    expect(s.mock.requests.at(-1)?.body).toContain(SECRET);
  });

  test("a model alias of B cannot name A's saved config, by id or slug", async () => {
    const s = stack();
    const a = await workspaceWithKey(s, ['completions.write']);
    const b = await workspaceWithKey(s, ['configs.read', 'configs.write', 'completions.write']);
    const slug = uniqueSlug('a-config');
    const config = await s.admin<{ id: string }>('POST', '/configs', {
      name: 'A route',
      slug,
      workspace_id: a.id,
      config: { provider: 'openai', api_key: 'sk-workspace-a-config-0001', custom_host: s.mock.url },
    });
    expect(config.status).toBe(201);
    for (const ref of [config.body.id, slug]) {
      const alias = await call(s, b.key, 'POST', '/model-aliases', { alias: uniqueSlug('steal'), config_id: ref });
      expect(alias.status).toBe(400);
      expect((alias.json.error as { param?: string }).param).toBe('config_id');
    }
    // Named directly as B's x-gateway-config, it is not B's either.
    const before = s.mock.requests.length;
    const direct = await call(s, b.key, 'POST', '/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, { 'x-gateway-config': config.body.id });
    expect(direct.status).not.toBe(200);
    expect(s.mock.requests.length).toBe(before);
    // The same alias in A is accepted: the refusal is about the workspace.
    expect((await s.admin('POST', '/model-aliases', { alias: uniqueSlug('own'), config_id: config.body.id, workspace_id: a.id })).status).toBe(201);
  });
});
