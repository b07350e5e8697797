/**
 * Mistral AI through the `mistral-ai` provider, against the local test server in tests/providers/mistral-ai, which
 * refuses what Mistral refuses (OpenAI-only fields, the developer role, `tool_choice: "required"`, foreign tool call
 * ids), so every case also proves the translation.
 */
import { startMistralServer } from '../../providers/mistral-ai/server.ts';
import type { ProviderFixture, StartedServer } from '../fixture.ts';

async function start(): Promise<StartedServer> {
  const server = startMistralServer();
  return {
    headers: { 'x-gateway-provider': 'mistral-ai', 'x-gateway-custom-host': server.baseUrl, authorization: 'Bearer mistral-conformance' },
    chatModel: 'mistral-large-latest',
    embeddingModel: 'mistral-embed',
    requests: server.requests,
    stop: () => server.stop(),
  };
}

const fixture: ProviderFixture = {
  name: 'mistral-ai',
  start,
  unsupported: {
    cachedTokens: 'reports no cached input tokens',
    reasoningTokens: 'reports no separate count of reasoning tokens',
  },
};
export default fixture;
