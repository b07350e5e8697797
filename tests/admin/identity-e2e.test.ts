// The identity routes over HTTP, through a whole gateway (every plugin of the checkout loaded) on a fresh SQLite
// file and on a fresh MariaDB database given as DATABASE_URL: the paths as the server routes them (static
// /users/invites before /users/:userId), the public accept route without a key, the error shape, what is stored.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { apiKeys, hashSecret } from '@gateway/admin-api-keys';
import type { Gateway } from '@gateway/server';
import { AdminServices } from '@gateway/admin-kit';
import { Services } from '@gateway/sdk';
import { createE2EDatabase, E2E_DIALECTS, type E2EDatabase, rowsText } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';

/** The JSON answers, loosely: each test reads the fields it checks. */
interface Body {
  object?: string;
  id: string;
  slug?: string;
  status?: string;
  email?: string;
  token: string;
  total?: number;
  data: Body[];
  api_keys?: unknown[];
  error: { message: string; type: string; code: string; param: string | null };
}

for (const dialect of E2E_DIALECTS) {
  describe(`identity over HTTP [${dialect}]`, () => {
    let db: E2EDatabase;
    let gateway: Gateway;
    let server: ReturnType<typeof Bun.serve>;
    let base: string;

    beforeAll(async () => {
      db = await createE2EDatabase(dialect);
      gateway = await startInProcessGateway({ DATABASE_URL: db.url });
      server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => gateway.handle(request) });
      base = `http://127.0.0.1:${server.port}/v1`;
    });
    afterAll(async () => {
      await server?.stop(true);
      await gateway?.close();
      await db?.drop();
    });

    async function call(method: string, path: string, body?: unknown, key: string | null = TEST_ADMIN_KEY): Promise<{ status: number; body: Body }> {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (key) headers['x-gateway-api-key'] = key;
      const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : null) as Body };
    }

    /** A workspace-user key of a user, written where the gateway's verifier reads keys. */
    async function userKey(userId: string, workspaceId: string): Promise<string> {
      const database = gateway.service(Services.database);
      const admin = await database.findOne(apiKeys, 'hash', hashSecret(TEST_ADMIN_KEY));
      if (!admin) throw new Error('no bootstrap key');
      const organisationId = admin.organisation_id;
      const secret = `e2e-user-${crypto.randomUUID()}`;
      await database.insert(apiKeys, {
        organisation_id: organisationId,
        workspace_id: workspaceId,
        user_id: userId,
        name: 'e2e user key',
        type: 'workspace-user',
        hash: hashSecret(secret),
        prefix_hint: secret.slice(0, 4),
        scopes: ['workspaces.read', 'workspaces.write', 'users.read'],
      });
      return secret;
    }

    test('the identity plugin is loaded and provides the authorizer and the events', () => {
      expect(gateway.plugins.loaded.map((p) => p.name)).toContain('@gateway/admin-identity');
      expect(gateway.plugins.registry.optional(Services.adminAuthorizer)).toBeDefined();
      expect(gateway.plugins.registry.optional(AdminServices.events)).toBeDefined();
    });

    test('workspaces: create, list, read by slug, archive, refusals in the error shape', async () => {
      const created = await call('POST', '/workspaces', { name: 'Research Lab', description: 'R&D' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ object: 'workspace', slug: 'research-lab', status: 'active', api_keys: [] });
      const listed = await call('GET', '/workspaces?page_size=10');
      expect(listed.body.object).toBe('list');
      expect(listed.body.data.map((w) => w.slug)).toEqual(['default', 'research-lab']);
      expect(listed.body.total).toBe(2);
      expect((await call('GET', '/workspaces/research-lab')).body.id).toBe(created.body.id);
      const bad = await call('GET', '/workspaces?status=deleted');
      expect(bad.status).toBe(400);
      expect(bad.body as unknown).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', code: 'invalid_request', param: 'status' } });
      const taken = await call('POST', '/workspaces', { name: 'Again', slug: 'research-lab' });
      expect(taken.status).toBe(409);
      expect(taken.body.error).toMatchObject({ code: 'conflict', param: 'slug' });
      const archived = await call('PUT', '/workspaces/research-lab', { status: 'archived' });
      expect(archived.body.status).toBe('archived');
      expect((await call('GET', '/workspaces?status=archived')).body.data.map((w) => w.id)).toEqual([created.body.id]);
      expect((await call('GET', '/workspaces')).body.total).toBe(1);
      expect((await call('GET', '/workspaces', undefined, null)).status).toBe(401);
    });

    test('users and members: a member key sees only its workspaces and may not administer; removal refuses its key', async () => {
      const team = (await call('POST', '/workspaces', { name: 'Team' })).body;
      const user = await call('POST', '/users', { email: 'Member@Example.com', name: 'Mem', workspaces: [{ id: 'team', role: 'member' }] });
      expect(user.status).toBe(201);
      expect(user.body).toMatchObject({ object: 'user', email: 'member@example.com', role: 'member', workspaces: [{ id: team.id, role: 'member' }] });
      expect(Array.isArray(user.body.api_keys)).toBe(true);
      const key = await userKey(user.body.id, team.id);
      expect((await call('GET', '/workspaces', undefined, key)).body.data.map((w) => w.id)).toEqual([team.id]);
      expect((await call('POST', '/workspaces', { name: 'Nope' }, key)).status).toBe(403);
      expect((await call('GET', '/users', undefined, key)).status).toBe(403);
      expect((await call('GET', `/users/${user.body.id}`, undefined, key)).status).toBe(200);

      const promoted = await call('PUT', `/workspaces/${team.id}/users/${user.body.id}`, { role: 'Manager' });
      expect(promoted.body).toMatchObject({ object: 'workspace_user', role: 'manager' });
      const members = await call('GET', '/workspaces/team/users');
      expect(members.body).toMatchObject({ object: 'list', total: 1, data: [{ user_id: user.body.id, role: 'manager' }] });
      expect((await call('DELETE', `/users/${user.body.id}`)).status).toBe(204);
      expect((await call('GET', '/workspaces', undefined, key)).status).toBe(401);
    });

    test('invitations: create, list (not taken for /users/:userId), accept without a key, once', async () => {
      const invite = await call('POST', '/users/invites', { email: 'guest@example.com', workspaces: [{ id: 'default', role: 'admin' }] });
      expect(invite.status).toBe(201);
      expect(invite.body.token).toMatch(/^inv-/);
      const listed = await call('GET', '/users/invites?status=pending');
      expect(listed.body).toMatchObject({ object: 'list', total: 1, data: [{ id: invite.body.id, status: 'pending' }] });
      expect(listed.body.data[0]?.token).toBeUndefined();
      expect((await call('GET', `/users/invites/${invite.body.id}`)).body.email).toBe('guest@example.com');

      const accepted = await call('POST', '/users/invites/accept', { token: invite.body.token, name: 'Guest' }, null);
      expect(accepted.status).toBe(200);
      expect(accepted.body).toMatchObject({ object: 'invite_acceptance', user: { email: 'guest@example.com', name: 'Guest', workspaces: [{ slug: 'default', role: 'admin' }] } });
      expect(Array.isArray(accepted.body.api_keys)).toBe(true);
      const again = await call('POST', '/users/invites/accept', { token: invite.body.token }, null);
      expect(again.status).toBe(400);
      expect(again.body.error.param).toBe('token');
      expect((await call('GET', '/users?email=guest@example.com')).body.total).toBe(1);

      // What is stored holds the token's hash, never the token.
      const rows = await db.query('SELECT * FROM user_invites');
      expect(rowsText(rows)).not.toContain(invite.body.token);
      expect(rowsText(rows)).toContain(hashSecret(invite.body.token));
    });
  });
}
