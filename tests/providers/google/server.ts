/**
 * A local Gemini API (generativelanguage.googleapis.com, v1beta) for tests: `x-goog-api-key` authentication,
 * `models/{model}:generateContent`, `:streamGenerateContent` (`?alt=sse` for server-sent events, a JSON array
 * otherwise), `:batchEmbedContents` and `GET /v1beta/models`, answering by the conformance protocol through
 * gemini-wire.ts. Errors are Google's `{"error": {"code", "message", "status"}}`.
 */
import { answerGemini, googleError } from './gemini-wire.ts';

export const GEMINI_KEY = 'gemini-test-key';
export const MODELS = [
  { name: 'models/gemini-2.5-flash', displayName: 'Gemini 2.5 Flash', inputTokenLimit: 1048576, outputTokenLimit: 65536, supportedGenerationMethods: ['generateContent', 'countTokens'] },
  { name: 'models/text-embedding-004', displayName: 'Text Embedding 004', inputTokenLimit: 2048, outputTokenLimit: 1, supportedGenerationMethods: ['embedContent'] },
];

export interface RecordedRequest {
  method: string;
  path: string;
  search: string;
  headers: Record<string, string>;
  body: string;
}

export interface GeminiTestServer {
  port: number;
  /** What a custom host replaces: `http://127.0.0.1:<port>` (the gateway appends `/v1beta/...`). */
  baseUrl: string;
  requests: RecordedRequest[];
  stop(): void;
}

export function startGeminiServer(opts: { key?: string } = {}): GeminiTestServer {
  const key = opts.key ?? GEMINI_KEY;
  const requests: RecordedRequest[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url);
      const text = await request.text();
      requests.push({ method: request.method, path: url.pathname, search: url.search, headers: Object.fromEntries(request.headers), body: text });
      const given = request.headers.get('x-goog-api-key') ?? url.searchParams.get('key');
      if (!given) return googleError(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
      if (given !== key) return googleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');

      if (request.method === 'GET' && url.pathname === '/v1beta/models') return Response.json({ models: MODELS });
      const m = /^\/v1beta\/models\/([^/:]+):([A-Za-z]+)$/.exec(url.pathname);
      if (!m) return googleError(404, 'NOT_FOUND', `The requested URL ${url.pathname} was not found on this server.`);
      if (request.method !== 'POST') return googleError(405, 'INVALID_ARGUMENT', `Method ${request.method} not allowed`);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
      return answerGemini(m[2] as string, decodeURIComponent(m[1] as string), body as Record<string, unknown>, url.searchParams.get('alt') === 'sse');
    },
  });
  return { port: server.port as number, baseUrl: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true) };
}
