/**
 * Saved guardrails end to end, in-process, on SQLite and on MariaDB: checks validated as an inline entry is (unknown
 * check, bad parameters, bad policy: 400, nothing stored), a saved config naming a guardrail by slug denying a request
 * before the provider is called, a change to the guardrail taking effect on the next request (saved configs and
 * header configs alike), header configs naming guardrails by id only, workspace visibility (a workspace's guardrail
 * is its own; organisation-wide ones are everyone's, and a workspace's own slug shadows them), lists with `ids`,
 * deletes and slug changes refused while configs use them, and secrets in check parameters masked, sealed, and sent.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { addKey, addWorkspace, caller, chat, defaultWorkspaceId, organisationId } from '@gateway/admin-configs/testing';
import { type Database, Services } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { createE2EDatabase, type E2EDatabase, E2E_DIALECTS, rowsText } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

interface GuardrailView {
  id: string;
  slug: string;
  name: string;
  workspace_id: string | null;
  organisation_id: string;
  entry: Record<string, unknown>;
  version: number;
}
interface ListOf<T> {
  object: 'list';
  data: T[];
  total: number;
}
interface ErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
  hook_results?: { id: string; verdict: boolean; deny: boolean }[];
}

const PROVIDER_KEY = 'sk-saved-guardrails-provider';
const HOOK_SECRET = 'Bearer hook-secret-value-7731';

/** Denies a request whose text contains one of `words`. */
const denyWords = (...words: string[]) => ({ deny: true, 'default.contains': { words, operator: 'none' } });

