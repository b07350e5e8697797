import { describe, expect, test } from 'bun:test';
import { GatewayError, type ProviderCall, type TargetConfig, type TranslateContext } from '@gateway/sdk';
import { createAzureAdapter } from './adapter.ts';
import { EntraTokens, type FetchLike } from './entra.ts';
import type { AzureTarget } from './target.ts';

const ctx: TranslateContext = { endpoint: 'chatComplete', model: 'gpt-4o', strictWireCompliance: true, now: 0 };
const call = (headers: Record<string, string> = {}): ProviderCall => ({
  url: 'https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21',
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: '{"model":"gpt-4o"}',
});

function tokenEndpoint() {
  let n = 0;
  const scopes: string[] = [];
  const fetch: FetchLike = async (_url, init) => {
    scopes.push(new URLSearchParams(String(init.body)).get('scope') ?? '');
    return Response.json({ token_type: 'Bearer', expires_in: 3600, access_token: `tok-${++n}` });
  };
  return { fetch, scopes, get count() {
    return n;
  } };
}

const entra: AzureTarget = {
  resource_name: 'r',
  deployment_id: 'd',
  svcB_entra_tenant_id: 'tenant-1',
  svcB_entra_client_id: 'client-1',
  svcB_entra_client_secret: 'secret-1',
};

describe('azure-openai adapter', () => {
  const adapter = createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai' });

  test('endpoints: chat, completions, embeddings and the model list; no moderations; bodies pass through', () => {
    expect(Object.keys(adapter.endpoints).sort()).toEqual(['chatComplete', 'complete', 'embed', 'listModels']);
    for (const kind of ['chatComplete', 'complete', 'embed'] as const) {
      expect(adapter.endpoints[kind]?.request).toBeUndefined();
      expect(adapter.endpoints[kind]?.response).toBeUndefined();
      expect(adapter.endpoints[kind]?.stream).toBeUndefined(); // OpenAI SSE, forwarded as it is
    }
    expect(adapter.error).toBeUndefined(); // Azure's errors are OpenAI's shape
  });

  test('base URL and path', () => {
    const target: TargetConfig = {
      resource_name: 'contoso',
      deployments: [{ deployment_id: 'prod-4o', alias: 'gpt-4o', api_version: '2024-10-21' }],
    };
    expect(adapter.baseUrl(target)).toBe('https://contoso.openai.azure.com/openai');
    expect(adapter.endpoints.chatComplete?.path(target, { model: 'gpt-4o' }, ctx)).toBe('/deployments/prod-4o/chat/completions?api-version=2024-10-21');
  });

  test('api-key: the key goes in the api-key header, never as a bearer', async () => {
    const out = await adapter.authorize(call(), { resource_name: 'r', api_key: 'azure-key' });
    expect(out.headers['api-key']).toBe('azure-key');
    expect(out.headers.authorization).toBeUndefined();
  });

  test('a client’s own credential headers are replaced, and the input call is not mutated', async () => {
    const input = call({ 'api-key': 'client-key', Authorization: 'Bearer client', 'x-ms-client-request-id': 'abc' });
    const before = structuredClone(input);
    const out = await adapter.authorize(input, { api_key: 'azure-key' });
    expect(out.headers).toEqual({ 'content-type': 'application/json', 'x-ms-client-request-id': 'abc', 'api-key': 'azure-key' });
    expect(input).toEqual(before);
  });

  test('config Authorization is an Entra token given directly: sent as a bearer', async () => {
    const out = await adapter.authorize(call(), { resource_name: 'r', Authorization: 'Bearer eyJ0eXAi.token' });
    expect(out.headers.authorization).toBe('Bearer eyJ0eXAi.token');
    expect(out.headers['api-key']).toBeUndefined();
    // also without the "Bearer " prefix
    expect((await adapter.authorize(call(), { Authorization: 'eyJ0eXAi.raw' })).headers.authorization).toBe('Bearer eyJ0eXAi.raw');
  });

  test('api_key wins over Authorization when both are set', async () => {
    const out = await adapter.authorize(call(), { api_key: 'k', Authorization: 'Bearer t' });
    expect(out.headers['api-key']).toBe('k');
    expect(out.headers.authorization).toBeUndefined();
  });

  test('Entra client credentials: a bearer token with the default scope, fetched once, then synchronous', async () => {
    const ep = tokenEndpoint();
    const tokens = new EntraTokens({ fetch: ep.fetch });
    const a = createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai', tokens });
    // The api_key the resolver fills from the client's Authorization header must not win over the service principal.
    const first = a.authorize(call(), { ...entra, api_key: 'from-client-header' });
    expect(first).toBeInstanceOf(Promise);
    expect((await first).headers.authorization).toBe('Bearer tok-1');
    expect((await first).headers['api-key']).toBeUndefined();
    const second = a.authorize(call(), entra);
    expect(second).not.toBeInstanceOf(Promise); // cached: no await on the hot path
    expect((second as ProviderCall).headers.authorization).toBe('Bearer tok-1');
    expect(ep.count).toBe(1);
    expect(ep.scopes).toEqual(['https://cognitiveservices.azure.com/.default']);
  });

  test('svcB_entra_scope replaces the default scope', async () => {
    const ep = tokenEndpoint();
    const a = createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai', tokens: new EntraTokens({ fetch: ep.fetch }) });
    await a.authorize(call(), { ...entra, svcB_entra_scope: 'https://ai.azure.com/.default' });
    expect(ep.scopes).toEqual(['https://ai.azure.com/.default']);
  });

  test('a partial set of client credentials is a 400 naming what is missing', () => {
    let caught: unknown;
    try {
      adapter.authorize(call(), { svcB_entra_tenant_id: 't', svcB_entra_client_id: 'c' } as AzureTarget);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GatewayError);
    expect((caught as GatewayError).status).toBe(400);
    expect((caught as GatewayError).message).toContain('svcB_entra_client_secret');
  });

  test('no credential at all: the call goes out as it is (a custom host may need none)', async () => {
    const input = call();
    expect(await adapter.authorize(input, { custom_host: 'http://localhost:1/openai' })).toBe(input);
  });

  test('the model list is translated to OpenAI’s shape, Azure’s fields kept', () => {
    const list = adapter.endpoints.listModels?.response?.(
      { object: 'list', data: [{ id: 'gpt-4o', object: 'model', created_at: 1715558400, status: 'succeeded', capabilities: { chat_completion: true } }] },
      { ...ctx, endpoint: 'listModels' },
    );
    expect(list).toEqual({
      object: 'list',
      data: [{ id: 'gpt-4o', object: 'model', created: 1715558400, owned_by: 'azure-openai', created_at: 1715558400, status: 'succeeded', capabilities: { chat_completion: true } }],
    });
  });
});

