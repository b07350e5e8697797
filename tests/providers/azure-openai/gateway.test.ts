/**
 * Azure through an in-process gateway and the local Azure test server: deployments by alias, api-versions, the
 * api-key header, errors relayed as Azure sent them, streams, the model list, passthrough, and the serverless and
 * managed endpoint forms.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import OpenAI from 'openai';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../../helpers/in-process.ts';
import { type AzureTestServer, CONTENT_FILTER_MESSAGE, CONTENT_FILTER_TRIGGER, startAzureServer } from './server.ts';

const KEY = 'azure-test-key';
let gateway: Gateway;
let azure: AzureTestServer;

beforeAll(async () => {
  gateway = await startInProcessGateway();
  azure = startAzureServer({
    apiKey: KEY,
    acceptToken: (token) => token === 'entra-token-given-directly',
    deployments: { 'chat-deployment': ['2024-10-21'], 'embedding-deployment': ['2024-06-01'], 'legacy-deployment': ['2024-02-01'] },
    inferenceApiVersions: ['2024-05-01-preview'],
    managedDeployments: ['blue', 'green'],
  });
});
afterAll(async () => {
  await azure?.stop();
  await gateway?.close();
});

const deployments = [
  { deployment_id: 'chat-deployment', alias: 'gpt-4o-mini', api_version: '2024-10-21', is_default: true },
  { deployment_id: 'embedding-deployment', alias: 'text-embedding-3-small', api_version: '2024-06-01' },
];

function azureConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { provider: 'azure-openai', resource_name: 'contoso', api_key: KEY, custom_host: `${azure.url}/openai`, deployments, ...extra };
}

function call(path: string, config: Record<string, unknown>, body?: unknown, init: { method?: string; headers?: Record<string, string> } = {}) {
  return gateway.handle(
    new Request(`http://gateway.test${path}`, {
      method: init.method ?? (body === undefined ? 'GET' : 'POST'),
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': TEST_ADMIN_KEY,
        'x-gateway-config': JSON.stringify(config),
        // the openai SDK always sends one; the config's credentials must win over it
        authorization: 'Bearer sdk-placeholder',
        ...init.headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
}

/** The requests the Azure server received while `fn` ran. */
async function received<T>(fn: () => Promise<T>): Promise<{ result: T; requests: AzureTestServer['requests'] }> {
  const before = azure.requests.length;
  const result = await fn();
  return { result, requests: azure.requests.slice(before) };
}

const hello = (model: string, content = 'Hello there') => ({ model, messages: [{ role: 'user', content }] });

