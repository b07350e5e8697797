import { describe, expect, test } from 'bun:test';
import { GatewayError, type TargetConfig } from '@gateway/sdk';
import {
  baseUrlFor,
  DEFAULT_API_VERSION,
  DEFAULT_INFERENCE_API_VERSION,
  inferencePath,
  openAIBaseUrl,
  openAIPath,
  resolveDeployment,
} from './resolve.ts';

const ID = 'azure-openai';

const deployments: TargetConfig['deployments'] = [
  { deployment_id: 'gpt4o-prod', alias: 'gpt-4o', api_version: '2024-10-21' },
  { deployment_id: 'mini-prod', alias: 'gpt-4o-mini', api_version: '2024-08-01-preview', is_default: true },
  { deployment_id: 'embed-prod', alias: 'text-embedding-3-small', api_version: '2024-06-01' },
];

/** The GatewayError a call throws (fails the test when it does not throw one). */
function thrown(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a GatewayError');
}

describe('resolveDeployment', () => {
  test('the request model picks the deployment whose alias it is, with that entry’s api_version', () => {
    expect(resolveDeployment(ID, { deployments }, 'gpt-4o')).toEqual({ deployment: 'gpt4o-prod', apiVersion: '2024-10-21', via: 'alias' });
    expect(resolveDeployment(ID, { deployments }, 'text-embedding-3-small')).toEqual({ deployment: 'embed-prod', apiVersion: '2024-06-01', via: 'alias' });
  });

  test('an unknown or missing model falls back to the entry marked is_default', () => {
    expect(resolveDeployment(ID, { deployments }, 'gpt-5')).toEqual({ deployment: 'mini-prod', apiVersion: '2024-08-01-preview', via: 'default' });
    expect(resolveDeployment(ID, { deployments }, undefined).deployment).toBe('mini-prod');
  });

  test('alias matching is exact (case and whitespace count)', () => {
    expect(resolveDeployment(ID, { deployments }, 'GPT-4o').via).toBe('default');
    expect(resolveDeployment(ID, { deployments }, ' gpt-4o').via).toBe('default');
  });

  test('without a matching alias or default: deployment_id, then svcB_deployment_id, with the target api-version', () => {
    const noDefault = deployments.map(({ is_default: _, ...rest }) => rest);
    expect(resolveDeployment(ID, { deployments: noDefault, deployment_id: 'fallback', api_version: '2024-02-01' }, 'other')).toEqual({
      deployment: 'fallback',
      apiVersion: '2024-02-01',
      via: 'deployment_id',
    });
    expect(resolveDeployment(ID, { svcB_deployment_id: 'svc-dep', svcB_api_version: '2024-09-01-preview' }, 'm')).toEqual({
      deployment: 'svc-dep',
      apiVersion: '2024-09-01-preview',
      via: 'svcB_deployment_id',
    });
    expect(resolveDeployment(ID, { deployment_id: 'a', svcB_deployment_id: 'b' }, 'm').deployment).toBe('a');
  });

  test('api-version: api_version before svcB_api_version before the documented default', () => {
    expect(resolveDeployment(ID, { deployment_id: 'd', api_version: 'v1', svcB_api_version: 'v2' }, 'm').apiVersion).toBe('v1');
    expect(resolveDeployment(ID, { deployment_id: 'd', svcB_api_version: 'v2' }, 'm').apiVersion).toBe('v2');
    expect(resolveDeployment(ID, { deployment_id: 'd' }, 'm').apiVersion).toBe(DEFAULT_API_VERSION);
    expect(DEFAULT_API_VERSION).toBe('2024-10-21');
  });

  test('an entry’s own api_version wins over the target’s', () => {
    expect(resolveDeployment(ID, { deployments, api_version: '2023-05-15' }, 'gpt-4o').apiVersion).toBe('2024-10-21');
  });

  test('nothing to go on is a 400 that names the model, the aliases and the fields to set', () => {
    const noDefault = deployments.map(({ is_default: _, ...rest }) => rest);
    const err = thrown(() => resolveDeployment(ID, { deployments: noDefault }, 'gpt-5'));
    expect(err.status).toBe(400);
    expect(err.param).toBe('model');
    expect(err.message).toContain('"gpt-5"');
    expect(err.message).toContain('"gpt-4o", "gpt-4o-mini", "text-embedding-3-small"');
    expect(err.message).toContain('is_default');
    expect(err.message).toContain('deployment_id');
    const empty = thrown(() => resolveDeployment(ID, {}, 'gpt-4o'));
    expect(empty.status).toBe(400);
    expect(empty.message).toContain('the config has no deployments');
  });
});

