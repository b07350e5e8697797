/**
 * A local Cohere API for tests: Chat API v2 (`POST /v2/chat`), Embed API v2 (`POST /v2/embed`) and the model list
 * (`GET /v1/models`), speaking Cohere's documented wire format — bearer key, closed top-level fields, Cohere's message
 * roles and content items, `tool_choice` `REQUIRED`/`NONE`, `p` within 0.01..0.99, `stop_sequences`, the error body
 * `{"message": …}`, SSE streams of typed events (`message-start` … `message-end`) — and answering by the conformance
 * protocol (tests/conformance/protocol.ts).
 *
 * Native signals: JSON mode is `response_format: {type: "json_object"}`. Usage: `usage.tokens` carries the protocol's
 * counts; `usage.billed_units` deliberately differs (input one less), so a translation that read billed units would
 * be caught. No cached or reasoning token counts exist in Cohere's usage.
 */
import { embeddingFor, ERROR_MESSAGE } from '../../conformance/protocol.ts';
import { answer, type NeutralAnswer, type NeutralRequest, pieces } from '../../conformance/protocol-answer.ts';
import { isObj, type Obj, parseJson, type RecordedRequest, startMockServer, streamedResponse } from '../../mocks/harness.ts';

export type { RecordedRequest };

export const MODELS = [
  { name: 'command-a-03-2025', endpoints: ['generate', 'chat', 'summarize'], finetuned: false, context_length: 256000, default_endpoints: ['chat'] },
  { name: 'embed-v4.0', endpoints: ['embed'], finetuned: false, context_length: 128000, default_endpoints: ['embed'] },
];

/** The top-level fields of POST /v2/chat; anything else is refused as Cohere refuses it. */
const CHAT_FIELDS = new Set([
  'model', 'messages', 'stream', 'tools', 'strict_tools', 'documents', 'citation_options', 'response_format', 'safety_mode',
  'max_tokens', 'stop_sequences', 'temperature', 'seed', 'frequency_penalty', 'presence_penalty', 'k', 'p', 'logprobs',
  'tool_choice', 'thinking',
]);
const EMBED_FIELDS = new Set(['model', 'texts', 'images', 'inputs', 'input_type', 'embedding_types', 'output_dimension', 'truncate', 'max_tokens']);
const INPUT_TYPES = new Set(['search_document', 'search_query', 'classification', 'clustering', 'image']);
const EMBEDDING_TYPES = new Set(['float', 'int8', 'uint8', 'binary', 'ubinary', 'base64']);

export interface ServerOptions {
  /** Answers a request before the protocol does (malformed answers, error events…); undefined: the protocol answers. */
  respond?(body: Obj, request: RecordedRequest): Response | undefined | Promise<Response | undefined>;
}

export interface CohereTestServer {
  port: number;
  /** The base URL a custom host uses: `http://127.0.0.1:<port>` (Cohere's paths carry their own version). */
  baseUrl: string;
  requests: RecordedRequest[];
  stop(): void;
}

export function cohereError(status: number, message: string): Response {
  return Response.json({ id: 'err-conformance', message }, { status });
}

const invalid = (reason: string) => `invalid request: ${reason}`;

// ---- request checks ------------------------------------------------------------------------------------------

function checkTextItems(content: unknown, at: string, allowDocuments = false): string | undefined {
  if (typeof content === 'string') return undefined;
  if (!Array.isArray(content)) return invalid(`${at}.content must be a string or a list of content items`);
  for (const [j, item] of content.entries()) {
    if (!isObj(item)) return invalid(`${at}.content[${j}] must be an object`);
    if (item.type === 'text' && typeof item.text === 'string') continue;
    if (allowDocuments && item.type === 'document' && isObj(item.document)) continue;
    return invalid(`${at}.content[${j}]: content type ${JSON.stringify(item.type)} is not allowed here`);
  }
  return undefined;
}

