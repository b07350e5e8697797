/**
 * Azure: OpenAI's wire format behind deployments, api-versions and Azure's credentials. Three fixtures over one local
 * Azure test server (tests/providers/azure-openai/server.ts), each routed by an x-gateway-config:
 * - `azure-openai`: resource_name + deployments with aliases (the chat one is_default) + custom_host + api_key;
 * - `azure-ai (serverless)`: svcB_deployment_type serverless, key as bearer, Azure AI model inference paths;
 * - `azure-openai (managed online endpoint)`: svcB_deployment_type managed, `/score`, azureml-model-deployment.
 */
import type { ProviderFixture, StartedServer } from '../fixture.ts';
import { startAzureServer } from '../../providers/azure-openai/server.ts';

const KEY = 'azure-conformance-key';

const azureOpenAI: ProviderFixture = {
  name: 'azure-openai',
  async start(): Promise<StartedServer> {
    const server = startAzureServer({
      apiKey: KEY,
      deployments: { 'chat-deployment': ['2024-10-21'], 'embedding-deployment': ['2024-06-01'] },
    });
    const config = {
      provider: 'azure-openai',
      resource_name: 'conformance-resource',
      api_key: KEY,
      custom_host: `${server.url}/openai`,
      deployments: [
        { deployment_id: 'chat-deployment', alias: 'gpt-4o-mini', api_version: '2024-10-21', is_default: true },
        { deployment_id: 'embedding-deployment', alias: 'text-embedding-3-small', api_version: '2024-06-01' },
      ],
    };
    return {
      headers: { 'x-gateway-config': JSON.stringify(config) },
      chatModel: 'gpt-4o-mini',
      embeddingModel: 'text-embedding-3-small',
      requests: server.requests,
      stop: () => server.stop(),
    };
  },
};

const serverless: ProviderFixture = {
  name: 'azure-ai (serverless)',
  async start(): Promise<StartedServer> {
    const server = startAzureServer({ apiKey: KEY, inferenceApiVersions: ['2024-05-01-preview'] });
    const config = {
      provider: 'azure-ai',
      svcB_deployment_type: 'serverless',
      svcB_endpoint_name: 'conformance-llama',
      svcB_region: 'eastus2',
      svcB_api_version: '2024-05-01-preview',
      api_key: KEY,
      custom_host: server.url,
    };
    return {
      headers: { 'x-gateway-config': JSON.stringify(config) },
      chatModel: 'Meta-Llama-3.1-8B-Instruct',
      embeddingModel: 'Cohere-embed-v3-english',
      requests: server.requests,
      stop: () => server.stop(),
    };
  },
};

const managed: ProviderFixture = {
  name: 'azure-openai (managed online endpoint)',
  async start(): Promise<StartedServer> {
    const server = startAzureServer({ apiKey: KEY, managedDeployments: ['blue', 'green'] });
    const config = {
      provider: 'azure-openai',
      svcB_deployment_type: 'managed',
      svcB_endpoint_name: 'conformance-endpoint',
      svcB_region: 'westeurope',
      svcB_deployment_name: 'green',
      api_key: KEY,
      custom_host: server.url,
    };
    return {
      headers: { 'x-gateway-config': JSON.stringify(config) },
      chatModel: 'Phi-3.5-mini-instruct',
      requests: server.requests,
      stop: () => server.stop(),
    };
  },
};

export default [azureOpenAI, serverless, managed];