describe('base URLs', () => {
  test('Azure OpenAI: https://<resource_name>.openai.azure.com/openai, svcB_resource_name as the alternative', () => {
    expect(openAIBaseUrl(ID, { resource_name: 'contoso' })).toBe('https://contoso.openai.azure.com/openai');
    expect(openAIBaseUrl(ID, { svcB_resource_name: 'fabrikam' })).toBe('https://fabrikam.openai.azure.com/openai');
    expect(openAIBaseUrl(ID, { resource_name: 'contoso', svcB_resource_name: 'fabrikam' })).toBe('https://contoso.openai.azure.com/openai');
  });

  test('no resource name is a 400 that says what to set', () => {
    const err = thrown(() => openAIBaseUrl(ID, {}));
    expect(err.status).toBe(400);
    expect(err.message).toContain('resource_name');
    expect(err.message).toContain('custom_host');
  });

  test('names that are not one host-name label are refused (no host or path injection)', () => {
    for (const bad of ['evil.example#', '169.254.169.254/latest#', 'a b', 'res/../x', '-res', 'a'.repeat(64)]) {
      const err = thrown(() => openAIBaseUrl(ID, { resource_name: bad }));
      expect(err.status).toBe(400);
      expect(err.param).toBe('resource_name');
    }
    expect(thrown(() => baseUrlFor(ID, { svcB_endpoint_name: 'ep', svcB_region: 'east.us' }, 'serverless')).param).toBe('svcB_region');
    expect(thrown(() => baseUrlFor(ID, { svcB_endpoint_name: 'ep/x', svcB_region: 'eastus' }, 'managed')).param).toBe('svcB_endpoint_name');
  });

  test('serverless: https://<endpoint>.<region>.models.ai.azure.com (svcB_deployment_name when no endpoint name)', () => {
    expect(baseUrlFor(ID, { svcB_endpoint_name: 'Meta-Llama-3-1-8B-xyz', svcB_region: 'eastus2' }, 'serverless')).toBe(
      'https://Meta-Llama-3-1-8B-xyz.eastus2.models.ai.azure.com',
    );
    expect(baseUrlFor(ID, { svcB_deployment_name: 'mistral-large', svcB_region: 'swedencentral' }, 'serverless')).toBe(
      'https://mistral-large.swedencentral.models.ai.azure.com',
    );
  });

  test('managed: https://<endpoint>.<region>.inference.ml.azure.com', () => {
    expect(baseUrlFor(ID, { svcB_endpoint_name: 'my-endpoint', svcB_region: 'westeurope', svcB_deployment_name: 'blue' }, 'managed')).toBe(
      'https://my-endpoint.westeurope.inference.ml.azure.com',
    );
  });

  test('serverless and managed need a region and an endpoint name', () => {
    expect(thrown(() => baseUrlFor(ID, { svcB_endpoint_name: 'ep' }, 'serverless')).message).toContain('svcB_region');
    expect(thrown(() => baseUrlFor(ID, { svcB_region: 'eastus' }, 'serverless')).message).toContain('svcB_endpoint_name');
    // A managed endpoint is named by its endpoint; the deployment name only routes traffic inside it.
    expect(thrown(() => baseUrlFor(ID, { svcB_region: 'eastus', svcB_deployment_name: 'blue' }, 'managed')).param).toBe('svcB_endpoint_name');
  });
});

describe('paths', () => {
  const target: TargetConfig = { resource_name: 'r', deployments };

  test('Azure OpenAI: /deployments/<deployment>/<endpoint>?api-version=<v>', () => {
    expect(openAIPath(ID, 'chatComplete', target, { model: 'gpt-4o' })).toBe('/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
    expect(openAIPath(ID, 'complete', target, { model: 'unknown' })).toBe('/deployments/mini-prod/completions?api-version=2024-08-01-preview');
    expect(openAIPath(ID, 'embed', target, { model: 'text-embedding-3-small' })).toBe('/deployments/embed-prod/embeddings?api-version=2024-06-01');
  });

  test('deployment names and versions are URL-encoded', () => {
    expect(openAIPath(ID, 'chatComplete', { deployment_id: 'my dep/1', api_version: 'a&b' }, {})).toBe(
      '/deployments/my%20dep%2F1/chat/completions?api-version=a%26b',
    );
  });

  test('the model list: /models?api-version= (target version, else the default entry’s, else the default)', () => {
    expect(openAIPath(ID, 'listModels', { api_version: '2024-06-01' }, {})).toBe('/models?api-version=2024-06-01');
    expect(openAIPath(ID, 'listModels', target, {})).toBe('/models?api-version=2024-08-01-preview');
    expect(openAIPath(ID, 'listModels', {}, {})).toBe(`/models?api-version=${DEFAULT_API_VERSION}`);
  });

  test('endpoints Azure OpenAI does not have are a 400', () => {
    expect(thrown(() => openAIPath(ID, 'moderate', target, {})).status).toBe(400);
  });

  test('serverless: the Azure AI model inference routes with an api-version', () => {
    expect(inferencePath(ID, 'chatComplete', {}, 'serverless')).toBe(`/chat/completions?api-version=${DEFAULT_INFERENCE_API_VERSION}`);
    expect(inferencePath(ID, 'embed', { svcB_api_version: '2025-04-01' }, 'serverless')).toBe('/embeddings?api-version=2025-04-01');
    expect(inferencePath(ID, 'listModels', {}, 'serverless')).toBe(`/info?api-version=${DEFAULT_INFERENCE_API_VERSION}`);
    expect(thrown(() => inferencePath(ID, 'complete', {}, 'serverless')).status).toBe(400);
  });

  test('managed: the one scoring URI, with an api-version only when one is configured', () => {
    expect(inferencePath(ID, 'chatComplete', {}, 'managed')).toBe('/score');
    expect(inferencePath(ID, 'embed', {}, 'managed')).toBe('/score');
    expect(inferencePath(ID, 'chatComplete', { svcB_api_version: '2024-05-01-preview' }, 'managed')).toBe('/score?api-version=2024-05-01-preview');
    expect(thrown(() => inferencePath(ID, 'listModels', {}, 'managed')).status).toBe(400);
    expect(thrown(() => inferencePath(ID, 'complete', {}, 'managed')).status).toBe(400);
  });
});
