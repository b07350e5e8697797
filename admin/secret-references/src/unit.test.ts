import { describe, expect, test } from 'bun:test';
import { SecretBox } from '@gateway/admin-kit';
import { bootstrapOrganisation, identityMigrations } from '@gateway/admin-identity';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { type AdminRequest, type AdminRoute, type Caller, GatewayError, type Principal } from '@gateway/sdk';
import { MemoryStateStore } from '@gateway/state';
import { TtlCache } from './cache.ts';
import { ManagerFailure } from './errors.ts';
import { pick } from './extract.ts';
import { MASK, maskAuth, mergeAuth } from './kinds.ts';
import { secretReferenceRoutes } from './routes.ts';
import { SecretReferenceService } from './service.ts';
import { secretReferenceMigrations } from './tables.ts';

describe('pick: secret_key and value_format', () => {
  const text = { kind: 'text', value: '{"a":"1","n":{"x":2},"j":"[1,2]"}' } as const;
  const map = { kind: 'map', value: { a: '1', n: { x: 2 }, j: '[1,2]' } } as const;

  test('whole values and keys, as strings or parsed', () => {
    expect(pick(text, undefined)).toBe(text.value);
    expect(pick(text, 'a')).toBe('1');
    expect(pick(map, 'a')).toBe('1');
    expect(pick(text, 'n')).toBe('{"x":2}');
    expect(pick(map, 'n', 'json')).toEqual({ x: 2 });
    expect(pick(map, 'j', 'json')).toEqual([1, 2]);
    expect(pick(text, undefined, 'json')).toEqual({ a: '1', n: { x: 2 }, j: '[1,2]' });
    expect(pick(map, undefined)).toBe('{"a":"1","n":{"x":2},"j":"[1,2]"}');
  });

  test('failures name the key, never the value', () => {
    const fail = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        if (error instanceof ManagerFailure) return error.detail;
      }
      throw new Error('did not fail');
    };
    expect(fail(() => pick({ kind: 'text', value: 'plain-secret' }, 'a'))).toBe('secret_key "a" was given but the secret is not a JSON object');
    expect(fail(() => pick(map, 'zz'))).toBe('the secret has no key "zz"');
    expect(fail(() => pick(map, 'toString'))).toBe('the secret has no key "toString"');
    const bad = fail(() => pick({ kind: 'text', value: 'not-json-secret' }, undefined, 'json'));
    expect(bad).not.toContain('not-json-secret');
  });
});

describe('auth config masking and merging', () => {
  const stored = { address: 'https://vault.example.com', token: 'hvs.stored', mount: 'secret' };

  test('credentials masked, identifiers hinted', () => {
    expect(maskAuth('hashicorp_vault', stored)).toEqual({ address: 'https://vault.example.com', token: MASK, mount: 'secret' });
    expect(maskAuth('aws_sm', { region: 'us-east-1', access_key_id: 'AKIAABCDEFGHWXYZ', secret_access_key: 's', session_token: 't' })).toEqual({
      region: 'us-east-1',
      access_key_id: 'AKIA…WXYZ',
      secret_access_key: MASK,
      session_token: MASK,
    });
  });

  test('merge: omitted and masked values keep the stored ones, null removes, new values replace', () => {
    expect(mergeAuth('hashicorp_vault', stored, { token: MASK, namespace: 'ns' })).toEqual({ ...stored, namespace: 'ns' });
    expect(mergeAuth('hashicorp_vault', stored, { token: 'hvs.new' })).toEqual({ ...stored, token: 'hvs.new' });
    expect(mergeAuth('hashicorp_vault', { ...stored, namespace: 'ns' }, { namespace: null })).toEqual(stored);
    // A masked value for a field never stored is kept as given (and then fails validation as it should).
    expect(mergeAuth('aws_sm', { region: 'us-east-1' }, { secret_access_key: MASK })).toEqual({ region: 'us-east-1', secret_access_key: MASK });
  });
});

