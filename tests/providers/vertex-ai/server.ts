/**
 * A local Vertex AI for tests, with its own OAuth token endpoint.
 *
 * - `POST /token`: the JWT bearer grant. The assertion is VERIFIED against the service account's public key (RS256,
 *   `iss` = client_email, `aud` = this token_uri, `scope` with cloud-platform, `iat`/`exp` at most an hour apart, `kid`
 *   = private_key_id); a good one gets `{access_token, expires_in, token_type: "Bearer"}`, a bad one Google's
 *   `400 {"error": "invalid_grant", "error_description": …}`.
 * - `POST /v1/projects/<p>/locations/<l>/publishers/google/models/<m>:generateContent | :streamGenerateContent |
 *   :predict` and `…/endpoints/<e>:generateContent…`: the Gemini wire format (../google/gemini-wire.ts) and text
 *   embeddings; `…/publishers/anthropic/models/<m>:rawPredict | :streamRawPredict`: Anthropic's Messages body with
 *   `anthropic_version: vertex-2023-10-16` and no `model`, answered in Anthropic's format (reusing the Anthropic test
 *   server's validation and stream encoder).
 * - `GET /v1beta1/publishers/google/models`: Model Garden's list.
 * Every data-plane call must carry `Authorization: Bearer <a token this server issued and that has not expired>`, and
 * name the configured project and region.
 */
import { exportPKCS8, generateKeyPair, jwtVerify } from 'jose';
import { embeddingFor, ERROR_MESSAGE, wordCount } from '../../conformance/protocol.ts';
import { answer, type NeutralAnswer } from '../../conformance/protocol-answer.ts';
import { anthropicError, CACHED_TOKENS, isJsonMode, JSON_TOOL, neutralRequest, streamEvents, validateMessagesBody } from '../anthropic/server.ts';
import { answerGemini, googleError } from '../google/gemini-wire.ts';
import { bearerToken, isObj, type Obj, parseJson, type RecordedRequest, startMockServer } from '../../mocks/harness.ts';

export type { RecordedRequest };

export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export interface VertexTestServer {
  baseUrl: string;
  tokenUri: string;
  project: string;
  region: string;
  /** The service-account key JSON (with its private key PEM and token_uri pointing here). */
  serviceAccount: Record<string, string>;
  /** Data-plane requests. */
  requests: RecordedRequest[];
  /** Token requests, with whether the assertion verified. */
  tokenRequests: { ok: boolean; reason?: string; claims?: Obj }[];
  stop(): void;
}

export interface VertexServerOptions {
  project?: string;
  region?: string;
  /** expires_in of issued tokens, seconds (default 3600). */
  tokenLifetimeS?: number;
}

function unauthenticated(): Response {
  return googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
}

// ---- the Anthropic publisher --------------------------------------------------------------------------------------

type Answered = Exclude<NeutralAnswer, { kind: 'error' }>;
type Block = Parameters<typeof streamEvents>[2][number];

function anthropicContent(result: Answered, body: Obj): { blocks: Block[]; stopReason: string } {
  if (result.kind === 'tools')
    return { blocks: result.calls.map((c, i) => ({ type: 'tool_use', id: `toolu_vertex_${i}`, name: c.name, input: JSON.parse(c.args) as Obj })), stopReason: 'tool_use' };
  if (isJsonMode(body)) {
    try {
      const input: unknown = JSON.parse(result.text);
      if (isObj(input)) return { blocks: [{ type: 'tool_use', id: 'toolu_vertex_json', name: JSON_TOOL, input }], stopReason: 'tool_use' };
    } catch {
      // a tool-result answer: plain text
    }
  }
  return { blocks: [{ type: 'text', text: result.text }], stopReason: 'end_turn' };
}

function answerAnthropic(method: string, model: string, body: Obj): Response {
  if (body.anthropic_version !== VERTEX_ANTHROPIC_VERSION)
    return anthropicError(400, 'invalid_request_error', `anthropic_version: Input should be '${VERTEX_ANTHROPIC_VERSION}'`);
  if (body.model !== undefined) return anthropicError(400, 'invalid_request_error', 'model: Extra inputs are not permitted');
  const stream = method === 'streamRawPredict';
  if (stream !== (body.stream === true)) return anthropicError(400, 'invalid_request_error', `stream must be ${stream} for ${method}`);
  const { anthropic_version: _version, ...rest } = body;
  const asMessages = { ...rest, model };
  const problem = validateMessagesBody(asMessages);
  if (problem) return anthropicError(400, 'invalid_request_error', problem);
  const result = answer(neutralRequest(asMessages));
  if (result.kind === 'error') return anthropicError(400, 'invalid_request_error', ERROR_MESSAGE);
  const { blocks, stopReason } = anthropicContent(result, asMessages);
  const usage = {
    input_tokens: Math.max(0, result.inputTokens - CACHED_TOKENS),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: CACHED_TOKENS,
    output_tokens: result.outputTokens,
  };
  const id = 'msg_vrtx_conformance';
  if (stream) return new Response(streamEvents(id, model, blocks, stopReason, usage), { headers: { 'content-type': 'text/event-stream' } });
  return Response.json({ id, type: 'message', role: 'assistant', model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage });
}

// ---- embeddings ------------------------------------------------------------------------------------------------

function predict(body: Obj): Response {
  if (!Array.isArray(body.instances) || !body.instances.length) return googleError(400, 'INVALID_ARGUMENT', 'instances must not be empty');
  const predictions: Obj[] = [];
  for (const [i, instance] of body.instances.entries()) {
    if (!isObj(instance) || typeof instance.content !== 'string') return googleError(400, 'INVALID_ARGUMENT', `instances[${i}].content is required`);
    predictions.push({ embeddings: { values: embeddingFor(instance.content), statistics: { token_count: wordCount(instance.content), truncated: false } } });
  }
  return Response.json({ predictions, metadata: { billableCharacterCount: 0 } });
}

