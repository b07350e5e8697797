// A workspace's response-cache settings over HTTP on SQLite and MariaDB: the embeddings target of the semantic cache
// (a saved config of the workspace, stored by id whether named by id or slug), who may read and change it, the 400s
// naming embeddings_config, the audit entry, and service `workspaceCacheSettings` answering the new value as soon as
// the PUT has answered — in this gateway, and promptly in another one sharing MariaDB and Redis.
import { describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type Json, type SettingsGateway, useGatewayPair, useSettingsGateway } from './settings-support.ts';
import { Services } from '@gateway/sdk';

const errorOf = (body: Json) => body.error as { message: string; param: string | null; code: string; type: string };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A saved config of the workspace (made with the bootstrap key); resolves to its id and slug. */
async function savedConfig(gw: SettingsGateway, workspaceId: string, slug = `embed-${crypto.randomUUID().slice(0, 8)}`): Promise<{ id: string; slug: string }> {
  const answer = await gw.call('POST', '/configs', {
    name: `Embeddings ${slug}`,
    slug,
    workspace_id: workspaceId,
    config: { provider: 'openai', api_key: 'sk-embeddings-test' },
  });
  expect(answer.status).toBe(201);
  return { id: String(answer.body.id), slug: String(answer.body.slug) };
}

const serviceOf = (gateway: Gateway) => gateway.service(Services.workspaceCacheSettings);

