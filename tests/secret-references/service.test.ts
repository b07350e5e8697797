/**
 * The `secretReferences` service on a real database (SQLite and MariaDB) against the local managers: every kind
 * resolves, rotation is seen after the cache lifetime, concurrent misses share a fetch, workspaces are enforced, and
 * failures are 502s that name the reference but carry no credential or secret.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { SecretBox, type SecretMapping } from '@gateway/admin-kit';
import { bootstrapOrganisation, identityMigrations, workspaces } from '@gateway/admin-identity';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { testLogger } from '@gateway/sdk/testing';
import { HostGuard } from '@gateway/pipeline';
import { type Database, GatewayError } from '@gateway/sdk';
import { MemoryStateStore } from '@gateway/state';
import { SecretReferenceService } from '../../admin/secret-references/src/service.ts';
import { secretReferenceMigrations, secretReferences } from '../../admin/secret-references/src/tables.ts';
import { startAwsSecretsManager } from '../mocks/secret-managers/aws.ts';
import { startAzureKeyVault } from '../mocks/secret-managers/azure.ts';
import { startVault } from '../mocks/secret-managers/vault.ts';

const AWS_KEY = { id: 'AKIDSERVICETEST0001', secret: 'aws-secret-key-service-test' };
const AZURE = { tenantId: 'tenant-1', clientId: 'client-1', clientSecret: 'azure-secret-service-test' };
const VAULT_TOKEN = 'hvs.service-test-token';
const SECRET_VALUES = ['sk-aws-value', 'sk-azure-value', 'sk-vault-v1', 'sk-vault-v2', '{"nested":true}'];
const CREDENTIALS = [AWS_KEY.secret, AZURE.clientSecret, VAULT_TOKEN];

const aws = startAwsSecretsManager({ credentials: { [AWS_KEY.id]: { secret: AWS_KEY.secret } } });
const azure = startAzureKeyVault(AZURE);
const vault = startVault({ tokens: [VAULT_TOKEN] });
afterAll(() => {
  aws.stop();
  azure.stop();
  vault.stop();
});

const box = new SecretBox('service-test-encryption-key');

async function rejection(p: Promise<unknown>): Promise<GatewayError> {
  try {
    await p;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('did not reject');
}

for (const dialect of DIALECTS) {
  describe(`secretReferences service [${dialect}]`, () => {
    const t = useTestDatabase(dialect);
    let database: Database;
    let org: string;
    let wsA: string;
    let wsB: string;
    const services: SecretReferenceService[] = [];
    const logger = testLogger();

    beforeAll(async () => {
      database = t.database;
      await database.migrate([...identityMigrations, ...secretReferenceMigrations]);
      const boot = await bootstrapOrganisation(database);
      if (!boot.created) throw new Error('no bootstrap');
      org = boot.organisationId;
      wsA = boot.workspaceId;
      wsB = crypto.randomUUID();
      await database.insert(workspaces, { id: wsB, organisation_id: org, name: 'B', slug: 'b' });
    });
    afterAll(() => services.forEach((s) => s.stop()));

    async function service(cacheTtlMs = 30_000): Promise<SecretReferenceService> {
      const s = new SecretReferenceService({ database, box, state: new MemoryStateStore(), hostGuard: new HostGuard(['127.0.0.1']), logger, cacheTtlMs, timeoutMs: 2_000, refreshMs: 0 });
      await s.start();
      services.push(s);
      return s;
    }

    async function reference(
      manager_type: 'aws_sm' | 'azure_kv' | 'hashicorp_vault',
      auth: Record<string, unknown>,
      secret_path: string,
      extra: { secret_key?: string; allowed?: string[] } = {},
    ): Promise<string> {
      const id = crypto.randomUUID();
      await database.insert(secretReferences, {
        id,
        organisation_id: org,
        name: `ref ${id.slice(0, 8)}`,
        slug: `ref-${id.slice(0, 8)}`,
        manager_type,
        auth_config: box.sealJson(auth, { table: 'secret_references', id, field: 'auth_config' }),
        secret_path,
        secret_key: extra.secret_key ?? null,
        allow_all_workspaces: extra.allowed === undefined,
        allowed_workspaces: extra.allowed ?? [],
      });
      return id;
    }

    const awsAuth = () => ({ region: 'us-east-1', access_key_id: AWS_KEY.id, secret_access_key: AWS_KEY.secret, endpoint: aws.url });
    const azureAuth = () => ({ vault_url: azure.url, tenant_id: AZURE.tenantId, client_id: AZURE.clientId, client_secret: AZURE.clientSecret, authority_host: azure.url });
    const vaultAuth = (token = VAULT_TOKEN) => ({ address: vault.url, token, mount: 'secret' });

    test('each kind resolves: whole values, secret_key (reference default and mapping override), value_format json', async () => {
      aws.putSecret(`svc-${dialect}/openai`, JSON.stringify({ api_key: 'sk-aws-value', org: 'org-1', extra: '{"nested":true}' }));
      azure.setSecret(`svc-${dialect}-key`, 'sk-azure-value');
      vault.write(`svc-${dialect}/openai`, { api_key: 'sk-vault-v1', limits: { rpm: 10 } });
      const awsRef = await reference('aws_sm', awsAuth(), `svc-${dialect}/openai`, { secret_key: 'api_key' });
      const azureRef = await reference('azure_kv', azureAuth(), `svc-${dialect}-key`);
      const vaultRef = await reference('hashicorp_vault', vaultAuth(), `svc-${dialect}/openai`, { secret_key: 'api_key' });
      const s = await service();
      const mappings: SecretMapping[] = [
        { target_field: 'api_key', secret_reference_id: awsRef },
        { target_field: 'openai_organization', secret_reference_id: awsRef, secret_key: 'org' },
        { target_field: 'extra', secret_reference_id: awsRef, secret_key: 'extra', value_format: 'json' },
        { target_field: 'azure.key', secret_reference_id: azureRef },
        { target_field: 'vault_key', secret_reference_id: vaultRef },
        { target_field: 'limits', secret_reference_id: vaultRef, secret_key: 'limits', value_format: 'json' },
        { target_field: 'limits_text', secret_reference_id: vaultRef, secret_key: 'limits' },
      ];
      const readsBefore = aws.reads.length;
      expect(await s.resolve(org, wsA, mappings)).toEqual({
        api_key: 'sk-aws-value',
        openai_organization: 'org-1',
        extra: { nested: true },
        'azure.key': 'sk-azure-value',
        vault_key: 'sk-vault-v1',
        limits: { rpm: 10 },
        limits_text: '{"rpm":10}',
      });
      // Three mappings of one reference: one read.
      expect(aws.reads.length).toBe(readsBefore + 1);
      // By slug as well as by id.
      expect(await s.resolve(org, wsA, [{ target_field: 'k', secret_reference_id: `ref-${azureRef.slice(0, 8)}` }])).toEqual({ k: 'sk-azure-value' });
    });

    test('a secret rotated in Vault (a new KV v2 version) is picked up after the cache lifetime, not before', async () => {
      vault.write(`rotate-${dialect}`, { api_key: 'sk-vault-v1' });
      const ref = await reference('hashicorp_vault', vaultAuth(), `rotate-${dialect}`, { secret_key: 'api_key' });
      const s = await service(400);
      const mappings = [{ target_field: 'api_key', secret_reference_id: ref }];
      expect(await s.resolve(org, wsA, mappings)).toEqual({ api_key: 'sk-vault-v1' });
      vault.write(`rotate-${dialect}`, { api_key: 'sk-vault-v2' });
      expect(await s.resolve(org, wsA, mappings)).toEqual({ api_key: 'sk-vault-v1' });
      await Bun.sleep(450);
      expect(await s.resolve(org, wsA, mappings)).toEqual({ api_key: 'sk-vault-v2' });
    });

    test('concurrent misses share one fetch', async () => {
      vault.write(`shared-${dialect}`, { v: 'x' });
      const ref = await reference('hashicorp_vault', vaultAuth(), `shared-${dialect}`, { secret_key: 'v' });
      const s = await service();
      const before = vault.reads;
      const results = await Promise.all(Array.from({ length: 20 }, () => s.resolve(org, wsA, [{ target_field: 'k', secret_reference_id: ref }])));
      expect(results.every((r) => r.k === 'x')).toBe(true);
      expect(vault.reads).toBe(before + 1);
    });

    test('workspaces: a workspace not allowed gets 403 on resolve and check; allowed ones pass', async () => {
      vault.write(`ws-${dialect}`, { v: 'only-a' });
      const onlyA = await reference('hashicorp_vault', vaultAuth(), `ws-${dialect}`, { secret_key: 'v', allowed: [wsA] });
      const everyone = await reference('hashicorp_vault', vaultAuth(), `ws-${dialect}`, { secret_key: 'v' });
      const s = await service();
      const mapping = [{ target_field: 'k', secret_reference_id: onlyA }];
      expect(await s.resolve(org, wsA, mapping)).toEqual({ k: 'only-a' });
      const before = vault.reads;
      const refused = await rejection(s.resolve(org, wsB, mapping));
      expect([refused.status, refused.code]).toEqual([403, 'forbidden']);
      expect(vault.reads).toBe(before); // refused before any fetch

      await s.check(org, [wsA], mapping);
      expect((await rejection(s.check(org, [wsA, wsB], mapping))).status).toBe(403);
      expect((await rejection(s.check(org, 'all', mapping))).status).toBe(403);
      await s.check(org, 'all', [{ target_field: 'k', secret_reference_id: everyone }]);
      expect(await s.resolve(org, wsB, [{ target_field: 'k', secret_reference_id: everyone }])).toEqual({ k: 'only-a' });
    });

    test('check: unknown references, other organisations and malformed mappings are 400s naming the field', async () => {
      const s = await service();
      const ref = await reference('hashicorp_vault', vaultAuth(), 'x');
      const unknown = await rejection(s.check(org, [wsA], [{ target_field: 'a', secret_reference_id: ref }, { target_field: 'b', secret_reference_id: crypto.randomUUID() }]));
      expect([unknown.status, unknown.param]).toEqual([400, 'secret_mappings[1].secret_reference_id']);
      // Another organisation's reference is unknown here.
      expect((await rejection(s.check(crypto.randomUUID(), 'all', [{ target_field: 'a', secret_reference_id: ref }]))).status).toBe(400);
      expect((await rejection(s.resolve(crypto.randomUUID(), wsA, [{ target_field: 'a', secret_reference_id: ref }]))).status).toBe(400);
      const bad = [
        [{ target_field: '', secret_reference_id: ref }, 'secret_mappings[0].target_field'],
        [{ target_field: 'a..b', secret_reference_id: ref }, 'secret_mappings[0].target_field'],
        [{ target_field: 'a', secret_reference_id: '' }, 'secret_mappings[0].secret_reference_id'],
        [{ target_field: 'a', secret_reference_id: ref, value_format: 'yaml' }, 'secret_mappings[0].value_format'],
        [{ target_field: 'a', secret_reference_id: ref, secret_key: '' }, 'secret_mappings[0].secret_key'],
      ] as const;
      for (const [mapping, param] of bad) {
        const err = await rejection(s.check(org, 'all', [mapping as unknown as SecretMapping]));
        expect([err.status, err.param]).toEqual([400, param]);
      }
      const twice = await rejection(s.check(org, 'all', [{ target_field: 'a', secret_reference_id: ref }, { target_field: 'a', secret_reference_id: ref }]));
      expect([twice.status, twice.param]).toEqual([400, 'secret_mappings[1].target_field']);
    });

    test('manager failures are 502 secret_manager_error naming the reference, never a credential or a secret', async () => {
      const s = await service();
      const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
      const deadPort = closed.port;
      closed.stop(true);
      vault.write(`fail-${dialect}`, { api_key: 'sk-vault-v1', bad_json: 'sk-vault-v2 is not json' });
      const cases: [string, Record<string, unknown>, string, string, string | undefined, 'string' | 'json' | undefined][] = [
        ['hashicorp_vault', vaultAuth('hvs.wrong-token-xyz'), `fail-${dialect}`, 'Vault answered 403: permission denied', 'api_key', undefined],
        ['hashicorp_vault', { ...vaultAuth(), address: `http://127.0.0.1:${deadPort}` }, `fail-${dialect}`, 'Vault could not be reached', 'api_key', undefined],
        ['aws_sm', awsAuth(), `no-such-${dialect}`, 'ResourceNotFoundException', undefined, undefined],
        ['aws_sm', { ...awsAuth(), secret_access_key: 'not-the-key' }, `svc-${dialect}/openai`, 'InvalidSignatureException', undefined, undefined],
        ['azure_kv', { ...azureAuth(), client_secret: 'not-the-secret' }, 'k', 'invalid_client', undefined, undefined],
        ['hashicorp_vault', vaultAuth(), `fail-${dialect}`, 'the secret has no key "missing"', 'missing', undefined],
        ['hashicorp_vault', vaultAuth(), `fail-${dialect}`, 'value_format is json but the value of "bad_json" is not valid JSON', 'bad_json', 'json'],
      ];
      for (const [type, auth, path, expected, key, format] of cases) {
        const ref = await reference(type as 'aws_sm', auth, path);
        const err = await rejection(s.resolve(org, wsA, [{ target_field: 'x', secret_reference_id: ref, secret_key: key, value_format: format }]));
        expect([err.status, err.code, err.type]).toEqual([502, 'secret_manager_error', 'upstream_error']);
        expect(err.message).toContain(`ref-${ref.slice(0, 8)}`);
        expect(err.message).toContain(expected);
        const body = JSON.stringify(err.toBody());
        for (const leak of [...CREDENTIALS, ...SECRET_VALUES, 'hvs.wrong-token-xyz', 'not-the-key', 'not-the-secret']) expect(body).not.toContain(leak);
      }
      const logged = JSON.stringify(logger.records);
      expect(logged).toContain('could not read a secret from its manager');
      for (const leak of [...CREDENTIALS, ...SECRET_VALUES, 'hvs.wrong-token-xyz', 'not-the-key', 'not-the-secret']) expect(logged).not.toContain(leak);
    });

    test('a failed read is not cached: the next request tries again', async () => {
      const s = await service();
      const ref = await reference('hashicorp_vault', vaultAuth(), `later-${dialect}`, { secret_key: 'k' });
      expect((await rejection(s.resolve(org, wsA, [{ target_field: 'x', secret_reference_id: ref }]))).status).toBe(502);
      vault.write(`later-${dialect}`, { k: 'now-here' });
      expect(await s.resolve(org, wsA, [{ target_field: 'x', secret_reference_id: ref }])).toEqual({ x: 'now-here' });
    });
  });
}