describe('azure-openai through the gateway', () => {
  test('chat: the alias selects the deployment and its api-version; the key travels in api-key', async () => {
    const { result: res, requests } = await received(() => call('/v1/chat/completions', azureConfig(), hello('gpt-4o-mini')));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-provider')).toBe('azure-openai');
    const body = (await res.json()) as { choices: { message: { content: string } }[]; prompt_filter_results?: unknown[] };
    expect(body.choices[0]?.message.content).toBe('You said: Hello there');
    expect(body.prompt_filter_results).toHaveLength(1); // Azure's annotations pass through untouched
    expect(requests).toHaveLength(1);
    expect(requests[0]?.path).toBe('/openai/deployments/chat-deployment/chat/completions?api-version=2024-10-21');
    expect(requests[0]?.headers['api-key']).toBe(KEY);
    expect(requests[0]?.headers.authorization).toBeUndefined();
    expect(JSON.parse(requests[0]?.body ?? '{}').model).toBe('gpt-4o-mini'); // the body goes as the client sent it
  });

  test('embeddings: another alias, another deployment and api-version', async () => {
    const { result: res, requests } = await received(() =>
      call('/v1/embeddings', azureConfig(), { model: 'text-embedding-3-small', input: ['a', 'bb'], encoding_format: 'float' }),
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { embedding: number[] }[] };
    expect(body.data).toHaveLength(2);
    expect(requests[0]?.path).toBe('/openai/deployments/embedding-deployment/embeddings?api-version=2024-06-01');
  });

  test('a model no alias names goes to the is_default deployment', async () => {
    const { result: res, requests } = await received(() => call('/v1/chat/completions', azureConfig(), hello('gpt-4.1')));
    expect(res.status).toBe(200);
    expect(requests[0]?.path).toBe('/openai/deployments/chat-deployment/chat/completions?api-version=2024-10-21');
  });

  test('text completions', async () => {
    const { result: res, requests } = await received(() => call('/v1/completions', azureConfig(), { model: 'gpt-4o-mini', prompt: 'Say this' }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: { text: string }[] }).choices[0]?.text).toBe('You said: Say this');
    expect(requests[0]?.path).toBe('/openai/deployments/chat-deployment/completions?api-version=2024-10-21');
  });

  test('deployment_id and api_version without a deployments list', async () => {
    const config = azureConfig({ deployments: undefined, deployment_id: 'legacy-deployment', api_version: '2024-02-01' });
    const { result: res, requests } = await received(() => call('/v1/chat/completions', config, hello('anything')));
    expect(res.status).toBe(200);
    expect(requests[0]?.path).toBe('/openai/deployments/legacy-deployment/chat/completions?api-version=2024-02-01');
  });

  test('no alias match, no default, no deployment_id: a clear 400 and no call to Azure', async () => {
    const config = azureConfig({ deployments: deployments.map(({ is_default: _, ...rest }) => rest) });
    const { result: res, requests } = await received(() => call('/v1/chat/completions', config, hello('gpt-5')));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; param: string } };
    expect(body.error.message).toContain('no Azure OpenAI deployment for model "gpt-5"');
    expect(body.error.message).toContain('"gpt-4o-mini", "text-embedding-3-small"');
    expect(body.error.param).toBe('model');
    expect(requests).toHaveLength(0);
  });

  test('no resource_name and no custom host: a 400 that says so', async () => {
    const config = { provider: 'azure-openai', api_key: KEY, deployment_id: 'd' };
    const res = await call('/v1/chat/completions', config, hello('m'));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('resource_name');
  });

  test('header-only routing (x-gateway-provider + custom host + Authorization) has no deployment: a clear 400', async () => {
    const res = await gateway.handle(
      new Request('http://gateway.test/v1/chat/completions', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': TEST_ADMIN_KEY,
          'x-gateway-provider': 'azure-openai',
          'x-gateway-custom-host': `${azure.url}/openai`,
          authorization: `Bearer ${KEY}`,
        },
        body: JSON.stringify(hello('gpt-4o-mini')),
      }),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('deployment_id');
  });

  test('a wrong key: Azure’s 401 relayed with its message and the provider', async () => {
    const res = await call('/v1/chat/completions', azureConfig({ api_key: 'wrong' }), hello('gpt-4o-mini'));
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: { message: string; code: string }; provider: string };
    expect(body.error.message).toContain('Access denied due to invalid subscription key');
    expect(body.error.code).toBe('401');
    expect(body.provider).toBe('azure-openai');
  });

  test('an api-version the deployment does not have: Azure’s 404 relayed', async () => {
    const config = azureConfig({ deployments: [{ deployment_id: 'chat-deployment', alias: 'gpt-4o-mini', api_version: '2099-01-01' }] });
    const { result: res, requests } = await received(() => call('/v1/chat/completions', config, hello('gpt-4o-mini')));
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('Resource not found');
    expect(requests[0]?.path).toContain('api-version=2099-01-01');
  });

  test('a deployment Azure does not know: DeploymentNotFound relayed with its code', async () => {
    const config = azureConfig({ deployments: [{ deployment_id: 'gone', alias: 'gpt-4o-mini', api_version: '2024-10-21' }] });
    const res = await call('/v1/chat/completions', config, hello('gpt-4o-mini'));
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string } };
    expect(body.error.code).toBe('DeploymentNotFound');
  });

  test('a content filter error keeps its status, message, code and param', async () => {
    const res = await call('/v1/chat/completions', azureConfig(), hello('gpt-4o-mini', `please ${CONTENT_FILTER_TRIGGER}`));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; code: string; param: string; type: string }; provider: string };
    expect(body.error.message).toBe(CONTENT_FILTER_MESSAGE);
    expect(body.error.code).toBe('content_filter');
    expect(body.error.param).toBe('prompt');
    expect(body.provider).toBe('azure-openai');
  });

  test('the openai SDK sees the content filter error as an APIError with Azure’s code', async () => {
    const client = new OpenAI({
      baseURL: 'http://gateway.test/v1',
      apiKey: 'sdk-placeholder',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': JSON.stringify(azureConfig()) },
      fetch: (url: string | URL | Request, init?: RequestInit) =>
        gateway.handle(url instanceof Request ? new Request(url, init) : new Request(url instanceof URL ? url.href : url, init)),
    });
    const err = await client.chat.completions.create(hello('gpt-4o-mini', CONTENT_FILTER_TRIGGER) as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('content_filter');
  });

  test('streams pass through as Azure sent them, the prompt filter frame included, ending with [DONE]', async () => {
    const res = await call('/v1/chat/completions', azureConfig(), { ...hello('gpt-4o-mini', 'Stream it'), stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    const frames = text.split('\n\n').filter(Boolean);
    expect(frames[0]).toContain('prompt_filter_results');
    expect(frames.at(-1)).toBe('data: [DONE]');
    const content = frames
      .filter((f) => f !== 'data: [DONE]')
      .map((f) => JSON.parse(f.slice(6)) as { choices: { delta?: { content?: string } }[] })
      .map((chunk) => chunk.choices[0]?.delta?.content ?? '')
      .join('');
    expect(content).toBe('You said: Stream it');
  });

  test('a bearer token given directly in config Authorization is sent as Authorization, with no api-key', async () => {
    const config = azureConfig({ api_key: undefined, Authorization: 'Bearer entra-token-given-directly' });
    const { result: res, requests } = await received(() => call('/v1/chat/completions', config, hello('gpt-4o-mini')));
    expect(res.status).toBe(200);
    expect(requests[0]?.headers.authorization).toBe('Bearer entra-token-given-directly');
    expect(requests[0]?.headers['api-key']).toBeUndefined();
  });

  test('GET /v1/models: Azure’s model list, at /openai/models with an api-version, in OpenAI’s shape', async () => {
    const { result: res, requests } = await received(() => call('/v1/models', azureConfig()));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { object: string; data: { id: string; object: string; created: number; owned_by: string; capabilities: unknown }[] };
    expect(body.object).toBe('list');
    expect(body.data.map((m) => m.id)).toEqual(['gpt-4o-mini', 'text-embedding-3-small']);
    expect(body.data[0]).toMatchObject({ object: 'model', created: 1721260800, owned_by: 'azure-openai' });
    expect(body.data[0]?.capabilities).toBeDefined();
    expect(requests[0]?.method).toBe('GET');
    expect(requests[0]?.path).toBe('/openai/models?api-version=2024-10-21');
    expect(requests[0]?.headers['api-key']).toBe(KEY);
  });

  test('other Azure paths pass through under the resource base, with the target’s key replacing a client’s', async () => {
    const { result: res, requests } = await received(() =>
      call('/v1/deployments/chat-deployment/images/generations?api-version=2024-10-21', azureConfig(), { prompt: 'a cat' }, { headers: { 'api-key': 'client-key' } }),
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { url: string }[] }).data[0]?.url).toContain('chat-deployment');
    expect(requests[0]?.path).toBe('/openai/deployments/chat-deployment/images/generations?api-version=2024-10-21');
    expect(requests[0]?.headers['api-key']).toBe(KEY);
  });
});

