/**
 * A local Azure test server: Azure OpenAI (`/openai/deployments/<deployment>/{chat/completions,completions,embeddings}`
 * and `/openai/models`, each with `?api-version=`), a serverless endpoint of the Azure AI model inference API
 * (`/chat/completions`, `/embeddings`, `/info`) and a managed online endpoint (`/score`). It checks what Azure checks —
 * the credential (`api-key`, or a bearer key or Entra token), the api-version, the deployment — answering with Azure's
 * error bodies, and otherwise implements tests/conformance/protocol.ts in OpenAI's wire format (Azure's content
 * filter annotations included).
 */
import { embeddingFor, ERROR_MESSAGE } from '../../conformance/protocol.ts';
import { answer, type NeutralRequest, pieces } from '../../conformance/protocol-answer.ts';
import { bearerToken, parseJson, startMockServer } from '../../mocks/harness.ts';

export interface AzureServerOptions {
  /** The key: `api-key` on Azure OpenAI paths, `Authorization: Bearer <key>` on serverless and managed paths. */
  apiKey?: string;
  /** Bearer tokens accepted on every path (Microsoft Entra ID tokens). */
  acceptToken?: (token: string) => boolean;
  /** Azure OpenAI deployments and the api-versions each accepts. */
  deployments?: Record<string, string[]>;
  /** api-versions `/openai/models` accepts (default: every version of every deployment). */
  modelsApiVersions?: string[];
  /** api-versions the serverless endpoint accepts. */
  inferenceApiVersions?: string[];
  /** The managed endpoint's deployments (`azureml-model-deployment`); absent header = traffic rules = the first. */
  managedDeployments?: string[];
}

export interface RecordedRequest {
  method: string;
  /** Path with its query string. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface AzureTestServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  stop(): Promise<void>;
}

/** Text that makes the server answer with Azure's content-filter error. */
export const CONTENT_FILTER_TRIGGER = 'trigger-the-content-filter';
export const CONTENT_FILTER_MESSAGE =
  "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.";

type Part = { type: string; text?: string };
type Message = { role: string; content: string | Part[] | null };

const FILTER_OK = {
  hate: { filtered: false, severity: 'safe' },
  self_harm: { filtered: false, severity: 'safe' },
  sexual: { filtered: false, severity: 'safe' },
  violence: { filtered: false, severity: 'safe' },
};

const azureError = (status: number, code: string, message: string, extra: Record<string, unknown> = {}) =>
  Response.json({ error: { code, message, ...extra } }, { status });

const unauthorized = () =>
  azureError(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.');

function neutral(body: Record<string, unknown>): NeutralRequest {
  const messages = (body.messages as Message[] | undefined) ?? [];
  const text = (c: Message['content']) => (typeof c === 'string' ? c : (c ?? []).filter((p) => p.type === 'text').map((p) => p.text).join(' '));
  return {
    model: String(body.model),
    system: messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => text(m.content)),
    turns: messages
      .filter((m) => m.role !== 'system' && m.role !== 'developer')
      .map((m) => ({
        role: m.role === 'tool' ? 'tool' : (m.role as 'user' | 'assistant'),
        text: text(m.content),
        images: Array.isArray(m.content) ? m.content.filter((p) => p.type === 'image_url').length : 0,
      })),
    tools: ((body.tools as { function: { name: string } }[] | undefined) ?? []).map((t) => t.function.name),
    jsonMode: (body.response_format as { type?: string } | undefined)?.type === 'json_object',
    stop: typeof body.stop === 'string' ? [body.stop] : ((body.stop as string[] | undefined) ?? []),
  };
}

function usage(input: number, output: number) {
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: 2 },
    completion_tokens_details: { reasoning_tokens: 3 },
  };
}

function embeddings(body: Record<string, unknown>): Response {
  const inputs = (Array.isArray(body.input) ? body.input : [body.input]) as string[];
  const data = inputs.map((s, index) => {
    const v = embeddingFor(s);
    const embedding = body.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v;
    return { object: 'embedding', index, embedding };
  });
  return Response.json({ object: 'list', data, model: body.model ?? 'text-embedding-3-small', usage: { prompt_tokens: inputs.length, total_tokens: inputs.length } });
}