function checkMessages(messages: unknown): string | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return invalid('messages must be a non-empty list');
  const callIds = new Set<string>();
  for (const [i, m] of messages.entries()) {
    const at = `messages[${i}]`;
    if (!isObj(m)) return invalid(`${at} must be an object`);
    switch (m.role) {
      case 'system': {
        const bad = checkTextItems(m.content, at);
        if (bad) return bad;
        break;
      }
      case 'user': {
        if (typeof m.content === 'string') break;
        if (!Array.isArray(m.content)) return invalid(`${at}.content must be a string or a list of content items`);
        for (const [j, item] of m.content.entries()) {
          if (isObj(item) && item.type === 'text' && typeof item.text === 'string') continue;
          if (isObj(item) && item.type === 'image_url' && isObj(item.image_url) && typeof item.image_url.url === 'string') continue;
          return invalid(`${at}.content[${j}] must be a text or image_url item`);
        }
        break;
      }
      case 'assistant': {
        if (m.content !== undefined) {
          const bad = checkTextItems(m.content, at);
          if (bad) return bad;
        }
        if (m.tool_plan !== undefined && typeof m.tool_plan !== 'string') return invalid(`${at}.tool_plan must be a string`);
        if (m.tool_calls !== undefined) {
          if (!Array.isArray(m.tool_calls)) return invalid(`${at}.tool_calls must be a list`);
          for (const [j, call] of m.tool_calls.entries()) {
            if (!isObj(call) || typeof call.id !== 'string' || call.type !== 'function' || !isObj(call.function) ||
              typeof call.function.name !== 'string' || typeof call.function.arguments !== 'string')
              return invalid(`${at}.tool_calls[${j}] must be {id, type: "function", function: {name, arguments: string}}`);
            callIds.add(call.id);
          }
        }
        if (m.content === undefined && m.tool_calls === undefined) return invalid(`${at} needs content or tool_calls`);
        break;
      }
      case 'tool': {
        if (typeof m.tool_call_id !== 'string') return invalid(`${at}.tool_call_id is required`);
        if (!callIds.has(m.tool_call_id)) return invalid(`${at}.tool_call_id ${m.tool_call_id} matches no tool call`);
        const bad = checkTextItems(m.content, at, true);
        if (bad) return bad;
        break;
      }
      default:
        return invalid(`${at}.role ${JSON.stringify(m.role)} is not one of system, user, assistant, tool`);
    }
  }
  return undefined;
}

export function validateChatBody(body: Obj): string | undefined {
  for (const key of Object.keys(body)) if (!CHAT_FIELDS.has(key)) return invalid(`unknown field: parameter '${key}' is not a valid field`);
  if (typeof body.model !== 'string') return invalid('model is required');
  const bad = checkMessages(body.messages);
  if (bad) return bad;
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return invalid('tools must be a list');
    for (const [j, t] of body.tools.entries())
      if (!isObj(t) || t.type !== 'function' || !isObj(t.function) || typeof t.function.name !== 'string')
        return invalid(`tools[${j}] must be {type: "function", function: {name, description, parameters}}`);
  }
  if (body.tool_choice !== undefined) {
    if (body.tool_choice !== 'REQUIRED' && body.tool_choice !== 'NONE') return invalid(`tool_choice must be one of REQUIRED, NONE`);
    if (!Array.isArray(body.tools) || !body.tools.length) return invalid('tool_choice requires tools');
  }
  if (body.response_format !== undefined) {
    const f = body.response_format;
    if (!isObj(f) || (f.type !== 'text' && f.type !== 'json_object')) return invalid('response_format.type must be text or json_object');
    if (f.json_schema !== undefined && (f.type !== 'json_object' || !isObj(f.json_schema))) return invalid('response_format.json_schema needs type json_object');
  }
  if (body.stop_sequences !== undefined) {
    const s = body.stop_sequences;
    if (!Array.isArray(s) || s.length > 5 || !s.every((x) => typeof x === 'string')) return invalid('stop_sequences must be a list of up to 5 strings');
  }
  if (body.p !== undefined && (typeof body.p !== 'number' || body.p < 0.01 || body.p > 0.99)) return invalid('p must be between 0.01 and 0.99');
  if (body.k !== undefined && (typeof body.k !== 'number' || body.k < 0 || body.k > 500)) return invalid('k must be between 0 and 500');
  for (const name of ['frequency_penalty', 'presence_penalty'] as const) {
    const v = body[name];
    if (v !== undefined && (typeof v !== 'number' || v < 0 || v > 1)) return invalid(`${name} must be between 0 and 1`);
  }
  if (body.temperature !== undefined && (typeof body.temperature !== 'number' || body.temperature < 0)) return invalid('temperature must be non-negative');
  if (body.max_tokens !== undefined && (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1)) return invalid('max_tokens must be a positive integer');
  if (body.stream !== undefined && typeof body.stream !== 'boolean') return invalid('stream must be a boolean');
  return undefined;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.filter((p) => isObj(p) && p.type === 'text').map((p) => String((p as Obj).text)).join(' ');
}

