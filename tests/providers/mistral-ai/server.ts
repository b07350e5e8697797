/**
 * A local Mistral AI API for tests: OpenAI's wire format as Mistral serves it (`/v1/chat/completions`,
 * `/v1/embeddings`, `/v1/models`, bearer key, OpenAI SSE closed by `data: [DONE]`), Mistral's own files and
 * fine-tuning API (fine-tuning-server.ts), and refusing what Mistral refuses,
 * in Mistral's own error bodies, so that the gateway's translation is proven rather than assumed:
 *
 * - fields outside Mistral's request schemas, in the body or inside a message → 422
 *   `{"object": "error", "message": {"detail": [{"type": "extra_forbidden", "loc": [...], "msg": …}]}, …}`
 *   (`seed`, `max_completion_tokens`, `stream_options`, `user`, `logprobs`, a user message's `name`, `dimensions`, …);
 * - roles other than system / user / assistant / tool (`developer`) → 422;
 * - tool call ids that are not 9 letters or digits → 400;
 * - `tool_choice` other than `auto`, `none`, `any` or a named function → 422. Mistral's current API also takes
 *   `required` as a synonym of `any`; this server holds to Mistral's own name, which every version accepts.
 *
 * Answers follow the conformance protocol (tests/conformance/protocol.ts). Usage carries no cached or reasoning
 * counts (Mistral reports neither); a stream's last chunk carries the finish reason and the usage together, as
 * Mistral's do. Scripted models: `length-model` answers with `finish_reason: "model_length"`, `chunked-model` with
 * `message.content` as a list of chunks (a thinking chunk, then text).
 */
import { embeddingFor, ERROR_MESSAGE } from '../../conformance/protocol.ts';
import { answer, type NeutralRequest, pieces } from '../../conformance/protocol-answer.ts';
import { isObj, type Obj, parseJson, type RecordedRequest, startMockServer } from '../../mocks/harness.ts';
import { createFineTuning, handleFineTuning, type MistralFineTuning } from './fine-tuning-server.ts';

export type { RecordedRequest };

export const MODELS = [
  { id: 'mistral-large-latest', object: 'model', created: 1732060800, owned_by: 'mistralai', capabilities: { completion_chat: true, function_calling: true, vision: false } },
  { id: 'mistral-embed', object: 'model', created: 1702339200, owned_by: 'mistralai', capabilities: { completion_chat: false } },
];
export const CHUNKED_THINKING = 'Thinking it over.';

const CHAT_FIELDS = new Set([
  'model', 'messages', 'temperature', 'top_p', 'max_tokens', 'stream', 'stop', 'random_seed', 'response_format', 'tools',
  'tool_choice', 'presence_penalty', 'frequency_penalty', 'n', 'prediction', 'parallel_tool_calls', 'prompt_mode', 'safe_prompt',
]);
const MESSAGE_FIELDS: Record<string, Set<string>> = {
  system: new Set(['role', 'content']),
  user: new Set(['role', 'content']),
  assistant: new Set(['role', 'content', 'tool_calls', 'prefix']),
  tool: new Set(['role', 'content', 'tool_call_id', 'name']),
};
const EMBED_FIELDS = new Set(['model', 'input', 'output_dimension', 'output_dtype', 'encoding_format', 'metadata']);
const TOOL_CALL_ID = /^[a-zA-Z0-9]{9}$/;

export interface ServerOptions {
  /** Answers a request before the protocol does; undefined: the protocol answers. */
  respond?(body: Obj, request: RecordedRequest): Response | undefined | Promise<Response | undefined>;
}

export interface MistralTestServer {
  port: number;
  /** The base URL a custom host uses: `http://127.0.0.1:<port>/v1`. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Uploaded files and fine-tuning jobs (fine-tuning-server.ts). */
  fineTuning: MistralFineTuning;
  stop(): void;
}

