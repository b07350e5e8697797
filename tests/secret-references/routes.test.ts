/**
 * /secret-references over HTTP on an in-process gateway (SQLite and MariaDB): create, list, read, update, delete;
 * 400s naming the field; who may call; credentials masked in answers and sealed in the database; and the gateway's
 * own `secretReferences` service resolving what the routes created, against the local managers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { AdminServices } from '@gateway/admin-kit';
import { apiKeys, hashSecret } from '@gateway/admin-api-keys';
import { users, workspaces } from '@gateway/admin-identity';
import { type Database, Services } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { createE2EDatabase, E2E_DIALECTS, type E2EDatabase, rowsText } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { startAwsSecretsManager } from '../mocks/secret-managers/aws.ts';
import { startAzureKeyVault } from '../mocks/secret-managers/azure.ts';
import { startVault } from '../mocks/secret-managers/vault.ts';

const AWS_KEY = { id: 'AKIDROUTESTEST00001', secret: 'aws-secret-access-key-routes' };
const AZURE = { tenantId: 'tenant-routes', clientId: 'client-routes', clientSecret: 'azure-client-secret-routes' };
const VAULT_TOKENS = ['hvs.routes-token-one', 'hvs.routes-token-two'];
const CREDENTIALS = [AWS_KEY.secret, AWS_KEY.id, AZURE.clientSecret, ...VAULT_TOKENS];
const CACHE_TTL_MS = 300;

const aws = startAwsSecretsManager({ credentials: { [AWS_KEY.id]: { secret: AWS_KEY.secret } } });
const azure = startAzureKeyVault(AZURE);
const vault = startVault({ tokens: VAULT_TOKENS });
afterAll(() => {
  aws.stop();
  azure.stop();
  vault.stop();
});

interface Answer {
  status: number;
  body: Record<string, unknown> & { error?: { message: string; param: string | null; code: string } };
  text: string;
}

for (const dialect of E2E_DIALECTS) {
  describe(`/secret-references over HTTP [${dialect}]`, () => {
    let db: E2EDatabase;
    let gateway: Gateway;
    let database: Database;
    let org: string;
    let wsDefault: string;
    let wsOther: string;
    const created: Record<string, string> = {};

    beforeAll(async () => {
      db = await createE2EDatabase(dialect);
      gateway = await startInProcessGateway({
        DATABASE_URL: db.url,
        GATEWAY_ENCRYPTION_KEY: 'routes-test-encryption-key',
        SECRET_REFERENCES_CACHE_TTL_MS: String(CACHE_TTL_MS),
      });
      database = gateway.service(Services.database);
      const [ws] = await database.select(workspaces, { fresh: true });
      if (!ws) throw new Error('no bootstrap workspace');
      org = ws.organisation_id;
      wsDefault = ws.id;
      wsOther = crypto.randomUUID();
      await database.insert(workspaces, { id: wsOther, organisation_id: org, name: 'Other', slug: 'other' });
    });
    afterAll(async () => {
      await gateway?.close();
      await db?.drop();
    });

    async function call(method: string, path: string, body?: unknown, key = TEST_ADMIN_KEY): Promise<Answer> {
      const response = await gateway.handle(
        new Request(`http://gateway.test/v1${path}`, {
          method,
          headers: { 'x-gateway-api-key': key, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as Answer['body']) : {}, text };
    }

    const vaultBody = (extra: Record<string, unknown> = {}) => ({
      name: 'Team vault',
      manager_type: 'hashicorp_vault',
      auth_config: { address: vault.url, token: VAULT_TOKENS[0] },
      secret_path: `routes-${dialect}/openai`,
      secret_key: 'api_key',
      allowed_workspaces: ['default'],
      ...extra,
    });

    test('create each kind: 201, credentials masked, defaults filled, workspaces as ids', async () => {
      vault.write(`routes-${dialect}/openai`, { api_key: 'sk-vault-1' });
      aws.putSecret(`routes-${dialect}`, JSON.stringify({ api_key: 'sk-aws-1' }));
      azure.setSecret(`routes-${dialect}`, 'sk-azure-1');

      const v = await call('POST', '/secret-references', vaultBody());
      expect(v.status).toBe(201);
      expect(v.body).toMatchObject({
        object: 'secret_reference',
        name: 'Team vault',
        slug: 'team-vault',
        manager_type: 'hashicorp_vault',
        auth_config: { address: vault.url, token: '********', mount: 'secret' },
        secret_path: `routes-${dialect}/openai`,
        secret_key: 'api_key',
        allow_all_workspaces: false,
        allowed_workspaces: [wsDefault],
        organisation_id: org,
      });
      created.vault = v.body.id as string;

      const a = await call('POST', '/secret-references', {
        name: 'AWS prod',
        slug: 'aws-prod',
        manager_type: 'aws_sm',
        auth_config: { region: 'us-east-1', access_key_id: AWS_KEY.id, secret_access_key: AWS_KEY.secret, endpoint: aws.url },
        secret_path: `routes-${dialect}`,
        secret_key: 'api_key',
        allow_all_workspaces: true,
      });
      expect(a.status).toBe(201);
      expect(a.body.auth_config).toEqual({ region: 'us-east-1', access_key_id: 'AKID…0001', secret_access_key: '********', endpoint: aws.url });
      expect(a.body).toMatchObject({ allow_all_workspaces: true, allowed_workspaces: [] });
      created.aws = a.body.id as string;

      const z = await call('POST', '/secret-references', {
        name: 'Azure vault',
        manager_type: 'azure_kv',
        auth_config: { vault_url: azure.url, tenant_id: AZURE.tenantId, client_id: AZURE.clientId, client_secret: AZURE.clientSecret, authority_host: azure.url },
        secret_path: `routes-${dialect}`,
        allowed_workspaces: [wsDefault, 'other'],
      });
      expect(z.status).toBe(201);
      expect(z.body.auth_config).toMatchObject({ client_secret: '********', client_id: AZURE.clientId, tenant_id: AZURE.tenantId });
      expect(z.body.allowed_workspaces).toEqual([wsDefault, wsOther]);
      created.azure = z.body.id as string;

      for (const answer of [v, a, z]) for (const secret of CREDENTIALS) expect(answer.text).not.toContain(secret);
    });

    test('list (pages, filters), get by id and by slug, 404', async () => {
      const all = await call('GET', '/secret-references');
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ object: 'list', total: 3 });
      expect((all.body.data as { id: string }[]).map((r) => r.id)).toEqual([created.vault, created.aws, created.azure]);
      for (const secret of CREDENTIALS) expect(all.text).not.toContain(secret);

      const paged = await call('GET', '/secret-references?page_size=1&current_page=1');
      expect((paged.body.data as { id: string }[]).map((r) => r.id)).toEqual([created.aws]);
      expect(paged.body.total).toBe(3);
      expect((await call('GET', '/secret-references?manager_type=azure_kv')).body.total).toBe(1);
      // The references the other workspace may use: AWS (all workspaces) and Azure.
      const forOther = await call('GET', `/secret-references?workspace_id=${wsOther}`);
      expect((forOther.body.data as { id: string }[]).map((r) => r.id)).toEqual([created.aws, created.azure]);
      expect((await call('GET', '/secret-references?manager_type=gcp')).body.error?.param).toBe('manager_type');

      expect((await call('GET', `/secret-references/${created.aws}`)).body.slug).toBe('aws-prod');
      expect((await call('GET', '/secret-references/aws-prod')).body.id).toBe(created.aws);
      const missing = await call('GET', `/secret-references/${crypto.randomUUID()}`);
      expect([missing.status, missing.body.error?.code]).toEqual([404, 'not_found']);
    });

    test("the gateway's secretReferences service resolves what the routes created; rotation shows after the cache lifetime", async () => {
      const service = gateway.service(AdminServices.secretReferences);
      const mappings = [
        { target_field: 'vault', secret_reference_id: created.vault as string },
        { target_field: 'aws', secret_reference_id: created.aws as string },
        { target_field: 'azure', secret_reference_id: created.azure as string },
      ];
      expect(await service.resolve(org, wsDefault, mappings)).toEqual({ vault: 'sk-vault-1', aws: 'sk-aws-1', azure: 'sk-azure-1' });
      vault.write(`routes-${dialect}/openai`, { api_key: 'sk-vault-2' });
      await Bun.sleep(CACHE_TTL_MS + 100);
      expect(await service.resolve(org, wsDefault, mappings)).toMatchObject({ vault: 'sk-vault-2' });
      // The vault reference is for the default workspace only.
      await expect(service.resolve(org, wsOther, mappings)).rejects.toMatchObject({ status: 403 });
      await service.check(org, [wsDefault], mappings);
      await expect(service.check(org, [wsOther], mappings)).rejects.toMatchObject({ status: 403 });
    });

    test('PUT: a partial update keeps the stored credentials (also when sent back masked); a new token counts at once', async () => {
      const before = await call('GET', `/secret-references/${created.vault}`);
      const renamed = await call('PUT', `/secret-references/${created.vault}`, { name: 'Renamed', auth_config: before.body.auth_config });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ name: 'Renamed', slug: 'team-vault', auth_config: { token: '********' }, allowed_workspaces: [wsDefault] });
      const service = gateway.service(AdminServices.secretReferences);
      const mapping = [{ target_field: 'k', secret_reference_id: created.vault as string }];
      expect(await service.resolve(org, wsDefault, mapping)).toEqual({ k: 'sk-vault-2' });

      // A wrong token: the cached secret is dropped with the change, so the next read fails at once.
      expect((await call('PUT', `/secret-references/${created.vault}`, { auth_config: { token: 'hvs.not-a-token' } })).status).toBe(200);
      await expect(service.resolve(org, wsDefault, mapping)).rejects.toMatchObject({ status: 502, code: 'secret_manager_error' });
      expect((await call('PUT', `/secret-references/${created.vault}`, { auth_config: { token: VAULT_TOKENS[1] } })).status).toBe(200);
      expect(await service.resolve(org, wsDefault, mapping)).toEqual({ k: 'sk-vault-2' });

      // Workspaces: every workspace, then a list again.
      const opened = await call('PUT', `/secret-references/${created.vault}`, { allow_all_workspaces: true });
      expect(opened.body).toMatchObject({ allow_all_workspaces: true, allowed_workspaces: [] });
      expect(await service.resolve(org, wsOther, mapping)).toEqual({ k: 'sk-vault-2' });
      const closed = await call('PUT', `/secret-references/${created.vault}`, { allowed_workspaces: ['default'] });
      expect(closed.body).toMatchObject({ allow_all_workspaces: false, allowed_workspaces: [wsDefault] });
      await expect(service.resolve(org, wsOther, mapping)).rejects.toMatchObject({ status: 403 });
      const neither = await call('PUT', `/secret-references/${created.vault}`, { allow_all_workspaces: false, allowed_workspaces: [] });
      expect([neither.status, neither.body.error?.param]).toEqual([400, 'allowed_workspaces']);

      // Another kind needs its whole auth config.
      const switched = await call('PUT', `/secret-references/${created.vault}`, { manager_type: 'azure_kv' });
      expect([switched.status, switched.body.error?.param]).toEqual([400, 'auth_config.vault_url']);
      const taken = await call('PUT', `/secret-references/${created.vault}`, { slug: 'aws-prod' });
      expect([taken.status, taken.body.error?.code, taken.body.error?.param]).toEqual([409, 'conflict', 'slug']);
      expect((await call('GET', `/secret-references/${created.vault}`)).body).toMatchObject({ manager_type: 'hashicorp_vault', slug: 'team-vault' });
    });

    test('bad input: 400 naming the field, nothing written', async () => {
      const cases: [unknown, string][] = [
        [{ ...vaultBody(), manager_type: undefined }, 'manager_type'],
        [{ ...vaultBody(), manager_type: 'gcp_sm' }, 'manager_type'],
        [{ ...vaultBody(), name: '' }, 'name'],
        [{ ...vaultBody(), auth_config: { address: vault.url } }, 'auth_config.token'],
        [{ ...vaultBody(), auth_config: { address: 'not a url', token: 't' } }, 'auth_config.address'],
        [{ ...vaultBody(), auth_config: { address: 'ftp://vault.example.com', token: 't' } }, 'auth_config.address'],
        [{ ...vaultBody(), auth_config: { address: vault.url, token: 't', extra: 1 } }, 'auth_config.extra'],
        [{ ...vaultBody(), secret_path: '/leading/slash' }, 'secret_path'],
        [{ ...vaultBody(), secret_path: 'a/../b' }, 'secret_path'],
        [{ ...vaultBody(), allowed_workspaces: [] }, 'allowed_workspaces'],
        [{ ...vaultBody(), allow_all_workspaces: true }, 'allowed_workspaces'],
        [{ ...vaultBody(), allowed_workspaces: ['default', 'no-such-workspace'] }, 'allowed_workspaces[1]'],
        [{ ...vaultBody(), slug: 'Not A Slug' }, 'slug'],
        [{ ...vaultBody(), unknown_field: true }, 'unknown_field'],
        [{ ...vaultBody(), manager_type: 'aws_sm', auth_config: { region: 'mars-1', access_key_id: AWS_KEY.id, secret_access_key: 'x' } }, 'auth_config.region'],
        [{ ...vaultBody(), manager_type: 'aws_sm', auth_config: { region: 'us-east-1', access_key_id: AWS_KEY.id, secret_access_key: 'x', external_id: 'abc' } }, 'auth_config.external_id'],
        [{ ...vaultBody(), manager_type: 'azure_kv', auth_config: { vault_url: azure.url, tenant_id: 't', client_id: 'c', client_secret: 's' }, secret_path: 'bad_name' }, 'secret_path'],
        [{ ...vaultBody(), manager_type: 'azure_kv', auth_config: { vault_url: azure.url, tenant_id: 't', client_id: 'c' } }, 'auth_config.client_secret'],
        // A private address that is not trusted: the host guard refuses it.
        [{ ...vaultBody(), auth_config: { address: 'http://10.1.2.3:8200', token: 't' } }, 'auth_config.address'],
      ];
      for (const [body, param] of cases) {
        const answer = await call('POST', '/secret-references', body);
        expect([answer.status, answer.body.error?.param, answer.body.error?.code]).toEqual([400, param, 'invalid_request']);
      }
      expect((await call('POST', '/secret-references')).status).toBe(400);
      const taken = await call('POST', '/secret-references', vaultBody({ slug: 'aws-prod' }));
      expect([taken.status, taken.body.error?.param]).toEqual([409, 'slug']);
      expect((await call('GET', '/secret-references')).body.total).toBe(3);
    });

    test('who may call: organisation admins and owners and organisation-service keys with the scopes', async () => {
      const key = async (type: 'organisation-service' | 'workspace-service' | 'workspace-user', scopes: string[], userId: string | null = null) => {
        const secret = `gw-routes-${crypto.randomUUID()}`;
        await database.insert(apiKeys, {
          organisation_id: org,
          workspace_id: type === 'organisation-service' ? null : wsDefault,
          user_id: userId,
          name: type,
          type,
          hash: hashSecret(secret),
          prefix_hint: secret.slice(0, 6),
          scopes,
        });
        return secret;
      };
      const user = async (role: 'owner' | 'admin' | 'member') => {
        const id = crypto.randomUUID();
        await database.insert(users, { id, organisation_id: org, email: `${id}@example.com`, role });
        return id;
      };
      const readOnly = await key('organisation-service', ['secret_references.read']);
      expect((await call('GET', '/secret-references', undefined, readOnly)).status).toBe(200);
      expect((await call('POST', '/secret-references', vaultBody({ slug: 'ro' }), readOnly)).status).toBe(403);
      expect((await call('DELETE', `/secret-references/${created.azure}`, undefined, readOnly)).status).toBe(403);
      const noScope = await key('organisation-service', ['integrations.read']);
      expect((await call('GET', '/secret-references', undefined, noScope)).status).toBe(403);
      const workspaceService = await key('workspace-service', ['*']);
      expect((await call('GET', '/secret-references', undefined, workspaceService)).status).toBe(403);
      const member = await key('workspace-user', ['*'], await user('member'));
      expect((await call('GET', '/secret-references', undefined, member)).status).toBe(403);
      const admin = await key('workspace-user', ['secret_references.read', 'secret_references.write'], await user('admin'));
      const byAdmin = await call('POST', '/secret-references', vaultBody({ name: 'By an admin' }), admin);
      expect(byAdmin.status).toBe(201);
      expect((await call('DELETE', `/secret-references/${byAdmin.body.id}`, undefined, admin)).status).toBe(403);
      const owner = await key('workspace-user', ['secret_references.delete'], await user('owner'));
      expect((await call('DELETE', `/secret-references/${byAdmin.body.id}`, undefined, owner)).status).toBe(204);
    });

    test('DELETE: 204, then 404; mappings to it are unknown (400)', async () => {
      const gone = await call('DELETE', `/secret-references/${created.azure}`);
      expect(gone.status).toBe(204);
      expect((await call('GET', `/secret-references/${created.azure}`)).status).toBe(404);
      expect((await call('DELETE', `/secret-references/${created.azure}`)).status).toBe(404);
      const service = gateway.service(AdminServices.secretReferences);
      await expect(service.resolve(org, wsDefault, [{ target_field: 'k', secret_reference_id: created.azure as string }])).rejects.toMatchObject({ status: 400 });
      await expect(service.check(org, 'all', [{ target_field: 'k', secret_reference_id: created.azure as string }])).rejects.toMatchObject({ status: 400 });
    });

    test('no credential is stored in clear anywhere in the database (references, audit log, …)', async () => {
      const rows = await db.query('SELECT * FROM secret_references');
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(String(row.auth_config)).toStartWith('v2:');
      let text = '';
      for (const table of await db.tables()) text += rowsText(await db.query(`SELECT * FROM ${table}`));
      for (const secret of [...CREDENTIALS, 'hvs.not-a-token']) expect(text).not.toContain(secret);
      if ((await db.tables()).includes('audit_logs')) {
        const audit = rowsText(await db.query("SELECT * FROM audit_logs WHERE resource = 'secret_reference'"));
        expect(audit).toContain(created.vault as string);
      }
    });
  });
}