describe('Azure AI serverless and managed endpoints through the gateway', () => {
  const serverless = () => ({
    provider: 'azure-ai',
    svcB_deployment_type: 'serverless',
    svcB_endpoint_name: 'llama',
    svcB_region: 'eastus2',
    svcB_api_version: '2024-05-01-preview',
    api_key: KEY,
    custom_host: azure.url,
  });
  const managed = (deployment = 'green') => ({
    provider: 'azure-openai',
    svcB_deployment_type: 'managed',
    svcB_endpoint_name: 'my-endpoint',
    svcB_region: 'westeurope',
    svcB_deployment_name: deployment,
    api_key: KEY,
    custom_host: azure.url,
  });

  test('serverless chat: /chat/completions?api-version=…, the key as a bearer', async () => {
    const { result: res, requests } = await received(() => call('/v1/chat/completions', serverless(), hello('Llama')));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-provider')).toBe('azure-ai');
    expect(requests[0]?.path).toBe('/chat/completions?api-version=2024-05-01-preview');
    expect(requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(requests[0]?.headers['api-key']).toBeUndefined();
  });

  test('serverless without an api-version uses the model inference API’s default', async () => {
    const { svcB_api_version: _, ...config } = serverless();
    const { result: res, requests } = await received(() => call('/v1/embeddings', config, { model: 'x', input: 'hi', encoding_format: 'float' }));
    expect(res.status).toBe(200);
    expect(requests[0]?.path).toBe('/embeddings?api-version=2024-05-01-preview');
  });

  test('serverless GET /v1/models: the endpoint’s /info as a one-model list', async () => {
    const { result: res, requests } = await received(() => call('/v1/models', serverless()));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { id: string; owned_by: string }[] };
    expect(body.data).toEqual([{ id: 'Meta-Llama-3.1-8B-Instruct', object: 'model', created: 0, owned_by: 'Meta', model_type: 'chat-completion' } as never]);
    expect(requests[0]?.path).toBe('/info?api-version=2024-05-01-preview');
  });

  test('serverless text completions are not part of the API: 400 without a call', async () => {
    const { result: res, requests } = await received(() => call('/v1/completions', serverless(), { model: 'x', prompt: 'p' }));
    expect(res.status).toBe(400);
    expect(requests).toHaveLength(0);
  });

  test('managed: /score with the key as a bearer and azureml-model-deployment', async () => {
    const { result: res, requests } = await received(() => call('/v1/chat/completions', managed(), hello('phi')));
    expect(res.status).toBe(200);
    expect(requests[0]?.path).toBe('/score');
    expect(requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(requests[0]?.headers['azureml-model-deployment']).toBe('green');
  });

  test('managed: an unknown deployment’s error is relayed with the endpoint’s message', async () => {
    const res = await call('/v1/chat/completions', managed('purple'), hello('phi'));
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('purple');
  });

  test('a wrong serverless key: the 401 is relayed', async () => {
    const res = await call('/v1/chat/completions', { ...serverless(), api_key: 'nope' }, hello('x'));
    expect(res.status).toBe(401);
    expect(((await res.json()) as { provider: string }).provider).toBe('azure-ai');
  });
});