// ---- the server ------------------------------------------------------------------------------------------------

export async function startVertexServer(opts: VertexServerOptions = {}): Promise<VertexTestServer> {
  const project = opts.project ?? 'conformance-project';
  const region = opts.region ?? 'us-central1';
  const lifetime = opts.tokenLifetimeS ?? 3600;
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const privateKeyPem = await exportPKCS8(privateKey);
  const clientEmail = `gateway-test@${project}.iam.gserviceaccount.com`;
  const keyId = 'key-conformance-1';
  const tokenRequests: VertexTestServer['tokenRequests'] = [];
  const issued = new Map<string, number>();
  let tokenUri = '';

  async function token(request: Request, text: string): Promise<Response> {
    const refuse = (reason: string, description = 'Invalid JWT Signature.') => {
      tokenRequests.push({ ok: false, reason });
      return Response.json({ error: 'invalid_grant', error_description: description }, { status: 400 });
    };
    if (!(request.headers.get('content-type') ?? '').includes('application/x-www-form-urlencoded')) return refuse('content-type', 'Bad Request');
    const form = new URLSearchParams(text);
    if (form.get('grant_type') !== JWT_BEARER) {
      tokenRequests.push({ ok: false, reason: 'grant_type' });
      return Response.json({ error: 'unsupported_grant_type', error_description: 'Invalid grant_type' }, { status: 400 });
    }
    const assertion = form.get('assertion') ?? '';
    let claims: Obj;
    try {
      const verified = await jwtVerify(assertion, publicKey, { algorithms: ['RS256'], issuer: clientEmail, audience: tokenUri, requiredClaims: ['iat', 'exp', 'scope'] });
      if (verified.protectedHeader.kid !== keyId) return refuse('kid');
      claims = verified.payload as Obj;
    } catch (error) {
      return refuse(error instanceof Error ? error.message : String(error));
    }
    const iat = claims.iat as number;
    const exp = claims.exp as number;
    if (exp - iat > 3600 || exp <= iat) return refuse('lifetime', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
    if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes(SCOPE)) return refuse('scope', 'Invalid OAuth scope or ID token audience provided.');
    const accessToken = `ya29.test-${crypto.randomUUID()}`;
    issued.set(accessToken, Date.now() + lifetime * 1000);
    tokenRequests.push({ ok: true, claims });
    return Response.json({ access_token: accessToken, expires_in: lifetime, token_type: 'Bearer' });
  }

  const isToken = (request: Request, url: URL) => url.pathname === '/token' && request.method === 'POST';
  const server = startMockServer({
    // token requests are kept apart, in tokenRequests
    record: (recorded, { request, url }) => (isToken(request, url) ? undefined : recorded),
    handle({ request, url, text }) {
      if (isToken(request, url)) return token(request, text);
      const bearer = bearerToken(request.headers);
      const expires = bearer ? issued.get(bearer) : undefined;
      if (expires === undefined || Date.now() >= expires) return unauthenticated();

      if (request.method === 'GET' && url.pathname === '/v1beta1/publishers/google/models')
        return Response.json({ publisherModels: [{ name: 'publishers/google/models/gemini-2.5-flash', versionId: '001' }, { name: 'publishers/google/models/text-embedding-005', versionId: '001' }] });

      const m = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/(?:publishers\/([^/]+)\/models\/([^/:]+)|endpoints\/([^/:]+)):([A-Za-z]+)$/.exec(url.pathname);
      if (!m) return googleError(404, 'NOT_FOUND', `The requested URL ${url.pathname} was not found on this server.`);
      const [, p, l, publisher, model, endpoint, method] = m as unknown as [string, string, string, string | undefined, string | undefined, string | undefined, string];
      if (p !== project) return googleError(403, 'PERMISSION_DENIED', `Permission denied on resource project ${p}.`);
      if (l !== region) return googleError(400, 'FAILED_PRECONDITION', `Location ${l} is not the one this test server serves.`);
      if (request.method !== 'POST') return googleError(405, 'INVALID_ARGUMENT', `Method ${request.method} not allowed`);
      const body = parseJson(text)?.value;
      if (!isObj(body)) return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');

      if (endpoint !== undefined) return answerGemini(method, endpoint, body, url.searchParams.get('alt') === 'sse');
      const name = decodeURIComponent(model as string);
      if (publisher === 'anthropic') {
        if (method !== 'rawPredict' && method !== 'streamRawPredict') return googleError(400, 'INVALID_ARGUMENT', `Anthropic models are called with rawPredict or streamRawPredict, not ${method}`);
        return answerAnthropic(method, name, body);
      }
      if (publisher !== 'google') return googleError(404, 'NOT_FOUND', `Publisher Model \`projects/${p}/locations/${l}/publishers/${publisher}/models/${name}\` not found.`);
      if (method === 'predict') return predict(body);
      return answerGemini(method, name, body, url.searchParams.get('alt') === 'sse');
    },
  });
  const baseUrl = server.url;
  tokenUri = `${baseUrl}/token`;
  return {
    baseUrl,
    tokenUri,
    project,
    region,
    serviceAccount: {
      type: 'service_account',
      project_id: project,
      private_key_id: keyId,
      private_key: privateKeyPem,
      client_email: clientEmail,
      client_id: '100000000000000000001',
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: tokenUri,
    },
    requests: server.requests,
    tokenRequests,
    stop: server.stop,
  };
}
