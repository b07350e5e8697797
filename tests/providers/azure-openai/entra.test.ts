/**
 * Microsoft Entra ID client credentials over real HTTP: the plugin (wired by AZURE_AUTHORITY_HOST) obtains a token from
 * the local token server, the local Azure server accepts only tokens that server issued, and the token is requested
 * once, cached, and requested again once it expires. The calls are built the way the pipeline builds them
 * (custom host or base URL + path, then authorize), since the config schema does not take the svcB_entra_* fields in
 * x-gateway-config yet (they come from integrations and virtual keys).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import plugin, { AZURE_ML_SCOPE, COGNITIVE_SERVICES_SCOPE, createAzureAdapter, EntraTokens, type AzureTarget } from '@gateway/provider-azure-openai';
import type { JsonObject, PluginApi, ProviderAdapter, TranslateContext } from '@gateway/sdk';
import { GatewayError } from '@gateway/sdk';
import { type AzureTestServer, startAzureServer } from './server.ts';
import { startTokenServer, type TokenServer } from './token-server.ts';

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const CLIENT = 'gateway-app';
const SECRET = 'gateway-app-secret';

let tokenServer: TokenServer;
let azure: AzureTestServer;

beforeAll(() => {
  tokenServer = startTokenServer({ tenantId: TENANT, clientId: CLIENT, clientSecret: SECRET, expiresIn: 3599 });
  azure = startAzureServer({
    apiKey: 'unused-key',
    // Azure OpenAI and serverless paths want a Cognitive Services token; the managed endpoint an Azure ML one.
    acceptToken: (token) => tokenServer.isValid(token, COGNITIVE_SERVICES_SCOPE) || tokenServer.isValid(token, AZURE_ML_SCOPE),
    deployments: { 'chat-deployment': ['2024-10-21'] },
    managedDeployments: ['blue'],
  });
});
afterAll(async () => {
  await azure?.stop();
  await tokenServer?.stop();
});

/** The plugin's adapters, set up as the loader would, with the given environment. */
async function loadPlugin(env: Record<string, string | undefined>): Promise<Map<string, ProviderAdapter>> {
  const providers = new Map<string, ProviderAdapter>();
  const warnings: unknown[] = [];
  const api = {
    name: '@gateway/provider-azure-openai',
    env,
    logger: { debug() {}, info() {}, warn: (o: unknown) => warnings.push(o), error() {} },
    provider: (adapter: ProviderAdapter) => providers.set(adapter.id, adapter),
  } as unknown as PluginApi;
  await plugin.setup(api);
  return providers;
}

const ctx: TranslateContext = { endpoint: 'chatComplete', model: 'gpt-4o-mini', strictWireCompliance: true, now: 0 };

/** One chat call as the pipeline makes it: base (custom host) + path, authorize, fetch. */
async function chat(adapter: ProviderAdapter, target: AzureTarget, content = 'Hello'): Promise<Response> {
  const body: JsonObject = { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] };
  const base = (target.custom_host ?? adapter.baseUrl(target)).replace(/\/+$/, '');
  const prepared = { url: base + (adapter.endpoints.chatComplete?.path(target, body, ctx) ?? ''), method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  const call = await adapter.authorize(prepared, target);
  return fetch(call.url, { method: call.method, headers: call.headers, body: call.body ?? undefined });
}

const entraTarget = (extra: Partial<AzureTarget> = {}): AzureTarget => ({
  provider: 'azure-openai',
  resource_name: 'contoso',
  custom_host: `${azure.url}/openai`,
  deployments: [{ deployment_id: 'chat-deployment', alias: 'gpt-4o-mini', api_version: '2024-10-21', is_default: true }],
  svcB_entra_tenant_id: TENANT,
  svcB_entra_client_id: CLIENT,
  svcB_entra_client_secret: SECRET,
  ...extra,
});

