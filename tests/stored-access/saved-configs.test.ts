/**
 * Saved configs end to end, in-process over HTTP-shaped requests, on SQLite and on MariaDB: create (validated with
 * the config validator, nothing stored on a 400), `x-gateway-config: <id or slug>` reaching the local OpenAI mock
 * with the stored key, a new version redirecting the next request, old versions kept and readable, secrets masked
 * in answers and at rest and kept through a masked round trip, another workspace's key refused (403), unknown ids
 * the usual invalid_config, lists and filters, the default flag, and delete.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { addKey, addWorkspace, caller, chat, defaultWorkspaceId, organisationId } from '@gateway/admin-configs/testing';
import { type Database, Services } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { createE2EDatabase, type E2EDatabase, E2E_DIALECTS, rowsText } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

interface ConfigView {
  id: string;
  slug: string;
  name: string;
  workspace_id: string;
  organisation_id: string;
  is_default: boolean;
  version: number;
  current_version: number;
  config: Record<string, unknown>;
}
interface ListOf<T> {
  object: 'list';
  data: T[];
  total: number;
}
interface ErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
}

const KEY_ONE = 'sk-saved-config-key-one-0001';
const KEY_TWO = 'sk-saved-config-key-two-0002';

for (const dialect of E2E_DIALECTS) {
  describe(`saved configs [${dialect}]`, () => {
    let db: E2EDatabase;
    let gw: Gateway;
    let one: OpenAIMock;
    let two: OpenAIMock;
    let database: Database;
    let org: string;
    let defaultWs: string;
    let otherWs: string;
    /** Keys of the default workspace and of another one (workspace-service, configs.* and completions.write). */
    let defaultKey: string;
    let otherKey: string;

    const admin = (key = TEST_ADMIN_KEY) => caller((r) => gw.handle(r), key);
    const ask = (key: string, config: string, content = 'hello') => chat((r) => gw.handle(r), key, content, { 'x-gateway-config': config });
    const providerConfig = (mock: OpenAIMock, key: string) => ({ provider: 'openai', api_key: key, custom_host: mock.url });

    beforeAll(async () => {
      db = await createE2EDatabase(dialect);
      [one, two] = await Promise.all([startOpenAIMock({ apiKey: null }), startOpenAIMock({ apiKey: null })]);
      gw = await startInProcessGateway({ DATABASE_URL: db.url, GATEWAY_ENCRYPTION_KEY: 'saved-configs-test-encryption-key' });
      database = gw.service(Services.database);
      org = await organisationId(database);
      defaultWs = await defaultWorkspaceId(database, org);
      otherWs = await addWorkspace(database, org, `other-${crypto.randomUUID().slice(0, 8)}`);
      defaultKey = await addKey(database, { organisationId: org, workspaceId: defaultWs });
      otherKey = await addKey(database, { organisationId: org, workspaceId: otherWs });
    }, 60_000);
    afterAll(async () => {
      await gw?.close();
      await Promise.all([one?.stop(), two?.stop()]);
      await db?.drop();
    }, 30_000);

    test('an invalid config is refused with every violation by path, and nothing is stored', async () => {
      const before = await admin()<ListOf<ConfigView>>('GET', '/configs');
      const res = await admin()<ErrorBody>('POST', '/configs', {
        name: 'broken',
        config: { strategy: { mode: 'fallback' }, retry: { attempts: -1 }, cb_config: { failure_threshold: 1, cooldown_interval: 10 }, bogus: true },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.type).toBe('invalid_config');
      expect(res.body.error.param).toBe('config');
      for (const path of ['retry.attempts', 'cb_config.cooldown_interval', 'bogus']) expect(res.body.error.message).toContain(path);
      expect(res.body.error.message).toContain('targets');

      expect((await admin()<ErrorBody>('POST', '/configs', { name: 'not an object', config: [1] })).body.error.type).toBe('invalid_config');
      expect((await admin()<ErrorBody>('POST', '/configs', { name: 'bad slug', slug: 'Not A Slug', config: { retry: { attempts: 1 } } })).body.error.param).toBe('slug');
      expect((await admin()<ErrorBody>('POST', '/configs', { config: { retry: { attempts: 1 } } })).body.error.message).toContain('body.name');
      const after = await admin()<ListOf<ConfigView>>('GET', '/configs');
      expect(after.body.total).toBe(before.body.total);
      expect(await db.query('SELECT id FROM saved_config_versions')).toHaveLength(0);
    });

    test('x-gateway-config: <id> or <slug> reaches the provider of the saved config with its key', async () => {
      const slug = `route-${crypto.randomUUID().slice(0, 8)}`;
      const created = await admin(defaultKey)<ConfigView>('POST', '/configs', { name: 'Route', slug, config: providerConfig(one, KEY_ONE) });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ slug, workspace_id: defaultWs, organisation_id: org, version: 1, is_default: false });
      expect(created.body.id.startsWith('{')).toBe(false);
      // The provider key is never answered back.
      expect(created.body.config).toEqual({ provider: 'openai', api_key: '********', custom_host: one.url });

      one.reset();
      const byId = await ask(defaultKey, created.body.id);
      expect(byId.status).toBe(200);
      expect(one.requests).toHaveLength(1);
      expect(one.requests[0]?.headers.authorization).toBe(`Bearer ${KEY_ONE}`);

      const bySlug = await ask(defaultKey, slug);
      expect(bySlug.status).toBe(200);
      expect(one.requests).toHaveLength(2);
      expect(one.requests[1]?.headers.authorization).toBe(`Bearer ${KEY_ONE}`);

      // The key is stored sealed: no column of either table holds it.
      const rows = [...(await db.query('SELECT * FROM saved_configs')), ...(await db.query('SELECT * FROM saved_config_versions'))];
      expect(rows.length).toBeGreaterThanOrEqual(2);
      expect(rowsText(rows)).not.toContain(KEY_ONE);
    });

    test('a new version changes where the next request goes; old versions are kept and readable', async () => {
      const created = await admin(defaultKey)<ConfigView>('POST', '/configs', { name: 'Versioned', config: providerConfig(one, KEY_ONE) });
      const id = created.body.id;
      one.reset();
      two.reset();
      expect((await ask(defaultKey, id)).status).toBe(200);
      expect(one.requests).toHaveLength(1);

      const updated = await admin(defaultKey)<ConfigView>('PUT', `/configs/${id}`, { config: providerConfig(two, KEY_TWO) });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ id, version: 2, current_version: 2, config: { custom_host: two.url, api_key: '********' } });
      expect((await ask(defaultKey, id)).status).toBe(200);
      expect(one.requests).toHaveLength(1);
      expect(two.requests).toHaveLength(1);
      expect(two.requests[0]?.headers.authorization).toBe(`Bearer ${KEY_TWO}`);

      const v1 = await admin(defaultKey)<ConfigView>('GET', `/configs/${id}?version=1`);
      expect(v1.body).toMatchObject({ version: 1, current_version: 2, config: { custom_host: one.url, api_key: '********' } });
      expect((await admin(defaultKey)<ConfigView>('GET', `/configs/${id}`)).body).toMatchObject({ version: 2, config: { custom_host: two.url } });
      expect((await admin(defaultKey)<ErrorBody>('GET', `/configs/${id}?version=9`)).status).toBe(404);
      expect((await admin(defaultKey)<ErrorBody>('GET', `/configs/${id}?version=x`)).body.error.param).toBe('version');

      const versions = await admin(defaultKey)<ListOf<{ version: number; config: Record<string, unknown>; created_by: { api_key_id: string } }>>('GET', `/configs/${id}/versions`);
      expect(versions.body.total).toBe(2);
      expect(versions.body.data.map((v) => v.version)).toEqual([2, 1]);
      expect(versions.body.data[1]?.config.custom_host).toBe(one.url);
      expect(versions.body.data[0]?.created_by.api_key_id).toEqual(expect.any(String));
      const paged = await admin(defaultKey)<ListOf<{ version: number }>>('GET', `/configs/${id}/versions?page_size=1&current_page=1`);
      expect(paged.body).toMatchObject({ total: 2, data: [{ version: 1 }] });

      // A rename is not a new version.
      const renamed = await admin(defaultKey)<ConfigView>('PUT', `/configs/${id}`, { name: 'Renamed' });
      expect(renamed.body).toMatchObject({ name: 'Renamed', version: 2 });
    });

    test('the mask sent back keeps the stored secret; a mask with nothing behind it is refused', async () => {
      const created = await admin(defaultKey)<ConfigView>('POST', '/configs', { name: 'Masked', config: providerConfig(one, KEY_ONE) });
      const id = created.body.id;
      // GET, change a parameter, PUT back with the mask in place of the key.
      const read = await admin(defaultKey)<ConfigView>('GET', `/configs/${id}`);
      const edited = await admin(defaultKey)<ConfigView>('PUT', `/configs/${id}`, { config: { ...read.body.config, retry: { attempts: 1 } } });
      expect(edited.status).toBe(200);
      one.reset();
      expect((await ask(defaultKey, id)).status).toBe(200);
      expect(one.requests[0]?.headers.authorization).toBe(`Bearer ${KEY_ONE}`);
      // Another host with the mask: refused, the key must be entered again (docs/security.md).
      const moved = await admin(defaultKey)<ErrorBody>('PUT', `/configs/${id}`, { config: { ...read.body.config, custom_host: two.url } });
      expect(moved.status).toBe(400);
      expect(moved.body.error.message).toContain('api_key: custom_host changed');

      const missing = await admin(defaultKey)<ErrorBody>('PUT', `/configs/${id}`, {
        config: { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: '********', custom_host: one.url }] },
      });
      expect(missing.status).toBe(400);
      expect(missing.body.error.type).toBe('invalid_config');
      expect(missing.body.error.message).toContain('targets[0].api_key');
      expect((await admin(defaultKey)<ConfigView>('GET', `/configs/${id}`)).body.version).toBe(2);
    });

    test("another workspace's key gets 403; its slugs are its own; unknown ids are invalid_config", async () => {
      const slug = `shared-name-${crypto.randomUUID().slice(0, 8)}`;
      const mine = await admin(defaultKey)<ConfigView>('POST', '/configs', { name: 'Mine', slug, config: providerConfig(one, KEY_ONE) });
      one.reset();
      const foreign = await ask(otherKey, mine.body.id);
      expect(foreign.status).toBe(403);
      expect(one.requests).toHaveLength(0);
      // The same slug in the other workspace is another config.
      const theirs = await admin(otherKey)<ConfigView>('POST', '/configs', { name: 'Theirs', slug, config: providerConfig(two, KEY_TWO) });
      expect(theirs.status).toBe(201);
      expect(theirs.body.workspace_id).toBe(otherWs);
      two.reset();
      expect((await ask(otherKey, slug)).status).toBe(200);
      expect(two.requests[0]?.headers.authorization).toBe(`Bearer ${KEY_TWO}`);
      expect(one.requests).toHaveLength(0);
      // The organisation-service key acts for the whole organisation.
      expect((await ask(TEST_ADMIN_KEY, theirs.body.id)).status).toBe(200);

      const unknown = await ask(defaultKey, 'no-such-config');
      expect(unknown.status).toBe(400);
      expect((unknown.body as unknown as ErrorBody).error.type).toBe('invalid_config');
      expect((unknown.body as unknown as ErrorBody).error.message).toContain('no saved config');

      // Reading and changing another workspace's config: as good as absent.
      expect((await admin(otherKey)<ErrorBody>('GET', `/configs/${mine.body.id}`)).status).toBe(404);
      expect((await admin(otherKey)<ErrorBody>('PUT', `/configs/${mine.body.id}`, { name: 'x' })).status).toBe(404);
      expect((await admin(otherKey)<ErrorBody>('POST', '/configs', { name: 'x', workspace_id: defaultWs, config: { retry: { attempts: 1 } } })).status).toBe(404);
      // A duplicate slug in one workspace is a conflict.
      expect((await admin(defaultKey)<ErrorBody>('POST', '/configs', { name: 'again', slug, config: { retry: { attempts: 1 } } })).status).toBe(409);
    });

    test('lists: paginated, filtered by workspace id or slug, limited to what the key sees', async () => {
      const all = await admin()<ListOf<ConfigView>>('GET', '/configs?page_size=1000');
      expect(all.status).toBe(200);
      expect(all.body.data.some((c) => c.workspace_id === otherWs)).toBe(true);
      expect(all.body.data.some((c) => c.workspace_id === defaultWs)).toBe(true);
      expect(all.body.total).toBe(all.body.data.length);

      const theirs = await admin(otherKey)<ListOf<ConfigView>>('GET', '/configs');
      expect(theirs.body.data.every((c) => c.workspace_id === otherWs)).toBe(true);
      expect(theirs.body.total).toBeGreaterThan(0);

      const otherSlug = (await db.query(`SELECT slug FROM workspaces WHERE id = '${otherWs}'`))[0]?.slug as string;
      const filtered = await admin()<ListOf<ConfigView>>('GET', `/configs?workspace_id=${otherSlug}`);
      expect(filtered.body.total).toBe(theirs.body.total);
      expect((await admin(otherKey)<ErrorBody>('GET', `/configs?workspace_id=${defaultWs}`)).status).toBe(404);

      const page0 = await admin()<ListOf<ConfigView>>('GET', '/configs?page_size=2&current_page=0');
      const page1 = await admin()<ListOf<ConfigView>>('GET', '/configs?page_size=2&current_page=1');
      expect(page0.body.data).toHaveLength(2);
      expect(page0.body.total).toBe(all.body.total);
      expect(page1.body.data[0]?.id).not.toBe(page0.body.data[0]?.id);
      expect((await admin()<ErrorBody>('GET', '/configs?page_size=0')).body.error.param).toBe('page_size');
    });

    test('one default config per workspace', async () => {
      const a = await admin(otherKey)<ConfigView>('POST', '/configs', { name: 'A', is_default: true, config: { retry: { attempts: 1 } } });
      const b = await admin(otherKey)<ConfigView>('POST', '/configs', { name: 'B', is_default: true, config: { retry: { attempts: 2 } } });
      expect(b.body.is_default).toBe(true);
      expect((await admin(otherKey)<ConfigView>('GET', `/configs/${a.body.id}`)).body.is_default).toBe(false);
      await admin(otherKey)('PUT', `/configs/${a.body.id}`, { is_default: true });
      expect((await admin(otherKey)<ConfigView>('GET', `/configs/${b.body.id}`)).body.is_default).toBe(false);
      expect((await admin(otherKey)<ConfigView>('GET', `/configs/${a.body.id}`)).body.is_default).toBe(true);
    });

    test('delete: gone from the gateway at once, with its versions', async () => {
      const created = await admin(defaultKey)<ConfigView>('POST', '/configs', { name: 'Doomed', config: providerConfig(one, KEY_ONE) });
      const id = created.body.id;
      await admin(defaultKey)('PUT', `/configs/${id}`, { config: providerConfig(two, KEY_TWO) });
      expect((await ask(defaultKey, id)).status).toBe(200);
      expect((await admin(otherKey)('DELETE', `/configs/${id}`)).status).toBe(404);
      expect((await admin(defaultKey)('DELETE', `/configs/${id}`)).status).toBe(204);
      const after = await ask(defaultKey, id);
      expect(after.status).toBe(400);
      expect((after.body as unknown as ErrorBody).error.type).toBe('invalid_config');
      expect((await admin(defaultKey)('GET', `/configs/${id}`)).status).toBe(404);
      expect(await db.query(`SELECT id FROM saved_config_versions WHERE config_id = '${id}'`)).toHaveLength(0);
    });

    test('every change is in the audit log, without the provider key', async () => {
      const created = await admin(defaultKey)<ConfigView>('POST', '/configs', { name: 'Audited', config: providerConfig(one, KEY_ONE) });
      const id = created.body.id;
      await admin(defaultKey)('PUT', `/configs/${id}`, { config: providerConfig(two, KEY_TWO) });
      await admin(defaultKey)('DELETE', `/configs/${id}`);
      const log = await admin()<ListOf<{ action: string; resource: string; resource_id: string; workspace_id: string; before: unknown; after: unknown }>>(
        'GET',
        `/audit-logs?resource=config&resource_id=${id}`,
      );
      expect(log.status).toBe(200);
      expect(log.body.data.map((e) => e.action).sort()).toEqual(['create', 'delete', 'update']);
      expect(log.body.data.every((e) => e.workspace_id === defaultWs)).toBe(true);
      expect(log.body.data.find((e) => e.action === 'update')).toMatchObject({ before: { version: 1 }, after: { version: 2 } });
      expect(JSON.stringify(log.body)).not.toContain(KEY_ONE);
      expect(JSON.stringify(log.body)).not.toContain(KEY_TWO);
    });

    test('scopes: a key without configs.write cannot create; without configs.read cannot list', async () => {
      const readOnly = await addKey(database, { organisationId: org, workspaceId: defaultWs, scopes: ['configs.read'] });
      const none = await addKey(database, { organisationId: org, workspaceId: defaultWs, scopes: ['completions.write'] });
      expect((await admin(readOnly)('POST', '/configs', { name: 'x', config: { retry: { attempts: 1 } } })).status).toBe(403);
      expect((await admin(readOnly)('GET', '/configs')).status).toBe(200);
      expect((await admin(none)('GET', '/configs')).status).toBe(403);
      const id = (await admin(defaultKey)<ConfigView>('POST', '/configs', { name: 'y', config: { retry: { attempts: 1 } } })).body.id;
      expect((await admin(readOnly)('DELETE', `/configs/${id}`)).status).toBe(403);
    });
  });
}