export function mistralError(status: number, message: unknown, type = 'invalid_request_error'): Response {
  return Response.json({ object: 'error', message, type, param: null, code: null }, { status });
}

type Detail = { type: string; loc: (string | number)[]; msg: string; input?: unknown };
const extra = (loc: (string | number)[], input: unknown): Detail => ({ type: 'extra_forbidden', loc, msg: 'Extra inputs are not permitted', input });

/** Mistral's validation answer: 422 with pydantic details. */
export function unprocessable(details: Detail[]): Response {
  return mistralError(422, { detail: details });
}

export function checkChatBody(body: Obj): Response | undefined {
  const details: Detail[] = [];
  for (const [key, value] of Object.entries(body)) if (!CHAT_FIELDS.has(key)) details.push(extra(['body', key], value));
  if (typeof body.model !== 'string') details.push({ type: 'missing', loc: ['body', 'model'], msg: 'Field required' });
  if (!Array.isArray(body.messages)) details.push({ type: 'missing', loc: ['body', 'messages'], msg: 'Field required' });
  else {
    for (const [i, m] of body.messages.entries()) {
      const role = isObj(m) ? String(m.role) : '';
      const fields = MESSAGE_FIELDS[role];
      if (!fields) {
        details.push({ type: 'union_tag_invalid', loc: ['body', 'messages', i], msg: `Input tag '${role}' found using 'role' does not match any of the expected tags: 'assistant', 'system', 'tool', 'user'` });
        continue;
      }
      for (const [key, value] of Object.entries(m as Obj)) if (!fields.has(key)) details.push(extra(['body', 'messages', i, role, key], value));
    }
  }
  const choice = body.tool_choice;
  if (choice !== undefined && choice !== 'auto' && choice !== 'none' && choice !== 'any' &&
    !(isObj(choice) && isObj(choice.function) && typeof choice.function.name === 'string'))
    details.push({ type: 'enum', loc: ['body', 'tool_choice'], msg: "Input should be 'auto', 'none' or 'any'", input: choice });
  if (details.length) return unprocessable(details);

  for (const m of body.messages as Obj[]) {
    const ids = m.role === 'assistant' && Array.isArray(m.tool_calls) ? m.tool_calls.map((c) => (isObj(c) ? c.id : undefined)) : m.role === 'tool' ? [m.tool_call_id] : [];
    for (const id of ids)
      if (typeof id !== 'string' || !TOOL_CALL_ID.test(id))
        return mistralError(400, `Tool call id was ${String(id)} but must be a-z, A-Z, 0-9, with a length of 9.`);
  }
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
        text: textOf(m.content),
        images: Array.isArray(m.content) ? m.content.filter((p) => isObj(p) && p.type === 'image_url').length : 0,
      })),
    tools: ((body.tools as { function: { name: string } }[] | undefined) ?? []).map((t) => t.function.name),
    jsonMode: format?.type === 'json_object',
    stop: typeof body.stop === 'string' ? [body.stop] : ((body.stop as string[] | undefined) ?? []),
  };
}

/** A Mistral-style tool call id: 9 letters and digits. */
export function toolCallId(index: number): string {
  return `call${String(index).padStart(5, '0')}`;
}

const usage = (input: number, output: number) => ({ prompt_tokens: input, completion_tokens: output, total_tokens: input + output });