describe('Microsoft Entra ID client credentials', () => {
  test('the plugin registers azure-openai and azure-ai, and takes its authority from AZURE_AUTHORITY_HOST', async () => {
    const providers = await loadPlugin({ AZURE_AUTHORITY_HOST: tokenServer.url });
    expect([...providers.keys()].sort()).toEqual(['azure-ai', 'azure-openai']);
    const adapter = providers.get('azure-openai') as ProviderAdapter;

    const before = tokenServer.requests.length;
    const azureBefore = azure.requests.length;
    for (const content of ['one', 'two', 'three']) {
      const res = await chat(adapter, entraTarget(), content);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe(`You said: ${content}`);
    }
    // one token request for three calls
    const tokenRequests = tokenServer.requests.slice(before);
    expect(tokenRequests).toHaveLength(1);
    expect(tokenRequests[0]?.path).toBe(`/${TENANT}/oauth2/v2.0/token`);
    expect(tokenRequests[0]?.contentType).toBe('application/x-www-form-urlencoded');
    expect(tokenRequests[0]?.form).toEqual({ grant_type: 'client_credentials', client_id: CLIENT, client_secret: SECRET, scope: COGNITIVE_SERVICES_SCOPE });
    // every call carried the same bearer token and no api-key
    const calls = azure.requests.slice(azureBefore);
    expect(calls).toHaveLength(3);
    const bearers = new Set(calls.map((r) => r.headers.authorization));
    expect(bearers.size).toBe(1);
    expect([...bearers][0]).toMatch(/^Bearer entra-token-\d+$/);
    expect(calls.every((r) => r.headers['api-key'] === undefined)).toBe(true);
    expect(calls[0]?.path).toBe('/openai/deployments/chat-deployment/chat/completions?api-version=2024-10-21');
  });

  test('the token is requested again once it expires, and the new one is accepted', async () => {
    const clock = { t: Date.now() };
    const tokens = new EntraTokens({ authorityHost: tokenServer.url, now: () => clock.t });
    const adapter = createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai', tokens });
    const before = tokenServer.requests.length;
    const azureBefore = azure.requests.length;

    expect((await chat(adapter, entraTarget())).status).toBe(200);
    expect((await chat(adapter, entraTarget())).status).toBe(200);
    expect(tokenServer.requests.length - before).toBe(1);

    clock.t += 3600 * 1000; // past expires_in (3599 s)
    expect((await chat(adapter, entraTarget())).status).toBe(200);
    expect(tokenServer.requests.length - before).toBe(2);

    const used = azure.requests.slice(azureBefore).map((r) => r.headers.authorization);
    expect(used[0]).toBe(used[1]);
    expect(used[2]).not.toBe(used[0]);
  });

  test('svcB_entra_scope is the scope asked for; a managed endpoint defaults to the Azure ML scope', async () => {
    const tokens = new EntraTokens({ authorityHost: tokenServer.url });
    const openai = createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai', tokens });
    const before = tokenServer.requests.length;

    const custom = await chat(openai, entraTarget({ svcB_entra_scope: 'https://ai.azure.com/.default' }));
    expect(custom.status).toBe(401); // the test Azure server only takes Cognitive Services / Azure ML tokens
    expect(tokenServer.requests[before]?.form.scope).toBe('https://ai.azure.com/.default');

    const managed: AzureTarget = {
      svcB_deployment_type: 'managed',
      svcB_endpoint_name: 'my-endpoint',
      svcB_region: 'westeurope',
      svcB_deployment_name: 'blue',
      custom_host: azure.url,
      svcB_entra_tenant_id: TENANT,
      svcB_entra_client_id: CLIENT,
      svcB_entra_client_secret: SECRET,
    };
    const azureBefore = azure.requests.length;
    const res = await chat(openai, managed);
    expect(res.status).toBe(200);
    expect(tokenServer.requests.at(-1)?.form.scope).toBe(AZURE_ML_SCOPE);
    expect(azure.requests[azureBefore]?.path).toBe('/score');
    expect(azure.requests[azureBefore]?.headers['azureml-model-deployment']).toBe('blue');
  });

  test('a wrong secret: a 401 with Entra’s description; Azure is never called', async () => {
    const tokens = new EntraTokens({ authorityHost: tokenServer.url });
    const adapter = createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai', tokens });
    const azureBefore = azure.requests.length;
    const err = await chat(adapter, entraTarget({ svcB_entra_client_secret: 'wrong' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(401);
    expect((err as GatewayError).message).toContain('AADSTS7000215');
    expect((err as GatewayError).toBody().provider).toBe('azure-openai');
    expect(azure.requests.length).toBe(azureBefore);
  });

  test('an unavailable token endpoint: a retryable 502', async () => {
    const tokens = new EntraTokens({ authorityHost: tokenServer.url });
    const adapter = createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai', tokens });
    tokenServer.failWith = 503;
    try {
      const err = (await chat(adapter, entraTarget()).catch((e: unknown) => e)) as GatewayError;
      expect(err.status).toBe(502);
      expect(err.retryable).toBe(true);
      expect(err.message).toContain('temporarily_unavailable');
    } finally {
      tokenServer.failWith = undefined;
    }
    expect((await chat(adapter, entraTarget())).status).toBe(200); // nothing bad was cached
  });

  test('an AZURE_AUTHORITY_HOST that is not a URL is ignored (the public cloud is used)', async () => {
    const providers = await loadPlugin({ AZURE_AUTHORITY_HOST: 'not a url' });
    expect(providers.has('azure-openai')).toBe(true);
  });
});
