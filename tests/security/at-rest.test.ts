/**
 * Security regression (issue #13, item 6): stored data at rest and saved guardrails, on SQLite and on MariaDB.
 *
 * - AES-GCM binds each sealed value to its row (associated data `table:id:field`). The attacker can write one row of
 *   the database (or a bug copies a value): they copy the victim integration's sealed credentials into the row of an
 *   integration they use, or of a virtual key. Calls through it then fail cleanly (500, nothing sent upstream): the
 *   victim's key never leaves the gateway. A value sealed before binding (`v1:`) still opens, and is rewritten bound
 *   at the next start.
 * - Saved guardrails resolve only within the caller's organisation and workspace. The attacker holds a key of
 *   workspace B; they name, in a header config and in a saved config, the id of workspace A's guardrail and of
 *   another organisation's: each is refused exactly as an unknown id is (ids cannot be probed), and the guardrail's
 *   webhook is never called.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { addKey, addWorkspace, caller, chat, defaultWorkspaceId, organisationId } from '@gateway/admin-configs/testing';
import { guardrailSecretsAt, savedGuardrails } from '@gateway/admin-guardrails';
import { integrations, virtualKeys } from '@gateway/admin-integrations';
import { SecretBox } from '@gateway/admin-kit';
import { eq, Services } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { createE2EDatabase, type E2EDatabase, E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const ENCRYPTION_KEY = 'at-rest-test-encryption-key-0123456789';

interface ErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
}
interface IntegrationView {
  id: string;
  slug: string;
  key: string | null;
  credentials_readable: boolean;
}

/** The sealed form the gateway wrote before values were bound to their rows: v1, no associated data. */
function sealUnbound(plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', createHash('sha256').update(ENCRYPTION_KEY).digest(), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1:${iv.toString('base64url')}:${body.toString('base64url')}`;
}