for (const dialect of E2E_DIALECTS) {
  describe(`saved guardrails [${dialect}]`, () => {
    let db: E2EDatabase;
    let gw: Gateway;
    let mock: OpenAIMock;
    let database: Database;
    let org: string;
    let defaultWs: string;
    let otherWs: string;
    let defaultKey: string;
    let otherKey: string;

    const admin = (key = TEST_ADMIN_KEY) => caller((r) => gw.handle(r), key);
    const ask = (key: string, config: string, content: string) => chat((r) => gw.handle(r), key, content, { 'x-gateway-config': config });
    const provider = () => ({ provider: 'openai', api_key: PROVIDER_KEY, custom_host: mock.url });
    const slugOf = (base: string) => `${base}-${crypto.randomUUID().slice(0, 8)}`;

    async function guardrail(body: Record<string, unknown>, key = defaultKey): Promise<GuardrailView> {
      const res = await admin(key)<GuardrailView>('POST', '/guardrails', body);
      if (res.status !== 201) throw new Error(`guardrail not created: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    }
    async function savedConfig(config: Record<string, unknown>, key = defaultKey): Promise<string> {
      const res = await admin(key)<{ id: string }>('POST', '/configs', { name: 'guarded', config });
      if (res.status !== 201) throw new Error(`config not created: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id;
    }
    /** Runs `fn` and returns how many requests reached the provider meanwhile. */
    async function providerCalls(fn: () => Promise<unknown>): Promise<number> {
      const before = mock.requests.length;
      await fn();
      return mock.requests.length - before;
    }

    beforeAll(async () => {
      db = await createE2EDatabase(dialect);
      mock = await startOpenAIMock({ apiKey: null });
      gw = await startInProcessGateway({ DATABASE_URL: db.url, GATEWAY_ENCRYPTION_KEY: 'saved-guardrails-test-encryption-key' });
      database = gw.service(Services.database);
      org = await organisationId(database);
      defaultWs = await defaultWorkspaceId(database, org);
      otherWs = await addWorkspace(database, org, `other-${crypto.randomUUID().slice(0, 8)}`);
      defaultKey = await addKey(database, { organisationId: org, workspaceId: defaultWs });
      otherKey = await addKey(database, { organisationId: org, workspaceId: otherWs });
    }, 60_000);
    afterAll(async () => {
      await gw?.close();
      await mock?.stop();
      await db?.drop();
    }, 30_000);

    test('checks are validated as an inline entry is: every violation by path, nothing stored', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ deny: true, 'default.nope': {} }, 'entry["default.nope"]: unknown guardrail check'],
        [{ 'default.contains': { words: [] } }, 'entry["default.contains"].words'],
        [{ deny: 'yes', 'default.contains': { words: ['a'] } }, 'entry.deny'],
        [{ deny: true }, 'entry: names no check'],
        [{ contains: { words: ['a'], operator: 'sometimes' } }, 'entry.contains.operator'],
      ];
      for (const [entry, expected] of cases) {
        const res = await admin(defaultKey)<ErrorBody>('POST', '/guardrails', { name: 'bad', entry });
        expect(res.status).toBe(400);
        expect(res.body.error.param).toBe('entry');
        expect(res.body.error.message).toContain(expected);
      }
      const both = await admin(defaultKey)<ErrorBody>('POST', '/guardrails', { name: 'bad', entry: { 'default.nope': {}, 'default.contains': { words: [] } } });
      expect(both.body.error.message).toContain('default.nope');
      expect(both.body.error.message).toContain('default.contains');
      expect((await admin(defaultKey)<ErrorBody>('POST', '/guardrails', { name: 'bad', entry: [] })).status).toBe(400);
      expect(await db.query('SELECT id FROM saved_guardrails')).toHaveLength(0);
    });

    test('a saved config naming a guardrail by slug denies before the provider; a change takes effect at once', async () => {
      const slug = slugOf('no-secrets');
      const g = await guardrail({ name: 'No secrets', slug, entry: denyWords('classified') });
      expect(g).toMatchObject({ slug, workspace_id: defaultWs, organisation_id: org, version: 1, entry: denyWords('classified') });
      const id = await savedConfig({ ...provider(), input_guardrails: [slug] });

      let denied: Awaited<ReturnType<typeof ask>> | undefined;
      expect(await providerCalls(async () => (denied = await ask(defaultKey, id, 'this is classified')))).toBe(0);
      expect(denied?.status).toBe(400);
      const body = denied?.body as unknown as ErrorBody;
      expect(body.error.type).toBe('guardrail_denied');
      expect(body.hook_results?.[0]).toMatchObject({ id: slug, verdict: false, deny: true });
      expect(await providerCalls(async () => expect((await ask(defaultKey, id, 'this is public')).status).toBe(200))).toBe(1);

      const changed = await admin(defaultKey)<GuardrailView>('PUT', `/guardrails/${g.id}`, { entry: denyWords('public') });
      expect(changed.body.version).toBe(2);
      expect((await ask(defaultKey, id, 'this is classified')).status).toBe(200);
      expect((await ask(defaultKey, id, 'this is public')).status).toBe(400);
    });

    test('a header config names a saved guardrail by id (not by slug); a change reaches cached header configs', async () => {
      const slug = slugOf('header-guard');
      const g = await guardrail({ name: 'Header guard', slug, entry: denyWords('alpha') });
      const header = JSON.stringify({ ...provider(), input_guardrails: [g.id] });
      expect((await ask(defaultKey, header, 'alpha')).status).toBe(400);
      expect((await ask(defaultKey, header, 'beta')).status).toBe(200);
      await admin(defaultKey)('PUT', `/guardrails/${g.id}`, { entry: denyWords('beta') });
      expect((await ask(defaultKey, header, 'alpha')).status).toBe(200);
      expect((await ask(defaultKey, header, 'beta')).status).toBe(400);

      const bySlug = await ask(defaultKey, JSON.stringify({ ...provider(), input_guardrails: [slug] }), 'alpha');
      expect(bySlug.status).toBe(400);
      expect((bySlug.body as unknown as ErrorBody).error.type).toBe('invalid_config');
      expect((bySlug.body as unknown as ErrorBody).error.message).toContain('no saved guardrail');
    });

    test("workspaces: another workspace's guardrail cannot be named; organisation-wide ones can, and are shadowed by a workspace's own slug", async () => {
      const mine = await guardrail({ name: 'Mine', slug: slugOf('mine'), entry: denyWords('x') });
      for (const ref of [mine.id, mine.slug]) {
        const res = await admin(otherKey)<ErrorBody>('POST', '/configs', { name: 'borrow', config: { ...provider(), input_guardrails: [ref] } });
        expect(res.status).toBe(400);
        expect(res.body.error.type).toBe('invalid_config');
        expect(res.body.error.message).toContain('input_guardrails[0]: no saved guardrail');
      }
      expect((await admin(otherKey)('GET', `/guardrails/${mine.id}`)).status).toBe(404);
      expect((await admin(otherKey)('PUT', `/guardrails/${mine.id}`, { name: 'stolen' })).status).toBe(404);

      const shared = slugOf('org-wide');
      // Only an organisation admin makes organisation-wide guardrails.
      expect((await admin(otherKey)('POST', '/guardrails', { name: 'Org', slug: shared, organisation_id: org, entry: denyWords('gamma') })).status).toBe(403);
      const orgWide = await guardrail({ name: 'Org', slug: shared, organisation_id: org, entry: denyWords('gamma') }, TEST_ADMIN_KEY);
      expect(orgWide.workspace_id).toBeNull();
      expect((await admin(otherKey)<GuardrailView>('GET', `/guardrails/${orgWide.id}`)).status).toBe(200);
      expect((await admin(otherKey)('PUT', `/guardrails/${orgWide.id}`, { name: 'x' })).status).toBe(403);

      const theirs = await savedConfig({ ...provider(), input_guardrails: [shared] }, otherKey);
      expect((await ask(otherKey, theirs, 'say gamma')).status).toBe(400);
      expect((await ask(otherKey, theirs, 'say epsilon')).status).toBe(200);
      // The workspace's own guardrail of that slug comes first, from the next request on.
      await guardrail({ name: 'Shadow', slug: shared, entry: denyWords('epsilon') }, otherKey);
      expect((await ask(otherKey, theirs, 'say gamma')).status).toBe(200);
      expect((await ask(otherKey, theirs, 'say epsilon')).status).toBe(400);
      // The default workspace still sees the organisation's.
      const ours = await savedConfig({ ...provider(), input_guardrails: [shared] });
      expect((await ask(defaultKey, ours, 'say gamma')).status).toBe(400);
    });

    test('lists: ids, pages, and only what the key may see', async () => {
      const a = await guardrail({ name: 'List A', entry: denyWords('a') });
      const b = await guardrail({ name: 'List B', entry: denyWords('b') });
      const theirs = await guardrail({ name: 'List C', entry: denyWords('c') }, otherKey);
      const picked = await admin()<ListOf<GuardrailView>>('GET', `/guardrails?ids=${a.id},${theirs.id}`);
      expect(picked.status).toBe(200);
      expect(picked.body.total).toBe(2);
      expect(picked.body.data.map((g) => g.id).sort()).toEqual([a.id, theirs.id].sort());

      const mineOnly = await admin(defaultKey)<ListOf<GuardrailView>>('GET', `/guardrails?ids=${a.id},${theirs.id}`);
      expect(mineOnly.body.data.map((g) => g.id)).toEqual([a.id]);
      const visible = await admin(otherKey)<ListOf<GuardrailView>>('GET', '/guardrails?page_size=1000');
      expect(visible.body.data.every((g) => g.workspace_id === otherWs || g.workspace_id === null)).toBe(true);
      expect(visible.body.data.some((g) => g.id === theirs.id)).toBe(true);
      expect(visible.body.data.some((g) => g.id === b.id)).toBe(false);

      const all = await admin()<ListOf<GuardrailView>>('GET', '/guardrails?page_size=1000');
      const page1 = await admin()<ListOf<GuardrailView>>('GET', '/guardrails?page_size=1&current_page=1');
      expect(page1.body.total).toBe(all.body.total);
      expect(page1.body.data).toHaveLength(1);
      expect(page1.body.data[0]?.id).toBe(all.body.data[1]?.id as string);
      const filtered = await admin()<ListOf<GuardrailView>>('GET', `/guardrails?workspace_id=${otherWs}`);
      expect(filtered.body.data.every((g) => g.workspace_id === otherWs)).toBe(true);
    });

    test('a guardrail in use is not deleted, nor its slug changed; once unused it goes, and header configs naming it are invalid', async () => {
      const g = await guardrail({ name: 'In use', slug: slugOf('in-use'), entry: denyWords('delta') });
      const byId = await savedConfig({ ...provider(), input_guardrails: [g.id] });
      const bySlug = await savedConfig({ ...provider(), input_guardrails: [g.slug] });

      const refused = await admin(defaultKey)<ErrorBody>('DELETE', `/guardrails/${g.id}`);
      expect(refused.status).toBe(409);
      expect(refused.body.error.message).toContain(byId);
      expect(refused.body.error.message).toContain(bySlug);
      const renamed = await admin(defaultKey)<ErrorBody>('PUT', `/guardrails/${g.id}`, { slug: slugOf('renamed') });
      expect(renamed.status).toBe(409);
      expect(renamed.body.error.message).toContain(bySlug);

      await admin(defaultKey)('PUT', `/configs/${bySlug}`, { config: { ...provider(), api_key: '********' } });
      expect((await admin(defaultKey)('PUT', `/guardrails/${g.id}`, { slug: slugOf('renamed') })).status).toBe(200);
      expect((await admin(defaultKey)('DELETE', `/guardrails/${g.id}`)).status).toBe(409);
      expect((await admin(defaultKey)('DELETE', `/configs/${byId}`)).status).toBe(204);
      expect((await admin(defaultKey)('DELETE', `/guardrails/${g.id}`)).status).toBe(204);
      expect((await admin(defaultKey)('GET', `/guardrails/${g.id}`)).status).toBe(404);

      const header = await ask(defaultKey, JSON.stringify({ ...provider(), input_guardrails: [g.id] }), 'delta');
      expect(header.status).toBe(400);
      expect((header.body as unknown as ErrorBody).error.type).toBe('invalid_config');
    });

    test('every change is in the audit log', async () => {
      const g = await guardrail({ name: 'Audited', entry: denyWords('zeta') });
      await admin(defaultKey)('PUT', `/guardrails/${g.id}`, { entry: denyWords('eta') });
      await admin(defaultKey)('DELETE', `/guardrails/${g.id}`);
      const log = await admin()<ListOf<{ action: string; resource_id: string; before: unknown; after: unknown }>>('GET', `/audit-logs?resource=guardrail&resource_id=${g.id}`);
      expect(log.status).toBe(200);
      expect(log.body.data.map((e) => e.action).sort()).toEqual(['create', 'delete', 'update']);
      expect(log.body.data.find((e) => e.action === 'update')).toMatchObject({ before: { entry: denyWords('zeta') }, after: { entry: denyWords('eta'), version: 2 } });
    });

    test('secrets in check parameters: masked in answers, sealed at rest, sent to the check, kept through a masked round trip', async () => {
      const seen: string[] = [];
      const hook = Bun.serve({
        hostname: '127.0.0.1',
        port: 0,
        fetch: (request) => {
          seen.push(request.headers.get('authorization') ?? '');
          return Response.json({ verdict: true });
        },
      });
      try {
        const entry = { deny: true, 'default.webhook': { webhookURL: `http://127.0.0.1:${hook.port}/check`, headers: { authorization: HOOK_SECRET } } };
        const g = await guardrail({ name: 'Webhook', entry });
        expect(g.entry).toEqual({ deny: true, 'default.webhook': { webhookURL: entry['default.webhook'].webhookURL, headers: { authorization: '********' } } });
        expect(rowsText(await db.query('SELECT * FROM saved_guardrails'))).not.toContain('hook-secret-value');

        const id = await savedConfig({ ...provider(), input_guardrails: [g.slug] });
        expect((await ask(defaultKey, id, 'hello')).status).toBe(200);
        expect(seen.at(-1)).toBe(HOOK_SECRET);

        // GET, change the timeout, PUT back with the mask: the stored header stays.
        const read = await admin(defaultKey)<GuardrailView>('GET', `/guardrails/${g.slug}`);
        const webhook = read.body.entry['default.webhook'] as Record<string, unknown>;
        const put = await admin(defaultKey)<GuardrailView>('PUT', `/guardrails/${g.id}`, { entry: { ...read.body.entry, 'default.webhook': { ...webhook, timeout: 2000 } } });
        expect(put.status).toBe(200);
        expect((await ask(defaultKey, id, 'hello again')).status).toBe(200);
        expect(seen.at(-1)).toBe(HOOK_SECRET);
        expect(seen).toHaveLength(2);
      } finally {
        await hook.stop(true);
      }
    });
  });
}

describe('saved guardrails with GUARDRAILS_ENABLED=OFF', () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startInProcessGateway({ GUARDRAILS_ENABLED: 'OFF' });
  });
  afterAll(async () => {
    await gw?.close();
  });

  test('the routes answer 403 feature_disabled', async () => {
    const res = await caller((r) => gw.handle(r), TEST_ADMIN_KEY)<ErrorBody>('GET', '/guardrails');
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('feature_disabled');
  });
});
