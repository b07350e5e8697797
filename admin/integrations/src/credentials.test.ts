import { describe, expect, test } from 'bun:test';
import { declaredFields } from '@gateway/admin-kit';
import { thrown, workspaceFields } from '@gateway/admin-kit/testing';
import type { ProviderAdapter } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import {
  checkCredentials,
  checkMappingTargets,
  integrationFields,
  keepMasked,
  keepMaskedKey,
  maskCredentials,
  maskValue,
  refuseRedirect,
  toTarget,
} from './credentials.ts';
import { checkSlug, freeSlug, slugFromName } from './slugs.ts';

const declared = workspaceFields();
const fields = integrationFields(declared);

describe('credentials', () => {
  test('masks show the last 4 characters of values of 16 characters or more, nothing of shorter ones', () => {
    expect(maskValue('sk-live-0123456789abcd')).toBe('****abcd');
    expect(maskValue('0123456789abcdef')).toBe('****cdef');
    expect(maskValue('0123456789abcde')).toBe('****');
    expect(maskValue('short-key')).toBe('****');
    const masked = maskCredentials(
      {
        key: 'sk-live-0123456789abcd',
        configurations: {
          svcA_secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
          svcA_role_arn: 'arn:aws:iam::123456789012:role/r',
          svcA_region: 'us-east-1',
          svcC_service_account_json: { private_key: '-----BEGIN PRIVATE KEY-----abc', nested: ['0123456789abcdef'] },
        },
      },
      declared,
    );
    expect(masked).toEqual({
      key: '****abcd',
      configurations: {
        svcA_secret_access_key: '****EKEY',
        svcA_role_arn: 'arn:aws:iam::123456789012:role/r',
        svcA_region: 'us-east-1',
        svcC_service_account_json: { private_key: '****-abc', nested: ['****cdef'] },
      },
    });
  });

  test('a masked value sent back keeps the stored secret; a new value replaces it; null removes the key', () => {
    const current = { svcA_secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', svcA_region: 'us-east-1' };
    expect(keepMasked({ svcA_secret_access_key: '****EKEY', svcA_region: 'us-east-1' }, current, declared)).toEqual({
      configurations: current,
      kept: ['svcA_secret_access_key'],
    });
    expect(keepMasked({ svcA_secret_access_key: 'new-secret-value-123' }, current, declared)).toEqual({ configurations: { svcA_secret_access_key: 'new-secret-value-123' }, kept: [] });
    expect(keepMaskedKey('****abcd', 'sk-live-0123456789abcd')).toBe('sk-live-0123456789abcd');
    expect(keepMaskedKey('sk-other', 'sk-live-0123456789abcd')).toBe('sk-other');
    expect(keepMaskedKey(null, 'sk-live-0123456789abcd')).toBeUndefined();
    expect(keepMaskedKey(undefined, 'sk-live-0123456789abcd')).toBe('sk-live-0123456789abcd');
  });

  test('a kept secret with a changed destination field is a 400 naming the secret; other changes pass', () => {
    const before = { svcA_secret_access_key: 's', svcA_region: 'us-east-1', svcA_session_token: 't' };
    const error = thrown(() => refuseRedirect('bedrock', before, { ...before, svcA_region: 'eu-west-1' }, ['configurations.svcA_secret_access_key'], declared));
    expect({ status: error.status, param: error.param }).toEqual({ status: 400, param: 'configurations.svcA_secret_access_key' });
    expect(error.message).toContain('configurations.svcA_region');
    expect(() => refuseRedirect('bedrock', before, { ...before, svcA_region: 'eu-west-1' }, [], declared)).not.toThrow();
    expect(() => refuseRedirect('openai', { custom_host: 'https://a.example/v1' }, { custom_host: 'https://a.example/v1', svcD_project: 'p' }, ['key'], declared)).not.toThrow();
    expect(thrown(() => refuseRedirect('openai', {}, { custom_host: 'https://b.example/v1' }, ['key'], declared)).param).toBe('key');
    // svcA_region is a destination of bedrock only: for another provider it decides nothing.
    expect(() => refuseRedirect('openai', before, { ...before, svcA_region: 'eu-west-1' }, ['key'], declared)).not.toThrow();
  });

  test("only the provider's clearedOnChange fields (and the key) must be entered again when a destination moves", () => {
    const zeta: ProviderAdapter = {
      id: 'zeta',
      baseUrl: () => 'https://api.example/v1',
      authorize: (call) => call,
      endpoints: {},
      targetFields: { fields: { zeta_tenant: Type.String(), zeta_cookie: Type.String(), zeta_salt: Type.String() }, secret: ['zeta_cookie', 'zeta_salt'], destination: ['zeta_tenant'], clearedOnChange: ['zeta_cookie'] },
    };
    const own = declaredFields([zeta]);
    const before = { zeta_tenant: 't1', zeta_cookie: 'c', zeta_salt: 's' };
    const after = { ...before, zeta_tenant: 't2' };
    expect(() => refuseRedirect('zeta', before, after, ['configurations.zeta_salt'], own)).not.toThrow();
    expect(thrown(() => refuseRedirect('zeta', before, after, ['configurations.zeta_salt', 'configurations.zeta_cookie'], own)).param).toBe('configurations.zeta_cookie');
    expect(thrown(() => refuseRedirect('zeta', before, after, ['key'], own)).param).toBe('key');
    // Its integration schema is its declaration's: the fields, and nothing else.
    const schema = integrationFields(own);
    expect([...schema.known]).toEqual(['custom_host', 'zeta_tenant', 'zeta_cookie', 'zeta_salt']);
    expect(thrown(() => checkMappingTargets([{ target_field: 'configurations.svcA_secret_access_key' }], schema)).status).toBe(400);
  });

  test('entraFederated: Azure providers, tenant and client id (given or mapped), never a client secret', () => {
    const ok = { svcB_entra_tenant_id: 't', svcB_entra_client_id: 'c' };
    expect(() => checkCredentials('azure-openai', ok, 'entraFederated', new Set())).not.toThrow();
    expect(() => checkCredentials('azure-ai', { svcB_entra_tenant_id: 't' }, 'entraFederated', new Set(['configurations.svcB_entra_client_id']))).not.toThrow();
    expect(thrown(() => checkCredentials('openai', ok, 'entraFederated', new Set())).param).toBe('auth_mode');
    expect(thrown(() => checkCredentials('azure-openai', { svcB_entra_client_id: 'c' }, 'entraFederated', new Set())).param).toBe('configurations.svcB_entra_tenant_id');
    expect(thrown(() => checkCredentials('azure-openai', { ...ok, svcB_entra_client_secret: 's' }, 'entraFederated', new Set())).param).toBe(
      'configurations.svcB_entra_client_secret',
    );
    expect(thrown(() => checkCredentials('azure-openai', ok, 'entraFederated', new Set(['configurations.svcB_entra_client_secret']))).status).toBe(400);
    expect(thrown(() => checkCredentials('openai', { custom_host: 'nope' }, null, new Set())).param).toBe('configurations.custom_host');
  });

  test('secret mapping targets: key or a known configuration field, each once', () => {
    expect(() => checkMappingTargets([{ target_field: 'key' }, { target_field: 'configurations.svcC_service_account_json.private_key' }], fields)).not.toThrow();
    expect(thrown(() => checkMappingTargets([{ target_field: 'configurations.unknown' }], fields)).param).toBe('secret_mappings[0].target_field');
    expect(thrown(() => checkMappingTargets([{ target_field: 'key' }, { target_field: 'key' }], fields)).param).toBe('secret_mappings[1].target_field');
    expect(thrown(() => checkMappingTargets([{ target_field: 'api_key' }], fields)).status).toBe(400);
  });

  test('the target: configurations as fields, the key as api_key', () => {
    expect(toTarget('openai', { key: 'k', configurations: { custom_host: 'http://h' } })).toEqual({ provider: 'openai', api_key: 'k', custom_host: 'http://h' });
    expect(toTarget('bedrock', { configurations: { svcA_region: 'us-east-1' } })).toEqual({ provider: 'bedrock', svcA_region: 'us-east-1' });
    // entraFederated reaches the Azure adapter as a target field only stored integrations carry.
    const federated = { configurations: { svcB_entra_tenant_id: 't', svcB_entra_client_id: 'c' } };
    expect({ ...toTarget('azure-openai', federated, 'entraFederated') }).toEqual({
      provider: 'azure-openai',
      svcB_entra_tenant_id: 't',
      svcB_entra_client_id: 'c',
      svcB_entra_auth_mode: 'entraFederated',
    } as Record<string, unknown>);
    expect(toTarget('azure-openai', federated, null)).not.toHaveProperty('svcB_entra_auth_mode');
  });
});

describe('slugs', () => {
  const providers = new Set(['openai', 'anthropic']);
  test('shape, not an id, not a provider name', () => {
    expect(checkSlug('team-openai', 'slug', providers)).toBe('team-openai');
    expect(thrown(() => checkSlug('Team', 'slug', providers)).param).toBe('slug');
    expect(thrown(() => checkSlug('a/b', 'slug', providers)).param).toBe('slug');
    expect(thrown(() => checkSlug('openai', 'slug', providers)).message).toContain('provider');
    expect(thrown(() => checkSlug('0b773172-2017-4208-974c-9da596130633', 'slug', providers)).message).toContain('id');
  });
  test('made from names, made free', () => {
    expect(slugFromName('Équipe OpenAI (prod)', 'integration')).toBe('equipe-openai-prod');
    expect(slugFromName('!', 'integration')).toBe('integration');
    expect(freeSlug('openai', new Set(), providers)).toBe('openai-2');
    expect(freeSlug('team', new Set(['team', 'team-2']), providers)).toBe('team-3');
  });
});