describe('serverless and managed forms', () => {
  const openai = createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai' });
  const ai = createAzureAdapter({ id: 'azure-ai', defaultForm: 'serverless' });
  const serverless: TargetConfig = { svcB_deployment_type: 'serverless', svcB_endpoint_name: 'llama', svcB_region: 'eastus2', svcB_api_version: '2024-05-01-preview', api_key: 'k' };
  const managed: TargetConfig = { svcB_deployment_type: 'managed', svcB_endpoint_name: 'ep', svcB_region: 'westeurope', svcB_deployment_name: 'blue', api_key: 'k' };

  test('svcB_deployment_type picks the form for either provider id', () => {
    for (const adapter of [openai, ai]) {
      expect(adapter.baseUrl(serverless)).toBe('https://llama.eastus2.models.ai.azure.com');
      expect(adapter.endpoints.chatComplete?.path(serverless, { model: 'x' }, ctx)).toBe('/chat/completions?api-version=2024-05-01-preview');
      expect(adapter.baseUrl(managed)).toBe('https://ep.westeurope.inference.ml.azure.com');
      expect(adapter.endpoints.chatComplete?.path(managed, {}, ctx)).toBe('/score');
    }
    // azure-ai without a deployment type is the serverless form (e.g. behind a custom host)
    expect(ai.endpoints.embed?.path({ custom_host: 'http://h' }, {}, ctx)).toBe('/embeddings?api-version=2024-05-01-preview');
  });

  test('serverless: the key is a bearer', async () => {
    const out = await ai.authorize(call({ 'api-key': 'x' }), serverless);
    expect(out.headers.authorization).toBe('Bearer k');
    expect(out.headers['api-key']).toBeUndefined();
    expect(out.headers['azureml-model-deployment']).toBeUndefined();
  });

  test('managed: the key is a bearer and svcB_deployment_name goes in azureml-model-deployment', async () => {
    const out = await openai.authorize(call(), managed);
    expect(out.headers.authorization).toBe('Bearer k');
    expect(out.headers['azureml-model-deployment']).toBe('blue');
    const noKey = await openai.authorize(call(), { ...managed, api_key: undefined });
    expect(noKey.headers['azureml-model-deployment']).toBe('blue');
  });

  test('Entra on a managed endpoint asks for the Azure Machine Learning scope', async () => {
    const ep = tokenEndpoint();
    const a = createAzureAdapter({ id: 'azure-ai', defaultForm: 'serverless', tokens: new EntraTokens({ fetch: ep.fetch }) });
    const out = await a.authorize(call(), { ...managed, ...entra, svcB_deployment_type: 'managed' } as AzureTarget);
    expect(out.headers.authorization).toBe('Bearer tok-1');
    expect(out.headers['azureml-model-deployment']).toBe('blue');
    expect(ep.scopes).toEqual(['https://ml.azure.com/.default']);
  });

  test('the serverless /info answer becomes a one-model list', () => {
    expect(ai.endpoints.listModels?.response?.({ model_name: 'Llama-3', model_type: 'chat-completion', model_provider_name: 'Meta' }, ctx)).toEqual({
      object: 'list',
      data: [{ id: 'Llama-3', object: 'model', created: 0, owned_by: 'Meta', model_type: 'chat-completion' }],
    });
    expect(() => ai.endpoints.listModels?.response?.({ unexpected: true }, ctx)).toThrow();
  });
});