for (const dialect of E2E_DIALECTS) {
  describe(`stored data at rest [${dialect}]`, () => {
    let db: E2EDatabase;
    let mock: OpenAIMock;
    let gw: Gateway;

    const start = async () => {
      gw = await startInProcessGateway({ DATABASE_URL: db.url, GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY });
    };
    /** The next load reads what was written straight into the database (as a new process would). */
    const restart = async () => {
      await gw.close();
      await start();
    };
    const database = () => gw.service(Services.database);
    const admin = <T>(method: string, path: string, body?: unknown) => caller((r) => gw.handle(r), TEST_ADMIN_KEY)<T>(method, path, body);
    /** A chat call through a stored provider, `@slug`. */
    const ask = (slug: string) =>
      caller((r) => gw.handle(r), TEST_ADMIN_KEY)<ErrorBody>(
        'POST',
        '/chat/completions',
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
        { 'x-gateway-provider': `@${slug}` },
      );
    /** Every Authorization header the provider mock has received. */
    const sentKeys = () => mock.requests.map((r) => r.headers.authorization ?? '');

    async function integration(name: string, key: string): Promise<IntegrationView> {
      const slug = `${name}-${crypto.randomUUID().slice(0, 8)}`;
      const res = await admin<IntegrationView>('POST', '/integrations', {
        name,
        slug,
        ai_provider_id: 'openai',
        key,
        configurations: { custom_host: mock.url },
        workspaces: [{ id: 'default' }],
      });
      if (res.status !== 201) throw new Error(`integration not created: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    }
    const credentialsOf = async (id: string) => (await database().findOne(integrations, 'id', id, { fresh: true }))?.credentials ?? '';

    beforeAll(async () => {
      db = await createE2EDatabase(dialect);
      mock = await startOpenAIMock({ apiKey: null });
      await start();
    }, 60_000);
    afterAll(async () => {
      await gw?.close();
      await mock?.stop();
      await db?.drop();
    }, 30_000);

    test("a victim integration's sealed key copied into the attacker's integration row does not open there: the call fails cleanly, the key is never sent", async () => {
      const victimKey = `sk-victim-${crypto.randomUUID()}`;
      const victim = await integration('victim', victimKey);
      const mine = await integration('mine', `sk-mine-${crypto.randomUUID()}`);
      expect((await ask(mine.slug)).status).toBe(200);

      // The attack: one row written straight in the database.
      const stolen = await credentialsOf(victim.id);
      expect(await database().update(integrations, { credentials: stolen }, (c) => eq(c.id, mine.id))).toBe(1);
      await restart();

      const before = mock.requests.length;
      const res = await ask(mine.slug);
      expect(res.status).toBe(500);
      expect(res.body.error.type).toBe('internal_error');
      expect(JSON.stringify(res.body)).not.toContain(victimKey);
      expect(mock.requests.length).toBe(before); // nothing went upstream
      expect(sentKeys().some((k) => k.includes(victimKey))).toBe(false);
      // Reading it shows nothing of the victim's key either.
      const read = await admin<IntegrationView>('GET', `/integrations/${mine.id}`);
      expect(read.status).toBe(200);
      expect([read.body.credentials_readable, read.body.key]).toEqual([false, null]);
      // The victim's own row is untouched and still works.
      expect((await ask(victim.slug)).status).toBe(200);
      expect(sentKeys().at(-1)).toBe(`Bearer ${victimKey}`);
    });

    test("an integration's sealed key copied into a virtual key's row (another table) does not open there", async () => {
      const victimKey = `sk-victim-vk-${crypto.randomUUID()}`;
      const victim = await integration('victim-vk', victimKey);
      const created = await admin<{ id: string; slug: string }>('POST', '/virtual-keys', {
        name: 'mine',
        slug: `mine-${crypto.randomUUID().slice(0, 8)}`,
        provider: 'openai',
        key: `sk-mine-vk-${crypto.randomUUID()}`,
        configurations: { custom_host: mock.url },
      });
      expect(created.status).toBe(201);
      expect(await database().update(virtualKeys, { credentials: await credentialsOf(victim.id) }, (c) => eq(c.id, created.body.id))).toBe(1);
      await restart();

      const before = mock.requests.length;
      const res = await caller((r) => gw.handle(r), TEST_ADMIN_KEY)<ErrorBody>(
        'POST',
        '/chat/completions',
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
        { 'x-gateway-virtual-key': created.body.slug },
      );
      expect(res.status).toBe(500);
      expect(mock.requests.length).toBe(before);
      expect(sentKeys().some((k) => k.includes(victimKey))).toBe(false);
    });

    test('a value sealed before binding (v1) still opens, and the next start rewrites it bound to its row', async () => {
      const legacyKey = `sk-legacy-${crypto.randomUUID()}`;
      const legacy = await integration('legacy', `sk-placeholder-${crypto.randomUUID()}`);
      const unbound = sealUnbound(JSON.stringify({ key: legacyKey, configurations: { custom_host: mock.url } }));
      expect(await database().update(integrations, { credentials: unbound }, (c) => eq(c.id, legacy.id))).toBe(1);

      // Read straight from the row by the running process: the old format opens.
      const read = await admin<IntegrationView>('GET', `/integrations/${legacy.id}`);
      expect(read.body.credentials_readable).toBe(true);
      expect(read.body.key).not.toBeNull();

      await restart();
      const stored = await credentialsOf(legacy.id);
      expect(stored.startsWith('v2:')).toBe(true);
      expect(new SecretBox(ENCRYPTION_KEY).openJson(stored, { table: 'integrations', id: legacy.id, field: 'credentials' })).toEqual({
        key: legacyKey,
        configurations: { custom_host: mock.url },
      });
      expect((await ask(legacy.slug)).status).toBe(200);
      expect(sentKeys().at(-1)).toBe(`Bearer ${legacyKey}`);
      // A second start finds nothing left to rewrite.
      await restart();
      expect(await credentialsOf(legacy.id)).toBe(stored);
    });
  });

  describe(`saved guardrails resolve only for their organisation and workspace [${dialect}]`, () => {
    let db: E2EDatabase;
    let mock: OpenAIMock;
    let gw: Gateway;
    let hook: ReturnType<typeof Bun.serve>;
    const hookCalls: string[] = [];
    let org: string;
    let keyA: string;
    let keyB: string;
    let guardA: string;
    let foreignGuard: string;

    const provider = () => ({ provider: 'openai', api_key: 'sk-at-rest-provider', custom_host: mock.url });
    const entry = (label: string) => ({ deny: true, 'default.webhook': { webhookURL: `http://127.0.0.1:${hook.port}/${label}`, headers: { authorization: `Bearer hook-${label}` } } });
    const ask = (key: string, config: string) => chat((r) => gw.handle(r), key, 'hello', { 'x-gateway-config': config });
    const header = (guardrailId: string) => JSON.stringify({ ...provider(), input_guardrails: [guardrailId] });
    const database = () => gw.service(Services.database);

    beforeAll(async () => {
      db = await createE2EDatabase(dialect);
      mock = await startOpenAIMock({ apiKey: null });
      hook = Bun.serve({
        hostname: '127.0.0.1',
        port: 0,
        fetch: (request) => {
          hookCalls.push(new URL(request.url).pathname);
          return Response.json({ verdict: true });
        },
      });
      gw = await startInProcessGateway({ DATABASE_URL: db.url, GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY });
      org = await organisationId(database());
      const wsA = await defaultWorkspaceId(database(), org);
      const wsB = await addWorkspace(database(), org, `b-${crypto.randomUUID().slice(0, 8)}`);
      keyA = await addKey(database(), { organisationId: org, workspaceId: wsA });
      keyB = await addKey(database(), { organisationId: org, workspaceId: wsB });

      const made = await caller((r) => gw.handle(r), keyA)<{ id: string }>('POST', '/guardrails', { name: 'A only', entry: entry('a') });
      if (made.status !== 201) throw new Error(`guardrail not created: ${made.status} ${JSON.stringify(made.body)}`);
      guardA = made.body.id;
      // Another organisation's guardrail (this gateway has one organisation: the row is written as its store would).
      foreignGuard = crypto.randomUUID();
      const box = new SecretBox(ENCRYPTION_KEY);
      const masked = { deny: true, 'default.webhook': { webhookURL: `http://127.0.0.1:${hook.port}/foreign`, headers: { authorization: '********' } } };
      const secrets = box.sealJson([[['default.webhook', 'headers', 'authorization'], 'Bearer hook-foreign']], guardrailSecretsAt(foreignGuard));
      await database().insert(savedGuardrails, {
        id: foreignGuard,
        organisation_id: crypto.randomUUID(),
        workspace_id: null,
        scope: 'organisation',
        name: 'Foreign',
        slug: `foreign-${crypto.randomUUID().slice(0, 8)}`,
        entry: masked,
        secrets,
      });
      // Any write reloads the guardrail set, the row above with it.
      await caller((r) => gw.handle(r), keyA)('POST', '/guardrails', { name: 'Reload', entry: entry('reload') });
    }, 60_000);
    afterAll(async () => {
      await gw?.close();
      await mock?.stop();
      await hook?.stop(true);
      await db?.drop();
    }, 30_000);

    test("workspace B's key naming workspace A's guardrail, or another organisation's, in a header config: refused as an unknown id, the webhook never called", async () => {
      // The guardrail works for its own workspace: its webhook is called.
      expect((await ask(keyA, header(guardA))).status).toBe(200);
      expect(hookCalls).toEqual(['/a']);
      hookCalls.length = 0;

      const unknownId = crypto.randomUUID();
      const unknown = await ask(keyB, header(unknownId));
      expect(unknown.status).toBe(400);
      const refusal = (id: string) => JSON.stringify(unknown.body).replaceAll(unknownId, id);

      const providerCalls = mock.requests.length;
      for (const [key, id] of [
        [keyB, guardA],
        [keyB, foreignGuard],
        [keyA, foreignGuard],
        [TEST_ADMIN_KEY, foreignGuard],
      ] as const) {
        const res = await ask(key, header(id));
        expect(res.status).toBe(400);
        expect(JSON.stringify(res.body)).toBe(refusal(id));
      }
      // Asked again (the answer is cached per caller): the same.
      expect(JSON.stringify((await ask(keyB, header(guardA))).body)).toBe(refusal(guardA));
      expect(hookCalls).toEqual([]);
      expect(mock.requests.length).toBe(providerCalls);
    });

    // Saved configs were already checked for their workspace when written; this keeps the header fix from loosening them.
    test("a saved config of workspace B naming workspace A's guardrail, or another organisation's, is refused as an unknown id", async () => {
      hookCalls.length = 0;
      const save = (guardrailId: string) =>
        caller((r) => gw.handle(r), keyB)<ErrorBody>('POST', '/configs', { name: 'borrow', config: { ...provider(), input_guardrails: [guardrailId] } });
      const unknownId = crypto.randomUUID();
      const unknown = await save(unknownId);
      expect(unknown.status).toBe(400);
      for (const id of [guardA, foreignGuard]) {
        const res = await save(id);
        expect(res.status).toBe(400);
        expect(res.body.error.message).toBe(unknown.body.error.message.replaceAll(unknownId, id));
      }
      expect(hookCalls).toEqual([]);
    });
  });
}
