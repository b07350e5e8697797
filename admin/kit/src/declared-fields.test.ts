import { describe, expect, test } from 'bun:test';
import { defineConfigFields, type GuardrailCheck, type JsonObject, type ProviderAdapter } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { declaredFields } from './declared-fields.ts';
import { MASK, restoreMasked, splitSecrets } from './masked-secrets.ts';
import { workspaceFields } from './testing.ts';

const adapter = (id: string, targetFields?: ProviderAdapter['targetFields']): ProviderAdapter => ({
  id,
  baseUrl: () => 'https://api.example/v1',
  authorize: (call) => call,
  endpoints: {},
  targetFields,
});
const check = (id: string, destination?: string[]): GuardrailCheck => ({ id, destination, run: async () => ({ verdict: true }) });

/** A provider whose session cookie follows its tenant, and whose signing salt may stay when the tenant moves. */
const zeta = defineConfigFields({
  fields: { zeta_tenant: Type.String(), zeta_cookie: Type.String(), zeta_salt: Type.String() },
  secret: ['zeta_cookie', 'zeta_salt'],
  destination: ['zeta_tenant'],
  clearedOnChange: ['zeta_cookie'],
});

describe('declared fields', () => {
  const fields = declaredFields([adapter('zeta', zeta), adapter('plain')], [check('acme.hook', ['hookURL']), check('acme.count')]);

  test('come from the declarations: fields, secrets, destinations per provider, clearedOnChange', () => {
    expect([...fields.providerFields.keys()]).toEqual(['zeta_tenant', 'zeta_cookie', 'zeta_salt']);
    expect([...fields.secret]).toEqual(['zeta_cookie', 'zeta_salt']);
    expect([...fields.clearedOnChange]).toEqual(['zeta_cookie']);
    expect(fields.destinationFields('zeta')).toEqual(['provider', 'custom_host', 'zeta_tenant']);
    // A provider that declares nothing, or one not loaded: its adapter and its host only.
    expect(fields.destinationFields('plain')).toEqual(['provider', 'custom_host']);
    expect(fields.destinationFields('unknown')).toEqual(['provider', 'custom_host']);
    // Documents: generic credential keys plus declared secrets; a check's declared destination parameters.
    expect(fields.documents.secretKeys.has('zeta_salt')).toBe(true);
    expect(fields.documents.secretKeys.has('api_key')).toBe(true);
    expect([...fields.documents.destinations].sort()).toEqual(['custom_host', 'hookURL', 'id', 'provider', 'zeta_tenant']);
  });

  test('clearedOnChange default: the secrets', () => {
    const all = declaredFields([adapter('zeta', { ...zeta, clearedOnChange: undefined })]);
    expect([...all.clearedOnChange]).toEqual(['zeta_cookie', 'zeta_salt']);
  });

  test('a saved document: a moved tenant refuses the kept cookie but keeps the salt; a moved hookURL refuses its headers', () => {
    const doc: JsonObject = {
      provider: 'zeta',
      zeta_tenant: 't1',
      zeta_cookie: 'c',
      zeta_salt: 's',
      input_guardrails: [{ 'acme.hook': { hookURL: 'https://hooks.example/a', headers: { 'x-key': 'k' } } }],
    };
    const { masked, secrets } = splitSecrets(doc, fields.documents);
    expect(JSON.stringify(masked)).not.toContain('"c"');
    const edit = { ...masked, zeta_tenant: 't2' };
    const restored = restoreMasked(edit, { masked, secrets }, 'config', fields.documents);
    expect(restored.problems.map((p) => p.slice(0, p.indexOf(': ')))).toEqual(['config.zeta_cookie']);
    expect((restored.value as JsonObject).zeta_salt).toBe('s');
    const hook = structuredClone(masked);
    ((hook.input_guardrails as JsonObject[])[0]?.['acme.hook'] as JsonObject).hookURL = 'http://127.0.0.1:9/';
    expect(restoreMasked(hook, { masked, secrets }, 'config', fields.documents).problems).toHaveLength(1);
    // A parameter no loaded check declares a destination decides nothing.
    const other = declaredFields([adapter('zeta', zeta)], [check('acme.hook')]);
    const split = splitSecrets(doc, other.documents);
    expect(restoreMasked(hook, split, 'config', other.documents).problems).toEqual([]);
  });

  test('a field both secret and a destination (an external id): sent back masked it keeps the others, changed it refuses them', () => {
    const documents = workspaceFields().documents;
    const doc: JsonObject = { provider: 'bedrock', svcA_region: 'us-east-1', svcA_secret_access_key: 'sk', svcA_external_id: 'ext-1' };
    const previous = splitSecrets(doc, documents);
    expect(previous.masked).toMatchObject({ svcA_secret_access_key: MASK, svcA_external_id: MASK });
    expect(restoreMasked(previous.masked, previous, '', documents)).toEqual({ value: doc, problems: [] });
    const moved = restoreMasked({ ...previous.masked, svcA_external_id: 'ext-2' }, previous, '', documents);
    expect(moved.problems.map((p) => p.slice(0, p.indexOf(': ')))).toEqual(['svcA_secret_access_key']);
  });
});
