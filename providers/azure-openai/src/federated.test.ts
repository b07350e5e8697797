// `entraFederated`: the service principal proves itself with the gateway's federated identity token (workload
// identity, AZURE_FEDERATED_TOKEN_FILE) instead of a client secret.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '@gateway/config';
import { GatewayError, type ProviderCall } from '@gateway/sdk';
import { createAzureAdapter } from './adapter.ts';
import { EntraTokens, type FetchLike } from './entra.ts';
import type { AzureTarget } from './target.ts';

const dir = mkdtempSync(join(tmpdir(), 'gw-federated-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tokenEndpoint() {
  const forms: Record<string, string>[] = [];
  const fetch: FetchLike = async (_url, init) => {
    forms.push(Object.fromEntries(new URLSearchParams(String(init.body))));
    return Response.json({ token_type: 'Bearer', expires_in: 3600, access_token: `tok-${forms.length}` });
  };
  return { fetch, forms };
}

const call: ProviderCall = {
  url: 'https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21',
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: 'Bearer client-sent' },
  body: '{}',
};
const target: AzureTarget = {
  provider: 'azure-openai',
  resource_name: 'r',
  deployment_id: 'd',
  svcB_entra_tenant_id: 'tenant-1',
  svcB_entra_client_id: 'client-1',
  svcB_entra_auth_mode: 'entraFederated',
};

async function authorization(adapter: ReturnType<typeof createAzureAdapter>, t: AzureTarget): Promise<string | undefined> {
  const authorized = await adapter.authorize!(call, t);
  return authorized.headers.authorization;
}

describe('entraFederated', () => {
  test('the token request carries the federated token as a client assertion, read again after it rotates', async () => {
    const file = join(dir, 'token');
    writeFileSync(file, 'federated-jwt-1\n');
    const ep = tokenEndpoint();
    let now = 1_000_000;
    const tokens = new EntraTokens({ fetch: ep.fetch, now: () => now });
    const adapter = createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai', tokens, federatedTokenFile: file });
    expect(await authorization(adapter, target)).toBe('Bearer tok-1');
    expect(ep.forms[0]).toEqual({
      grant_type: 'client_credentials',
      client_id: 'client-1',
      scope: 'https://cognitiveservices.azure.com/.default',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: 'federated-jwt-1',
    });
    expect(await authorization(adapter, target)).toBe('Bearer tok-1'); // cached
    writeFileSync(file, 'federated-jwt-2');
    now += 3_600_000; // the access token expired: the next request reads the rotated file
    expect(await authorization(adapter, target)).toBe('Bearer tok-2');
    expect(ep.forms[1]?.client_assertion).toBe('federated-jwt-2');
    expect(ep.forms.every((f) => f.client_secret === undefined)).toBe(true);
  });

  test('without AZURE_FEDERATED_TOKEN_FILE, or with an unreadable one, a 502 that names the variable', async () => {
    const ep = tokenEndpoint();
    for (const federatedTokenFile of [undefined, join(dir, 'missing')]) {
      const adapter = createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai', tokens: new EntraTokens({ fetch: ep.fetch }), federatedTokenFile });
      const error = await Promise.resolve()
        .then(() => adapter.authorize!(call, target))
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).status).toBe(502);
      expect((error as GatewayError).message).toContain('AZURE_FEDERATED_TOKEN_FILE');
    }
    expect(ep.forms).toHaveLength(0);
  });

  test('tenant and client id are required', async () => {
    const adapter = createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai', federatedTokenFile: join(dir, 'token') });
    expect(() => adapter.authorize!(call, { ...target, svcB_entra_client_id: undefined })).toThrow('svcB_entra_client_id');
  });

  test('a header config cannot ask for it: only a stored integration lends the gateway its identity', () => {
    const result = validateConfig({ provider: 'azure-openai', svcB_entra_tenant_id: 't', svcB_entra_client_id: 'c', svcB_entra_auth_mode: 'entraFederated' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.violations.join('\n')).toContain('svcB_entra_auth_mode');
  });
});
