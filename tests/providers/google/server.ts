/**
 * A local Gemini API (generativelanguage.googleapis.com, v1beta) for tests: `x-goog-api-key` authentication,
 * `models/{model}:generateContent`, `:streamGenerateContent` (`?alt=sse` for server-sent events, a JSON array
 * otherwise), `:batchEmbedContents` and `GET /v1beta/models`, answering by the conformance protocol through
 * gemini-wire.ts. Errors are Google's `{"error": {"code", "message", "status"}}`.
 */
import { isObj, parseJson, type RecordedRequest, startMockServer } from '../../mocks/harness.ts';
import { GeminiBatches } from './gemini-batches.ts';
import { answerGemini, googleError } from './gemini-wire.ts';

export type { RecordedRequest };

export const GEMINI_KEY = 'gemini-test-key';
export const MODELS = [
  { name: 'models/gemini-2.5-flash', displayName: 'Gemini 2.5 Flash', inputTokenLimit: 1048576, outputTokenLimit: 65536, supportedGenerationMethods: ['generateContent', 'countTokens'] },
  { name: 'models/text-embedding-004', displayName: 'Text Embedding 004', inputTokenLimit: 2048, outputTokenLimit: 1, supportedGenerationMethods: ['embedContent'] },
];

export interface GeminiTestServer {
  port: number;
  /** What a custom host replaces: `http://127.0.0.1:<port>` (the gateway appends `/v1beta/...`). */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Its batches (gemini-batches.ts). */
  batches: GeminiBatches;
  stop(): void;
}

export function startGeminiServer(opts: { key?: string } = {}): GeminiTestServer {
  const key = opts.key ?? GEMINI_KEY;
  const batches = new GeminiBatches();
  const server = startMockServer({
    async handle({ request, url, text }) {
      const given = request.headers.get('x-goog-api-key') ?? url.searchParams.get('key');
      if (!given) return googleError(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
      if (given !== key) return googleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');

      if (request.method === 'GET' && url.pathname === '/v1beta/models') return Response.json({ models: MODELS });
      const batch = await batches.handle(request, url.pathname);
      if (batch) return batch;
      const m = /^\/v1beta\/models\/([^/:]+):([A-Za-z]+)$/.exec(url.pathname);
      if (!m) return googleError(404, 'NOT_FOUND', `The requested URL ${url.pathname} was not found on this server.`);
      if (request.method !== 'POST') return googleError(405, 'INVALID_ARGUMENT', `Method ${request.method} not allowed`);
      const body = parseJson(text)?.value;
      if (!isObj(body)) return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
      if (m[2] === 'batchGenerateContent') return batches.create(decodeURIComponent(m[1] as string), text);
      return answerGemini(m[2] as string, decodeURIComponent(m[1] as string), body, url.searchParams.get('alt') === 'sse');
    },
  });
  return { port: server.port, baseUrl: server.url, requests: server.requests, batches, stop: server.stop };
}