function completions(body: Record<string, unknown>): Response {
  const prompt = Array.isArray(body.prompt) ? String(body.prompt[0]) : String(body.prompt ?? '');
  const text = `You said: ${prompt}`;
  const words = (s: string) => s.split(/\s+/).filter(Boolean).length;
  return Response.json({
    id: 'cmpl-conformance',
    object: 'text_completion',
    created: Math.floor(Date.now() / 1000),
    model: 'gpt-35-turbo-instruct',
    choices: [{ index: 0, text, finish_reason: 'stop', logprobs: null, content_filter_results: FILTER_OK }],
    usage: { prompt_tokens: words(prompt), completion_tokens: words(text), total_tokens: words(prompt) + words(text) },
  });
}

/** Chat completions by the conformance protocol, in OpenAI's format with Azure's content filter annotations. */
function chat(body: Record<string, unknown>, annotate: boolean): Response {
  const request = neutral(body);
  const lastText = request.turns[request.turns.length - 1]?.text ?? '';
  if (lastText.includes(CONTENT_FILTER_TRIGGER)) {
    return azureError(400, 'content_filter', CONTENT_FILTER_MESSAGE, {
      param: 'prompt',
      type: null,
      status: 400,
      innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { ...FILTER_OK, violence: { filtered: true, severity: 'high' } } },
    });
  }
  const result = answer(request);
  if (result.kind === 'error') return Response.json({ error: { message: ERROR_MESSAGE, type: 'invalid_request_error', param: null, code: null } }, { status: 400 });
  const id = 'chatcmpl-azure-conformance';
  const created = Math.floor(Date.now() / 1000);
  const model = 'gpt-4o-mini-2024-07-18';
  const toolCalls = result.kind === 'tools' ? result.calls.map((c, i) => ({ id: `call_${i}`, type: 'function', function: { name: c.name, arguments: c.args } })) : undefined;
  const finish = result.kind === 'tools' ? 'tool_calls' : 'stop';
  const promptFilter = annotate ? { prompt_filter_results: [{ prompt_index: 0, content_filter_results: FILTER_OK }] } : {};
  const choiceFilter = annotate ? { content_filter_results: FILTER_OK } : {};
  if (!body.stream) {
    const message = result.kind === 'tools' ? { role: 'assistant', content: null, tool_calls: toolCalls } : { role: 'assistant', content: result.text };
    return Response.json({
      id,
      object: 'chat.completion',
      created,
      model,
      system_fingerprint: 'fp_azure',
      ...promptFilter,
      choices: [{ index: 0, message, finish_reason: finish, logprobs: null, ...choiceFilter }],
      usage: usage(result.inputTokens, result.outputTokens),
    });
  }
  const frame = (obj: object) => `data: ${JSON.stringify(obj)}\n\n`;
  const chunk = (delta: object, finish_reason: string | null = null) =>
    frame({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_azure', choices: [{ index: 0, delta, finish_reason, logprobs: null, ...choiceFilter }] });
  // Azure opens a stream with the prompt's filter results and no choices.
  let out = annotate ? frame({ id: '', object: '', created: 0, model: '', choices: [], ...promptFilter }) : '';
  out += chunk({ role: 'assistant', content: '' });
  if (result.kind === 'text') for (const p of pieces(result.text)) out += chunk({ content: p });
  else
    result.calls.forEach((c, index) => {
      out += chunk({ tool_calls: [{ index, id: `call_${index}`, type: 'function', function: { name: c.name, arguments: '' } }] });
      for (const p of pieces(c.args, 6)) out += chunk({ tool_calls: [{ index, function: { arguments: p } }] });
    });
  out += chunk({}, finish);
  if ((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage)
    out += frame({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usage(result.inputTokens, result.outputTokens) });
  out += 'data: [DONE]\n\n';
  return new Response(out, { headers: { 'content-type': 'text/event-stream' } });
}

export function startAzureServer(options: AzureServerOptions = {}): AzureTestServer {
  const deployments = options.deployments ?? {};
  const modelsVersions = options.modelsApiVersions ?? [...new Set(Object.values(deployments).flat())];
  const inferenceVersions = options.inferenceApiVersions ?? ['2024-05-01-preview'];

  const bearer = (request: Request) => bearerToken(request.headers);
  const tokenOk = (request: Request) => {
    const token = bearer(request);
    return token !== undefined && (options.acceptToken?.(token) ?? false);
  };
  /** Azure OpenAI: the `api-key` header, or an Entra bearer token. */
  const openAIAuthorized = (request: Request) =>
    (options.apiKey !== undefined && request.headers.get('api-key') === options.apiKey) || tokenOk(request);
  /** Serverless and managed endpoints: the key as a bearer, or an Entra bearer token. */
  const endpointAuthorized = (request: Request) =>
    (options.apiKey !== undefined && bearer(request) === options.apiKey) || tokenOk(request);

  const server = startMockServer<RecordedRequest>({
    record: ({ method, path, search, headers, body }) => ({ method, path: path + search, headers, body }),
    handle({ request, url, text }) {
      const parsed = parseJson(text || '{}');
      if (!parsed) return azureError(400, 'BadRequest', 'The request body is not valid JSON.');
      const body = parsed.value as Record<string, unknown>;
      const version = url.searchParams.get('api-version');

      // ---- Azure OpenAI --------------------------------------------------------------------------------------
      if (url.pathname.startsWith('/openai/')) {
        if (!openAIAuthorized(request)) return unauthorized();
        if (url.pathname === '/openai/models' && request.method === 'GET') {
          if (version === null || !modelsVersions.includes(version)) return azureError(404, '404', 'Resource not found');
          return Response.json({
            object: 'list',
            data: [
              { id: 'gpt-4o-mini', object: 'model', created_at: 1721260800, status: 'succeeded', lifecycle_status: 'generally-available', capabilities: { chat_completion: true, completion: false, embeddings: false, fine_tune: true, inference: true } },
              { id: 'text-embedding-3-small', object: 'model', created_at: 1705953600, status: 'succeeded', lifecycle_status: 'generally-available', capabilities: { chat_completion: false, completion: false, embeddings: true, fine_tune: false, inference: true } },
            ],
          });
        }
        const match = /^\/openai\/deployments\/([^/]+)\/(.+)$/.exec(url.pathname);
        if (!match) return azureError(404, '404', 'Resource not found');
        const deployment = decodeURIComponent(match[1] as string);
        const rest = match[2] as string;
        const versions = deployments[deployment];
        if (!versions) {
          return azureError(404, 'DeploymentNotFound', 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.');
        }
        if (version === null) return azureError(404, '404', 'Resource not found');
        if (!versions.includes(version)) return azureError(404, '404', 'Resource not found');
        if (request.method !== 'POST') return azureError(405, 'MethodNotAllowed', 'Method not allowed');
        if (rest === 'chat/completions') return chat(body, true);
        if (rest === 'completions') return completions(body);
        if (rest === 'embeddings') return embeddings(body);
        if (rest === 'images/generations') return Response.json({ created: 1, data: [{ url: `https://images.example/${deployment}.png` }] });
        return azureError(404, '404', 'Resource not found');
      }

      // ---- managed online endpoint ---------------------------------------------------------------------------
      if (url.pathname === '/score') {
        if (!endpointAuthorized(request)) return new Response('Unauthorized', { status: 401 });
        const managed = options.managedDeployments ?? ['default'];
        const wanted = request.headers.get('azureml-model-deployment');
        if (wanted !== null && !managed.includes(wanted)) {
          return Response.json({ message: `Deployment ${wanted} not found in endpoint` }, { status: 404 });
        }
        if (Array.isArray(body.messages)) return chat(body, false);
        if (body.input !== undefined) return embeddings(body);
        return Response.json({ message: 'Unsupported scoring input' }, { status: 400 });
      }

      // ---- serverless endpoint (Azure AI model inference API) ------------------------------------------------
      if (!endpointAuthorized(request)) return unauthorized();
      if (version === null || !inferenceVersions.includes(version)) {
        return azureError(400, 'BadRequest', `Unsupported or missing api-version ${JSON.stringify(version)}`);
      }
      if (url.pathname === '/info' && request.method === 'GET') {
        return Response.json({ model_name: 'Meta-Llama-3.1-8B-Instruct', model_type: 'chat-completion', model_provider_name: 'Meta' });
      }
      if (url.pathname === '/chat/completions' && request.method === 'POST') return chat(body, false);
      if (url.pathname === '/embeddings' && request.method === 'POST') return embeddings(body);
      return azureError(404, 'NotFound', 'Resource not found');
    },
  });
  return server;
}