describe.each(E2E_DIALECTS)('workspace cache settings (%s)', (dialect) => {
  const gw = useSettingsGateway(dialect);

  test('GET: null until set, by workspace id or slug; 404 for a workspace that does not exist', async () => {
    const { call, gateway } = gw();
    const workspaceId = await gw().addWorkspace(`fresh-${crypto.randomUUID().slice(0, 8)}`);
    const answer = await call('GET', `/workspaces/${workspaceId}/cache-settings`);
    expect(answer).toEqual({
      status: 200,
      body: { object: 'workspace_cache_settings', workspace_id: workspaceId, embeddings_config: null, updated_at: null },
    });
    expect((await call('GET', '/workspaces/default/cache-settings')).body).toMatchObject({ workspace_id: gw().workspaceId, embeddings_config: null });
    expect((await call('GET', '/workspaces/no-such-workspace/cache-settings')).status).toBe(404);
    expect(serviceOf(gateway).embeddingsConfig(workspaceId)).toBeUndefined();
  });

  test('PUT by id and by slug stores the id; the service answers it as soon as the PUT has answered; null clears it', async () => {
    const { call, gateway } = gw();
    const service = serviceOf(gateway);
    const slug = `ws-${crypto.randomUUID().slice(0, 8)}`;
    const workspaceId = await gw().addWorkspace(slug);
    const first = await savedConfig(gw(), workspaceId);
    const second = await savedConfig(gw(), workspaceId);

    const byId = await call('PUT', `/workspaces/${workspaceId}/cache-settings`, { embeddings_config: first.id });
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ object: 'workspace_cache_settings', workspace_id: workspaceId, embeddings_config: first.id });
    expect(byId.body.updated_at).toMatch(ISO);
    expect(service.embeddingsConfig(workspaceId)).toBe(first.id);

    // By slug, and the workspace by its slug too: the id is stored.
    const bySlug = await call('PUT', `/workspaces/${slug}/cache-settings`, { embeddings_config: second.slug });
    expect(bySlug.status).toBe(200);
    expect(bySlug.body).toMatchObject({ workspace_id: workspaceId, embeddings_config: second.id });
    expect(service.embeddingsConfig(workspaceId)).toBe(second.id);
    expect((await call('GET', `/workspaces/${workspaceId}/cache-settings`)).body).toEqual(bySlug.body);
    // Another workspace is untouched.
    expect(service.embeddingsConfig(gw().workspaceId)).toBeUndefined();

    const cleared = await call('PUT', `/workspaces/${workspaceId}/cache-settings`, { embeddings_config: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ workspace_id: workspaceId, embeddings_config: null });
    expect(cleared.body.updated_at).toMatch(ISO);
    expect(service.embeddingsConfig(workspaceId)).toBeUndefined();
    expect((await call('GET', `/workspaces/${workspaceId}/cache-settings`)).body).toMatchObject({ embeddings_config: null });

    const audit = await call<{ data: Json[] }>('GET', `/audit-logs?resource=workspace_cache_settings&resource_id=${workspaceId}`);
    expect(audit.status).toBe(200);
    const changes = audit.body.data.map((e) => [(e.before as Json).embeddings_config, (e.after as Json).embeddings_config]);
    expect(changes.sort()).toEqual([[null, first.id], [first.id, second.id], [second.id, null]].sort());
    expect(audit.body.data.every((e) => e.action === 'update' && e.workspace_id === workspaceId)).toBe(true);
  });

  test('400 naming embeddings_config: unknown config, another workspace\'s config (by id or slug), bad bodies; nothing written', async () => {
    const { call, gateway } = gw();
    const workspaceId = await gw().addWorkspace(`mine-${crypto.randomUUID().slice(0, 8)}`);
    const other = await gw().addWorkspace(`theirs-${crypto.randomUUID().slice(0, 8)}`);
    const mine = await savedConfig(gw(), workspaceId);
    const theirs = await savedConfig(gw(), other);
    const path = `/workspaces/${workspaceId}/cache-settings`;
    expect((await call('PUT', path, { embeddings_config: mine.id })).status).toBe(200);

    for (const [what, body] of [
      ['unknown id', { embeddings_config: crypto.randomUUID() }],
      ['unknown slug', { embeddings_config: 'no-such-config' }],
      ["another workspace's config by id", { embeddings_config: theirs.id }],
      ["another workspace's config by slug", { embeddings_config: theirs.slug }],
      ['a number', { embeddings_config: 42 }],
      ['an empty string', { embeddings_config: '' }],
      ['no field', {}],
    ] as const) {
      const answer = await call('PUT', path, body);
      expect([what, answer.status, errorOf(answer.body).param]).toEqual([what, 400, 'embeddings_config']);
      expect(errorOf(answer.body)).toMatchObject({ message: expect.any(String), code: expect.any(String), type: expect.any(String) });
    }
    const extra = await call('PUT', path, { embeddings_config: mine.id, model: 'x' });
    expect([extra.status, errorOf(extra.body).param]).toEqual([400, 'model']);
    expect((await call('PUT', path, [mine.id])).status).toBe(400);

    expect(serviceOf(gateway).embeddingsConfig(workspaceId)).toBe(mine.id);
    expect((await call('GET', path)).body).toMatchObject({ embeddings_config: mine.id });
  });

  test('concurrent first PUTs of a workspace all answer 200; the stored value is one of them', async () => {
    const { call, gateway } = gw();
    const workspaceId = await gw().addWorkspace(`race-${crypto.randomUUID().slice(0, 8)}`);
    const targets = await Promise.all([1, 2, 3, 4, 5, 6].map(() => savedConfig(gw(), workspaceId)));
    const answers = await Promise.all(targets.map((t) => call('PUT', `/workspaces/${workspaceId}/cache-settings`, { embeddings_config: t.id })));
    expect(answers.map((a) => a.status)).toEqual(targets.map(() => 200));
    const stored = (await call('GET', `/workspaces/${workspaceId}/cache-settings`)).body.embeddings_config;
    expect(targets.map((t) => t.id)).toContain(stored as string);
    expect(serviceOf(gateway).embeddingsConfig(workspaceId)).toBe(stored as string);
  });

  test('who may call: any role in the workspace reads; workspace admins and organisation admins change; scopes', async () => {
    const { call, addWorkspace, addUser, addKey } = gw();
    const workspaceId = await addWorkspace(`roles-${crypto.randomUUID().slice(0, 8)}`);
    const other = await addWorkspace(`roles-other-${crypto.randomUUID().slice(0, 8)}`);
    const target = await savedConfig(gw(), workspaceId);
    const scopes = ['workspaces.read', 'workspaces.write'];
    const person = async (name: string, orgRole: 'admin' | 'member', memberships: Record<string, 'admin' | 'manager' | 'member'>) => {
      const userId = await addUser(`${name}-${crypto.randomUUID()}@x.test`, orgRole, memberships);
      const home = Object.keys(memberships)[0] ?? workspaceId;
      return (await addKey({ type: 'workspace-user', workspaceId: home, userId, scopes })).secret;
    };
    const member = await person('member', 'member', { [workspaceId]: 'member' });
    const manager = await person('manager', 'member', { [workspaceId]: 'manager' });
    const wsAdmin = await person('ws-admin', 'member', { [workspaceId]: 'admin' });
    const outsider = await person('outsider', 'member', { [other]: 'admin' });
    const orgAdmin = await person('org-admin', 'admin', {});
    const serviceKey = (await addKey({ type: 'workspace-service', workspaceId, scopes })).secret;
    const readOnly = (await addKey({ type: 'organisation-service', workspaceId: null, scopes: ['workspaces.read'] })).secret;

    const path = `/workspaces/${workspaceId}/cache-settings`;
    const put = (key: string, value: string | null = target.id) => call('PUT', path, { embeddings_config: value }, key);
    for (const [who, key] of [['member', member], ['manager', manager], ['ws admin', wsAdmin], ['org admin', orgAdmin], ['service key', serviceKey], ['read-only', readOnly]] as const)
      expect([who, (await call('GET', path, undefined, key)).status]).toEqual([who, 200]);
    expect((await call('GET', path, undefined, outsider)).status).toBe(404);

    expect((await put(member)).status).toBe(403);
    expect((await put(manager)).status).toBe(403);
    expect((await put(outsider)).status).toBe(404);
    expect((await put(readOnly)).status).toBe(403); // no workspaces.write
    expect((await put(wsAdmin)).body).toMatchObject({ embeddings_config: target.id });
    expect((await put(orgAdmin, null)).body).toMatchObject({ embeddings_config: null });
    expect((await put(serviceKey, target.slug)).body).toMatchObject({ embeddings_config: target.id });
  });

  test('an archived workspace: readable, not changeable (the 409 of the other workspace routes)', async () => {
    const { call } = gw();
    const workspaceId = await gw().addWorkspace(`archived-${crypto.randomUUID().slice(0, 8)}`);
    const target = await savedConfig(gw(), workspaceId);
    const path = `/workspaces/${workspaceId}/cache-settings`;
    expect((await call('PUT', path, { embeddings_config: target.id })).status).toBe(200);
    expect((await call('PUT', `/workspaces/${workspaceId}`, { status: 'archived' })).status).toBe(200);

    const refused = await call('PUT', path, { embeddings_config: null });
    expect(refused.status).toBe(409);
    expect(errorOf(refused.body)).toMatchObject({ message: 'The workspace is archived', param: 'workspace_id' });
    expect((await call('GET', path)).body).toMatchObject({ embeddings_config: target.id });
  });
});

