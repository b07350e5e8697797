/**
 * Vertex AI through the `vertex-ai` provider, configured the way clients configure it: an x-gateway-config with
 * svcC_project_id, svcC_region, svcC_service_account_json (whose token_uri is the test server's OAuth endpoint,
 * which verifies the signed JWT) and a custom host. Two fixtures: a Gemini model, and an Anthropic model of the
 * Anthropic publisher (`anthropic.<model>@<version>`, rawPredict / streamRawPredict).
 */
import { startVertexServer, type VertexTestServer } from '../../providers/vertex-ai/server.ts';
import type { ProviderFixture, StartedServer } from '../fixture.ts';

function configHeader(server: VertexTestServer): Record<string, string> {
  return {
    'x-gateway-config': JSON.stringify({
      provider: 'vertex-ai',
      svcC_project_id: server.project,
      svcC_region: server.region,
      svcC_service_account_json: server.serviceAccount,
      custom_host: server.baseUrl,
    }),
  };
}

async function start(chatModel: string, embeddingModel?: string): Promise<StartedServer> {
  const server = await startVertexServer();
  return {
    headers: configHeader(server),
    chatModel,
    ...(embeddingModel ? { embeddingModel } : {}),
    requests: server.requests,
    stop: () => server.stop(),
  };
}

const gemini: ProviderFixture = {
  name: 'vertex-ai (gemini)',
  start: () => start('gemini-2.5-flash', 'text-embedding-005'),
};

const anthropicPublisher: ProviderFixture = {
  name: 'vertex-ai (anthropic publisher)',
  start: () => start('anthropic.claude-sonnet-4-5@20250929'),
  unsupported: {
    embeddings: 'Anthropic models have no embeddings (vertex-ai embeddings run in the gemini fixture)',
    reasoningTokens: 'reports no separate count of thinking tokens (they are part of output_tokens)',
  },
};

export default [gemini, anthropicPublisher];
