/**
 * Attack: a writer of secret references (secret_references.write) keeps a stored manager credential while pointing
 * the reference at a server of their own, by sending the masked token back (or leaving it out) together with a new
 * `address` / `endpoint` / `region` / `tenant_id`. The next secret read would then carry the stored token to them.
 * Each update must be refused until the credential is entered again, and the attacker's server must hear nothing.
 * SQLite and MariaDB.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { AdminServices } from '@gateway/admin-kit';
import { workspaces } from '@gateway/admin-identity';
import { Services } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { createE2EDatabase, E2E_DIALECTS, type E2EDatabase } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { startVault } from '../mocks/secret-managers/vault.ts';

const VICTIM_TOKEN = 'hvs.victim-stored-vault-token';
const vault = startVault({ tokens: [VICTIM_TOKEN] });

/** The attacker's "vault": records every request it gets, with its headers. */
const heard: string[] = [];
const attacker = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch(req) {
    heard.push(`${req.method} ${new URL(req.url).pathname} ${JSON.stringify(Object.fromEntries(req.headers))}`);
    return Response.json({ errors: ['permission denied'] }, { status: 403 });
  },
});
const ATTACKER_URL = `http://127.0.0.1:${attacker.port}`;

afterAll(() => {
  vault.stop();
  attacker.stop(true);
});

for (const dialect of E2E_DIALECTS) {
  describe(`secret references cannot be redirected [${dialect}]`, () => {
    let db: E2EDatabase;
    let gateway: Gateway;
    let org: string;
    let ws: string;
    let id: string;

    async function call(method: string, path: string, body?: unknown) {
      const response = await gateway.handle(
        new Request(`http://gateway.test/v1${path}`, {
          method,
          headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
      return { status: response.status, body: (await response.json()) as Record<string, any> };
    }

    beforeAll(async () => {
      db = await createE2EDatabase(dialect);
      gateway = await startInProcessGateway({ DATABASE_URL: db.url, SECRET_REFERENCES_CACHE_TTL_MS: '1' });
      const database = gateway.service(Services.database);
      const [row] = await database.select(workspaces, { fresh: true });
      if (!row) throw new Error('no bootstrap workspace');
      org = row.organisation_id;
      ws = row.id;
      vault.write(`redirect-${dialect}/openai`, { api_key: 'sk-from-vault' });
      const created = await call('POST', '/secret-references', {
        name: 'Team vault',
        manager_type: 'hashicorp_vault',
        auth_config: { address: vault.url, token: VICTIM_TOKEN },
        secret_path: `redirect-${dialect}/openai`,
        secret_key: 'api_key',
        allow_all_workspaces: true,
      });
      expect(created.status).toBe(201);
      id = created.body.id;
    }, 30_000); // a hang guard: a fresh MariaDB database and a gateway can take more than 5 s on a loaded CI machine
    afterAll(async () => {
      await gateway?.close();
      await db?.drop();
    });

    test('a new address with the token sent back masked, or left out, is refused; the token never reaches the new address', async () => {
      const masked = (await call('GET', `/secret-references/${id}`)).body.auth_config;
      expect(masked.token).not.toContain(VICTIM_TOKEN.slice(-4));

      const withMask = await call('PUT', `/secret-references/${id}`, { auth_config: { ...masked, address: ATTACKER_URL } });
      expect(withMask.status).toBe(400);
      expect(withMask.body.error.param).toBe('auth_config.token');
      expect(withMask.body.error.message).toContain('address');

      const leftOut = await call('PUT', `/secret-references/${id}`, { auth_config: { address: ATTACKER_URL } });
      expect(leftOut.status).toBe(400);

      // The reference still reads from the real vault, and the attacker's server has heard nothing.
      const service = gateway.service(AdminServices.secretReferences);
      await Bun.sleep(5);
      expect(await service.resolve(org, ws, [{ target_field: 'k', secret_reference_id: id }])).toEqual({ k: 'sk-from-vault' });
      expect((await call('GET', `/secret-references/${id}`)).body.auth_config.address).toBe(vault.url);
      expect(heard).toEqual([]);
    });

    test('moving the address with the token entered again is allowed: the writer knows what they send', async () => {
      const moved = await call('PUT', `/secret-references/${id}`, { auth_config: { address: ATTACKER_URL, token: 'hvs.attackers-own-token' } });
      expect(moved.status).toBe(200);
      const service = gateway.service(AdminServices.secretReferences);
      await Bun.sleep(5);
      await expect(service.resolve(org, ws, [{ target_field: 'k', secret_reference_id: id }])).rejects.toBeDefined();
      expect(heard.length).toBeGreaterThan(0);
      expect(heard.join('\n')).not.toContain(VICTIM_TOKEN);
      expect(heard.join('\n')).toContain('hvs.attackers-own-token');
      heard.length = 0;
    });
  });
}
