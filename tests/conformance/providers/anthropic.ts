/** Anthropic's Messages API, through the `anthropic` provider, against the local test server in tests/providers/anthropic. */
import { startAnthropicServer } from '../../providers/anthropic/server.ts';
import type { ProviderFixture, StartedServer } from '../fixture.ts';

async function start(): Promise<StartedServer> {
  const server = startAnthropicServer();
  return {
    headers: { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': server.baseUrl, authorization: 'Bearer sk-ant-conformance' },
    chatModel: 'claude-sonnet-4-5',
    requests: server.requests,
    stop: () => server.stop(),
  };
}

const fixture: ProviderFixture = {
  name: 'anthropic',
  start,
  unsupported: {
    embeddings: 'has no embeddings API',
    reasoningTokens: 'reports no separate count of thinking tokens (they are part of output_tokens)',
  },
};
export default fixture;