function chat(body: Obj): Response {
  const result = answer(neutralRequest(body));
  if (result.kind === 'error') return mistralError(400, ERROR_MESSAGE);
  const id = 'cmpl-conformance';
  const created = Math.floor(Date.now() / 1000);
  const model = body.model;
  const calls = result.kind === 'tools'
    ? result.calls.map((c, i) => ({ id: toolCallId(i), type: 'function', function: { name: c.name, arguments: c.args } }))
    : undefined;
  const finish = result.kind === 'tools' ? 'tool_calls' : model === 'length-model' ? 'model_length' : 'stop';
  const use = usage(result.inputTokens, result.outputTokens);
  if (body.stream !== true) {
    let content: unknown = result.kind === 'tools' ? '' : result.text;
    if (model === 'chunked-model' && result.kind === 'text')
      content = [{ type: 'thinking', thinking: [{ type: 'text', text: CHUNKED_THINKING }] }, { type: 'text', text: result.text }];
    const message = { role: 'assistant', content, tool_calls: calls ?? null, prefix: false };
    return Response.json({ id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], usage: use });
  }
  const chunk = (delta: Obj, finish_reason: string | null = null, extra?: Obj) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason }], ...extra })}\n\n`;
  let out = chunk({ role: 'assistant', content: '' });
  if (result.kind === 'text') for (const p of pieces(result.text)) out += chunk({ content: p });
  else
    result.calls.forEach((c, index) => {
      out += chunk({ tool_calls: [{ index, id: toolCallId(index), type: 'function', function: { name: c.name, arguments: '' } }] });
      for (const p of pieces(c.args, 6)) out += chunk({ tool_calls: [{ index, function: { arguments: p } }] });
    });
  out += chunk({ content: '' }, finish === 'model_length' ? 'length' : finish, { usage: use });
  out += 'data: [DONE]\n\n';
  return new Response(out, { headers: { 'content-type': 'text/event-stream' } });
}

function embeddings(body: Obj): Response {
  const details: Detail[] = [];
  for (const [key, value] of Object.entries(body)) if (!EMBED_FIELDS.has(key)) details.push(extra(['body', key], value));
  if (typeof body.model !== 'string') details.push({ type: 'missing', loc: ['body', 'model'], msg: 'Field required' });
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(inputs) || !inputs.every((s) => typeof s === 'string'))
    details.push({ type: 'string_type', loc: ['body', 'input'], msg: 'Input should be a valid string' });
  if (details.length) return unprocessable(details);
  const size = typeof body.output_dimension === 'number' ? body.output_dimension : undefined;
  const data = (inputs as string[]).map((s, index) => {
    const v = embeddingFor(s).slice(0, size);
    const embedding = body.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v;
    return { object: 'embedding', embedding, index };
  });
  const tokens = (inputs as string[]).length;
  return Response.json({ id: 'embd-conformance', object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens, completion_tokens: 0 } });
}

async function handle(request: Request, bytes: Uint8Array, recorded: RecordedRequest, opts: ServerOptions, fineTuning: MistralFineTuning): Promise<Response> {
  if (!/^Bearer \S+/.test(recorded.headers.authorization ?? '')) return Response.json({ message: 'Unauthorized', request_id: 'req-conformance' }, { status: 401 });
  if (request.method === 'GET' && recorded.path === '/v1/models') return Response.json({ object: 'list', data: MODELS });
  const job = await handleFineTuning(fineTuning, request, recorded.path, bytes);
  if (job) return job;
  const routes = ['/v1/chat/completions', '/v1/embeddings'];
  if (request.method !== 'POST' || !routes.includes(recorded.path)) return Response.json({ detail: 'Not Found' }, { status: 404 });
  const parsed = parseJson(recorded.body);
  if (!parsed) return mistralError(400, 'Invalid JSON body');
  const body = parsed.value;
  if (!isObj(body)) return unprocessable([{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary' }]);
  const scripted = await opts.respond?.(body, recorded);
  if (scripted) return scripted;
  if (recorded.path === '/v1/embeddings') return embeddings(body);
  return checkChatBody(body) ?? chat(body);
}

export function startMistralServer(opts: ServerOptions = {}): MistralTestServer {
  const fineTuning = createFineTuning();
  const server = startMockServer({ handle: ({ request, bytes, entry }) => handle(request, bytes, entry as RecordedRequest, opts, fineTuning) });
  return { port: server.port, baseUrl: `${server.url}/v1`, requests: server.requests, fineTuning, stop: server.stop };
}