export function neutralRequest(body: Obj): NeutralRequest {
  const messages = body.messages as Obj[];
  const format = body.response_format as Obj | undefined;
  return {
    model: String(body.model),
    system: messages.filter((m) => m.role === 'system').map((m) => textOf(m.content)),
    turns: messages
      .filter((m) => m.role !== 'system')
      .map((m) => ({
        role: m.role as 'user' | 'assistant' | 'tool',
        text: m.role === 'assistant' && m.content === undefined ? String(m.tool_plan ?? '') : textOf(m.content),
        images: Array.isArray(m.content) ? m.content.filter((p) => isObj(p) && p.type === 'image_url').length : 0,
      })),
    tools: ((body.tools as { function: { name: string } }[] | undefined) ?? []).map((t) => t.function.name),
    jsonMode: format?.type === 'json_object',
    stop: (body.stop_sequences as string[] | undefined) ?? [],
  };
}

// ---- answers -------------------------------------------------------------------------------------------------

export const TOOL_PLAN = 'I will look this up.';

export function usageFor(input: number, output: number) {
  return { billed_units: { input_tokens: Math.max(0, input - 1), output_tokens: output }, tokens: { input_tokens: input, output_tokens: output } };
}

export function toolCallId(name: string, index: number): string {
  return `${name}_conf${index}x9`;
}

function chatAnswer(id: string, result: Exclude<NeutralAnswer, { kind: 'error' }>): Obj {
  if (result.kind === 'tools') {
    return {
      id,
      message: {
        role: 'assistant',
        tool_plan: TOOL_PLAN,
        tool_calls: result.calls.map((c, i) => ({ id: toolCallId(c.name, i), type: 'function', function: { name: c.name, arguments: c.args } })),
      },
      finish_reason: 'TOOL_CALL',
      usage: usageFor(result.inputTokens, result.outputTokens),
    };
  }
  return {
    id,
    message: { role: 'assistant', content: [{ type: 'text', text: result.text }] },
    finish_reason: 'COMPLETE',
    usage: usageFor(result.inputTokens, result.outputTokens),
  };
}

/** One SSE frame as Cohere sends it: the event name, and the JSON (which names its type again). */
export function frame(event: Obj): string {
  return `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`;
}

