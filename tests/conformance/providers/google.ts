/** Google's Gemini API, through the `google` provider (x-gateway-provider + custom host + key), against tests/providers/google. */
import { GEMINI_KEY, startGeminiServer } from '../../providers/google/server.ts';
import type { ProviderFixture, StartedServer } from '../fixture.ts';

async function start(): Promise<StartedServer> {
  const server = startGeminiServer();
  return {
    headers: { 'x-gateway-provider': 'google', 'x-gateway-custom-host': server.baseUrl, authorization: `Bearer ${GEMINI_KEY}` },
    // A Gemini 3 model: the server then insists on the thought signature of a function call coming back.
    chatModel: 'gemini-3-flash-preview',
    embeddingModel: 'text-embedding-004',
    requests: server.requests,
    stop: () => server.stop(),
  };
}

const fixture: ProviderFixture = { name: 'google', start };
export default fixture;