// Two processes of a deployment on one MariaDB and one Redis: a PUT through one reaches the other's service
// promptly. SQLite is left out: one SQLite file is not shared by several gateways.
describe('workspace cache settings across gateways sharing MariaDB and Redis', () => {
  const pair = useGatewayPair();

  const call = async (gateway: Gateway, method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { 'x-gateway-api-key': TEST_ADMIN_KEY };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await gateway.handle(new Request(`http://gateway.test/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
    return { status: response.status, body: (await response.json()) as Json };
  };

  test('a PUT through one gateway reaches the service of the other within a second', async () => {
    const { a, b } = pair();
    const workspace = await call(a, 'GET', '/workspaces/default');
    const workspaceId = String(workspace.body.id);
    const created = await call(a, 'POST', '/configs', { name: 'Embeddings', workspace_id: workspaceId, config: { provider: 'openai', api_key: 'sk-x' } });
    expect(created.status).toBe(201);
    const configId = String(created.body.id);
    const [here, there] = [serviceOf(a), serviceOf(b)];
    expect(there.embeddingsConfig(workspaceId)).toBeUndefined();

    expect((await call(a, 'PUT', `/workspaces/${workspaceId}/cache-settings`, { embeddings_config: configId })).status).toBe(200);
    expect(here.embeddingsConfig(workspaceId)).toBe(configId);
    const until = async (want: string | undefined) => {
      const deadline = Date.now() + 1000;
      while (there.embeddingsConfig(workspaceId) !== want && Date.now() < deadline) await Bun.sleep(10);
      return there.embeddingsConfig(workspaceId);
    };
    expect(await until(configId)).toBe(configId);

    expect((await call(a, 'PUT', `/workspaces/${workspaceId}/cache-settings`, { embeddings_config: null })).status).toBe(200);
    expect(here.embeddingsConfig(workspaceId)).toBeUndefined();
    expect(await until(undefined)).toBeUndefined();
  });
});
