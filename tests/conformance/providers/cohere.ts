/** Cohere's Chat and Embed APIs v2, through the `cohere` provider, against the local test server in tests/providers/cohere. */
import { startCohereServer } from '../../providers/cohere/server.ts';
import type { ProviderFixture, StartedServer } from '../fixture.ts';

async function start(): Promise<StartedServer> {
  const server = startCohereServer();
  return {
    headers: { 'x-gateway-provider': 'cohere', 'x-gateway-custom-host': server.baseUrl, authorization: 'Bearer co-conformance' },
    chatModel: 'command-a-03-2025',
    embeddingModel: 'embed-v4.0',
    requests: server.requests,
    stop: () => server.stop(),
  };
}

const fixture: ProviderFixture = {
  name: 'cohere',
  start,
  unsupported: {
    cachedTokens: 'reports no cached input tokens (usage has input and output tokens only)',
    reasoningTokens: 'reports no separate count of reasoning tokens',
  },
};
export default fixture;
