/**
 * Who may read, write and run prompts, per workspace role and the security settings (SPEC.md defaults: members view
 * but do not write, managers view and write; workspace admins always): each setting switched in turn, on SQLite and
 * MariaDB, with workspace-user keys of an admin, a manager and a member. Running a prompt (completions) needs a role
 * only; render shows the template, so it follows the view setting.
 */
import { describe, expect, test } from 'bun:test';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type Stack, uniqueSlug, useStack } from '../stored-access/support.ts';

const SCOPES = ['prompts.read', 'prompts.write', 'prompts.delete', 'completions.write'];

async function userKey(s: Stack, role: 'admin' | 'manager' | 'member'): Promise<string> {
  const user = await s.admin<{ id: string }>('POST', '/users', { email: `${uniqueSlug(`prompt-${role}`)}@example.com`, role: 'member', workspaces: [{ id: s.defaultWorkspace, role }] });
  expect(user.status).toBe(201);
  const key = await s.admin<{ key: string }>('POST', '/api-keys', { name: `${role} key`, type: 'workspace-user', user_id: user.body.id, workspace_id: s.defaultWorkspace, scopes: SCOPES });
  expect(key.status).toBe(201);
  return key.body.key;
}

for (const dialect of E2E_DIALECTS) {
  describe(`prompt permissions by role and security settings [${dialect}]`, () => {
    const get = useStack(dialect);

    test('defaults, then each of membersWritePrompts, membersViewPrompts, managersWritePrompts, managersViewPrompts', async () => {
      const s = get();
      const vk = await s.admin<{ slug: string }>('POST', '/virtual-keys', { name: 'Prompt permissions', provider: 'openai', key: 'sk-prompt-perm-000001', configurations: { custom_host: s.mock.url } });
      expect(vk.status).toBe(201);
      const [admin, manager, member] = [await userKey(s, 'admin'), await userKey(s, 'manager'), await userKey(s, 'member')];
      const body = (name: string) => ({ name, messages: [{ role: 'user', content: 'Hi {{who}}' }], model: 'gpt-4o-mini', virtual_key: vk.body.slug });
      const create = async (key: string) => (await s.admin('POST', '/prompts', body(uniqueSlug('perm')), key)).status;
      const created = await s.admin<{ id: string }>('POST', '/prompts', body('Shared'));
      const id = created.body.id;
      const read = async (key: string) => (await s.admin('GET', `/prompts/${id}`, undefined, key)).status;
      const render = async (key: string) => (await s.admin('POST', `/prompts/${id}/render`, { variables: { who: 'x' } }, key)).status;
      const run = async (key: string) => (await s.admin('POST', `/prompts/${id}/completions`, { variables: { who: 'x' } }, key)).status;
      const update = async (key: string) => (await s.admin('PUT', `/prompts/${id}`, { patch: true, parameters: { temperature: 0.1 } }, key)).status;
      const listed = async (key: string) => (await s.admin<{ data: { id: string }[] }>('GET', '/prompts', undefined, key)).body.data.some((p) => p.id === id);
      const settings = async (change: Record<string, boolean | null>) => expect((await s.admin('PUT', '/settings/security', change)).status).toBe(200);

      // Defaults: members view and run but do not write; managers and admins do everything.
      expect([await read(member), await render(member), await run(member), await listed(member)]).toEqual([200, 200, 200, true]);
      expect([await create(member), await update(member), (await s.admin('PUT', `/prompts/${id}/makeDefault`, { version: 1 }, member)).status]).toEqual([403, 403, 403]);
      expect((await s.admin('POST', '/prompts/partials', { name: 'Members partial', slug: uniqueSlug('mp'), string: 'x' }, member)).status).toBe(403);
      expect([await create(manager), await update(manager), await create(admin), await update(admin)]).toEqual([201, 200, 201, 200]);

      await settings({ membersWritePrompts: true });
      expect([await create(member), await update(member)]).toEqual([201, 200]);

      await settings({ membersViewPrompts: false });
      expect([await read(member), await render(member), await listed(member)]).toEqual([403, 403, false]);
      expect(await run(member)).toBe(200); // running shows no template
      expect(await read(manager)).toBe(200);

      await settings({ managersWritePrompts: false, managersViewPrompts: false });
      expect([await create(manager), await update(manager), await read(manager), await render(manager)]).toEqual([403, 403, 403, 403]);
      expect([await create(admin), await read(admin), await render(admin)]).toEqual([201, 200, 200]);

      await settings({ membersWritePrompts: null, membersViewPrompts: null, managersWritePrompts: null, managersViewPrompts: null });
      expect([await read(member), await create(member), await create(manager)]).toEqual([200, 403, 201]);
    });
  });
}