export function streamEvents(id: string, result: Exclude<NeutralAnswer, { kind: 'error' }>): string {
  let out = frame({ id, type: 'message-start', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } });
  if (result.kind === 'text') {
    out += frame({ type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
    for (const p of pieces(result.text)) out += frame({ type: 'content-delta', index: 0, delta: { message: { content: { text: p } } } });
    out += frame({ type: 'content-end', index: 0 });
  } else {
    for (const p of pieces(TOOL_PLAN)) out += frame({ type: 'tool-plan-delta', delta: { message: { tool_plan: p } } });
    result.calls.forEach((c, index) => {
      out += frame({
        type: 'tool-call-start',
        index,
        delta: { message: { tool_calls: { id: toolCallId(c.name, index), type: 'function', function: { name: c.name, arguments: '' } } } },
      });
      for (const p of pieces(c.args, 6)) out += frame({ type: 'tool-call-delta', index, delta: { message: { tool_calls: { function: { arguments: p } } } } });
      out += frame({ type: 'tool-call-end', index });
    });
  }
  const finish = result.kind === 'tools' ? 'TOOL_CALL' : 'COMPLETE';
  out += frame({ type: 'message-end', delta: { finish_reason: finish, usage: usageFor(result.inputTokens, result.outputTokens) } });
  return out;
}

/** An SSE answer: one string at once, or several parts written one after another (`delayMs` apart). */
export function sse(body: string | string[], delayMs = 5): Response {
  const headers = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
  return typeof body === 'string' ? new Response(body, { headers }) : streamedResponse(body, headers, delayMs);
}

function validateEmbedBody(body: Obj): string | undefined {
  for (const key of Object.keys(body)) if (!EMBED_FIELDS.has(key)) return invalid(`unknown field: parameter '${key}' is not a valid field`);
  if (typeof body.model !== 'string') return invalid('model is required');
  if (!Array.isArray(body.texts) || !body.texts.length || body.texts.length > 96 || !body.texts.every((t) => typeof t === 'string'))
    return invalid('texts must be a list of 1 to 96 strings');
  if (typeof body.input_type !== 'string' || !INPUT_TYPES.has(body.input_type)) return invalid('input_type is required for embed v3 and newer models');
  if (!Array.isArray(body.embedding_types) || !body.embedding_types.every((t) => typeof t === 'string' && EMBEDDING_TYPES.has(t)))
    return invalid('embedding_types must be a list of float, int8, uint8, binary, ubinary, base64');
  return undefined;
}

async function handle(request: Request, recorded: RecordedRequest, opts: ServerOptions): Promise<Response> {
  const auth = recorded.headers.authorization ?? '';
  if (!/^Bearer \S+/.test(auth)) return cohereError(401, 'invalid api token');

  if (request.method === 'GET' && recorded.path === '/v1/models') return Response.json({ models: MODELS, next_page_token: null });
  if (request.method !== 'POST' || (recorded.path !== '/v2/chat' && recorded.path !== '/v2/embed'))
    return cohereError(404, `no route for ${request.method} ${recorded.path}`);

  const parsed = parseJson(recorded.body);
  if (!parsed) return cohereError(400, invalid('the body is not valid JSON'));
  const body = parsed.value;
  if (!isObj(body)) return cohereError(400, invalid('the body must be a JSON object'));
  const scripted = await opts.respond?.(body, recorded);
  if (scripted) return scripted;

  if (recorded.path === '/v2/embed') {
    const bad = validateEmbedBody(body);
    if (bad) return cohereError(400, bad);
    const texts = body.texts as string[];
    const embeddings: Obj = {};
    for (const type of body.embedding_types as string[]) if (type === 'float') embeddings.float = texts.map(embeddingFor);
    return Response.json({
      id: 'embed-conformance',
      embeddings,
      texts,
      meta: { api_version: { version: '2' }, billed_units: { input_tokens: texts.length } },
      response_type: 'embeddings_by_type',
    });
  }

  const bad = validateChatBody(body);
  if (bad) return cohereError(400, bad);
  const result = answer(neutralRequest(body));
  if (result.kind === 'error') return cohereError(400, ERROR_MESSAGE);
  const id = 'c0he7e-conformance';
  if (body.stream === true) return sse(streamEvents(id, result));
  return Response.json(chatAnswer(id, result));
}

export function startCohereServer(opts: ServerOptions = {}): CohereTestServer {
  const server = startMockServer({ handle: ({ request, entry }) => handle(request, entry as RecordedRequest, opts) });
  return { port: server.port, baseUrl: server.url, requests: server.requests, stop: server.stop };
}