describe('TtlCache', () => {
  test('concurrent misses share one load; values expire; failures are not kept', async () => {
    const cache = new TtlCache<number>();
    let loads = 0;
    const load = async () => {
      loads++;
      await Bun.sleep(10);
      return loads;
    };
    expect(await Promise.all([cache.get('k', load, 50), cache.get('k', load, 50), cache.get('k', load, 50)])).toEqual([1, 1, 1]);
    expect(await cache.get('k', load, 50)).toBe(1);
    await Bun.sleep(60);
    expect(await cache.get('k', load, 50)).toBe(2);
    await expect(cache.get('bad', async () => Promise.reject(new Error('down')), 1000)).rejects.toThrow('down');
    expect(await cache.get('bad', async () => 7, 1000)).toBe(7);
    cache.deletePrefix('b');
    expect(await cache.get('bad', async () => 8, 1000)).toBe(8);
  });

  test('bounded: the oldest entries go first', async () => {
    const cache = new TtlCache<number>(2);
    await cache.get('a', async () => 1, 10_000);
    await cache.get('b', async () => 2, 10_000);
    await cache.get('c', async () => 3, 10_000);
    expect(await cache.get('a', async () => 10, 10_000)).toBe(10);
    expect(await cache.get('c', async () => 30, 10_000)).toBe(3);
  });
});

for (const dialect of DIALECTS) {
  describe(`routes fill the audit record without credentials [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('create, update and delete leave audit records with masked credentials only', async () => {
      const { database } = await t.fresh();
      await database.migrate([...identityMigrations, ...secretReferenceMigrations]);
      const boot = await bootstrapOrganisation(database);
      if (!boot.created) throw new Error('no bootstrap');
      const box = new SecretBox('unit-test-encryption-key');
      const state = new MemoryStateStore();
      const service = new SecretReferenceService({ database, box, state, refreshMs: 0 });
      await service.start();
      const routes = secretReferenceRoutes({ database, box, service });
      const route = (method: string, path: string) => routes.find((r) => r.method === method && r.path === path) as AdminRoute & { public?: false };
      const caller: Caller = { apiKeyId: 'k', organisationId: boot.organisationId, workspaceId: boot.workspaceId, scopes: ['*'], keyType: 'organisation-service', userId: null };
      const principal: Principal = { caller, orgRole: 'admin', isOrgAdmin: true, workspaceRole: async () => 'admin' };
      const request = (body: unknown, params: Record<string, string> = {}): AdminRequest => ({ caller, principal, params, query: new URLSearchParams(), body, headers: new Headers(), audit: {} });

      const create = request({
        name: 'AWS',
        manager_type: 'aws_sm',
        auth_config: { region: 'eu-west-1', access_key_id: 'AKIAUNITTESTKEY00001', secret_access_key: 'unit-secret-access-key', session_token: 'unit-session-token' },
        secret_path: 'prod/key',
        allow_all_workspaces: true,
      });
      const created = (await (await route('POST', '/secret-references').handle(create)).json()) as { id: string };
      expect(create.audit).toMatchObject({ resource: 'secret_reference', resourceId: created.id, action: 'create', workspaceId: null });
      const update = request({ auth_config: { secret_access_key: 'unit-secret-access-key-2' } }, { id: created.id });
      await route('PUT', '/secret-references/:id').handle(update);
      expect(update.audit).toMatchObject({ action: 'update', resourceId: created.id });
      const remove = request(undefined, { id: created.id });
      expect((await route('DELETE', '/secret-references/:id').handle(remove)).status).toBe(204);
      expect(remove.audit).toMatchObject({ action: 'delete', resourceId: created.id });

      const audited = JSON.stringify([create.audit, update.audit, remove.audit]);
      for (const secret of ['unit-secret-access-key', 'unit-session-token', 'AKIAUNITTESTKEY00001', 'AKIA…0001']) expect(audited).not.toContain(secret);
      expect((update.audit.after as { auth_config: Record<string, string> }).auth_config).toEqual({
        region: 'eu-west-1',
        access_key_id: MASK,
        secret_access_key: MASK,
        session_token: MASK,
      });
      // A bad body leaves nothing behind: the audit record stays empty and the 400 names the field.
      const bad = request({ name: 'x', manager_type: 'aws_sm', auth_config: {}, secret_path: 'p', allow_all_workspaces: true });
      const err = await Promise.resolve(route('POST', '/secret-references').handle(bad)).catch((e: unknown) => e);
      expect(err instanceof GatewayError && [err.status, err.param]).toEqual([400, 'auth_config.region']);
      expect(bad.audit).toEqual({});
      service.stop();
      await state.close();
    });
  });
}
