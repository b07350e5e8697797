/**
 * Bedrock (cloud provider A): Converse / ConverseStream for chat and InvokeModel for embeddings, against the local
 * Bedrock test server (tests/providers/bedrock/server.ts), which verifies every request's SigV4 signature. The
 * credentials travel in the config, as INTERFACE.md says for cloud providers.
 */
import { KEY, REGION, startBedrockServer, TEMP_KEY } from '../../providers/bedrock/server.ts';
import type { ProviderFixture, StartedServer } from '../fixture.ts';

async function start(chatModel: string, embeddingModel: string, credentials: Record<string, string>): Promise<StartedServer> {
  const server = await startBedrockServer();
  const config = { provider: 'bedrock', ...credentials, svcA_region: REGION, custom_host: server.url };
  return {
    headers: { 'x-gateway-config': JSON.stringify(config) },
    chatModel,
    embeddingModel,
    requests: server.requests,
    stop: () => server.stop(),
  };
}

const NO_REASONING_COUNT = 'reports no reasoning token count (Converse usage has input, output and cache counts only)';

const fixtures: ProviderFixture[] = [
  {
    name: 'bedrock (anthropic claude, titan embeddings)',
    start: () =>
      start('anthropic.claude-3-5-sonnet-20240620-v1:0', 'amazon.titan-embed-text-v2:0', {
        svcA_access_key_id: KEY.id,
        svcA_secret_access_key: KEY.secret,
      }),
    unsupported: {
      reasoningTokens: NO_REASONING_COUNT,
      embeddings:
        'Titan Text Embeddings takes one text per InvokeModel call and the provider contract makes one upstream call per request, so the two-input case is refused with a 400 (single inputs are covered in tests/providers/bedrock)',
    },
  },
  {
    name: 'bedrock (meta llama, cohere embeddings, temporary credentials)',
    start: () =>
      start('meta.llama3-1-70b-instruct-v1:0', 'cohere.embed-english-v3', {
        svcA_access_key_id: TEMP_KEY.id,
        svcA_secret_access_key: TEMP_KEY.secret,
        svcA_session_token: TEMP_KEY.sessionToken,
      }),
    unsupported: {
      reasoningTokens: NO_REASONING_COUNT,
      images: 'Llama 3.1 on Bedrock takes no image blocks (vision is Llama 3.2 11B/90B and Llama 4)',
      streamedTools: 'Bedrock documents no tool use in streaming mode for Meta Llama models',
    },
  },
];

export default fixtures;
