/**
 * A local Anthropic Messages API for tests: it speaks the documented wire format byte for byte — `x-api-key` and
 * `anthropic-version` headers, required `max_tokens`, closed top-level fields, content-block rules, Anthropic's error
 * body `{"type": "error", "error": {"type", "message"}}`, named SSE events — and answers by the conformance protocol
 * (tests/conformance/protocol.ts).
 *
 * Native signals: JSON mode is the forced `json_response` tool (`tool_choice: {type: "tool", name: "json_response"}`
 * with that tool offered), answered as a call of that tool whose input is the JSON. Cached input: every answer
 * reports `cache_read_input_tokens: 2` (and `input_tokens` = the protocol's count less those 2). A request with
 * `thinking` enabled gets a thinking block (with a signature) before the answer. POST /v1/messages/count_tokens
 * answers `{"input_tokens": <the protocol's count>}`.
 */
import { ERROR_MESSAGE } from '../../conformance/protocol.ts';
import { answer, type NeutralAnswer, type NeutralRequest, pieces } from '../../conformance/protocol-answer.ts';
import { isObj, type Obj, parseJson, type RecordedRequest, startMockServer } from '../../mocks/harness.ts';
import { MessageBatches } from './message-batches.ts';

export type { RecordedRequest };

export const JSON_TOOL = 'json_response';
export const THINKING_TEXT = 'Let me think about this.';
export const THINKING_SIGNATURE = 'sig-conformance';
export const CACHED_TOKENS = 2;
export const MODELS = [
  { type: 'model', id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' },
  { type: 'model', id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5', created_at: '2025-10-15T00:00:00Z' },
];

const VERSIONS = new Set(['2023-06-01', '2023-01-01']);
/** The top-level fields of POST /v1/messages; anything else is refused as Anthropic refuses it. */
const FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'service_tier',
  'container',
  'mcp_servers',
  'context_management',
  'output_config',
]);
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

export interface ServerOptions {
  /** The only `x-api-key` answered (any other: 401 authentication_error, as Anthropic's); unset: any key. */
  apiKey?: string;
  /** Answers a request before the protocol does (malformed answers, error events…); undefined: the protocol answers. */
  respond?(body: Obj, request: RecordedRequest): Response | undefined | Promise<Response | undefined>;
}

export interface AnthropicTestServer {
  port: number;
  /** The base URL a custom host uses: `http://127.0.0.1:<port>/v1`. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** The Message Batches it holds (message-batches.ts). */
  batches: MessageBatches;
  stop(): void;
}

export function anthropicError(status: number, type: string, message: string): Response {
  return Response.json({ type: 'error', error: { type, message }, request_id: 'req_test' }, { status });
}

// ---- validation -------------------------------------------------------------------------------------------------

function checkSource(source: unknown, at: string, allowed: string[]): string | undefined {
  if (!isObj(source)) return `${at}: Field required`;
  if (source.type === 'base64') {
    if (typeof source.media_type !== 'string' || !allowed.includes(source.media_type))
      return `${at}.media_type: Input should be ${allowed.map((t) => `'${t}'`).join(', ')}`;
    if (typeof source.data !== 'string' || !source.data) return `${at}.data: Field required`;
    return undefined;
  }
  if (source.type === 'url') return typeof source.url === 'string' && /^https?:\/\//.test(source.url) ? undefined : `${at}.url: Input should be a valid URL`;
  return `${at}.type: Input tag '${String(source.type)}' found using 'type' does not match any of the expected tags: 'base64', 'url'`;
}

function checkBlock(block: unknown, at: string, role: string): string | undefined {
  if (!isObj(block)) return `${at}: Input should be a valid dictionary`;
  switch (block.type) {
    case 'text':
      if (typeof block.text !== 'string') return `${at}.text: Field required`;
      if (!block.text) return `${at}: text content blocks must be non-empty`;
      return undefined;
    case 'image':
      return role === 'user' ? checkSource(block.source, `${at}.source`, IMAGE_TYPES) : `${at}: image blocks are only allowed in user messages`;
    case 'document':
      return role === 'user' ? checkSource(block.source, `${at}.source`, ['application/pdf']) : `${at}: document blocks are only allowed in user messages`;
    case 'tool_use':
      if (role !== 'assistant') return `${at}: tool_use blocks are only allowed in assistant messages`;
      if (typeof block.id !== 'string' || typeof block.name !== 'string') return `${at}: tool_use needs id and name`;
      if (!isObj(block.input)) return `${at}.input: Input should be a valid dictionary`;
      return undefined;
    case 'tool_result': {
      if (role !== 'user') return `${at}: tool_result blocks are only allowed in user messages`;
      if (typeof block.tool_use_id !== 'string') return `${at}.tool_use_id: Field required`;
      const content = block.content;
      if (content === undefined || typeof content === 'string') return undefined;
      if (!Array.isArray(content)) return `${at}.content: Input should be a valid list`;
      for (const [i, inner] of content.entries()) {
        if (!isObj(inner) || (inner.type !== 'text' && inner.type !== 'image')) return `${at}.content.${i}: only text and image blocks`;
        const problem = checkBlock(inner, `${at}.content.${i}`, 'user');
        if (problem) return problem;
      }
      return undefined;
    }
    case 'thinking':
      if (role !== 'assistant') return `${at}: thinking blocks are only allowed in assistant messages`;
      return typeof block.thinking === 'string' && typeof block.signature === 'string' ? undefined : `${at}: thinking needs thinking and signature`;
    case 'redacted_thinking':
      return role === 'assistant' && typeof block.data === 'string' ? undefined : `${at}: invalid redacted_thinking block`;
    default:
      return `${at}.type: Input tag '${String(block.type)}' found using 'type' does not match any of the expected tags`;
  }
}

/** The first thing Anthropic would refuse in this body, as its error message; undefined when the body is valid. */
export function validateMessagesBody(body: Obj): string | undefined {
  for (const key of Object.keys(body)) if (!FIELDS.has(key)) return `${key}: Extra inputs are not permitted`;
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (body.max_tokens === undefined) return 'max_tokens: Field required';
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) return 'max_tokens: Input should be a positive integer';
  if (!Array.isArray(body.messages)) return 'messages: Field required';
  if (body.system !== undefined) {
    if (Array.isArray(body.system)) {
      for (const [i, block] of body.system.entries()) {
        if (!isObj(block) || block.type !== 'text') return `system.${i}: Input should be a text block`;
        const problem = checkBlock(block, `system.${i}`, 'system');
        if (problem) return problem;
      }
    } else if (typeof body.system !== 'string') return 'system: Input should be a valid string or list';
  }
  if (body.temperature !== undefined && (typeof body.temperature !== 'number' || body.temperature < 0 || body.temperature > 1))
    return 'temperature: Input should be less than or equal to 1';
  if (body.top_p !== undefined && typeof body.top_p !== 'number') return 'top_p: Input should be a valid number';
  if (body.top_k !== undefined && !Number.isInteger(body.top_k)) return 'top_k: Input should be a valid integer';
  if (body.stop_sequences !== undefined && (!Array.isArray(body.stop_sequences) || body.stop_sequences.some((s) => typeof s !== 'string')))
    return 'stop_sequences: Input should be a valid list of strings';
  if (body.stream !== undefined && typeof body.stream !== 'boolean') return 'stream: Input should be a valid boolean';
  if (body.metadata !== undefined) {
    if (!isObj(body.metadata)) return 'metadata: Input should be a valid dictionary';
    for (const key of Object.keys(body.metadata)) if (key !== 'user_id') return `metadata.${key}: Extra inputs are not permitted`;
  }
  if (body.thinking !== undefined) {
    const t = body.thinking;
    if (!isObj(t) || (t.type !== 'enabled' && t.type !== 'disabled')) return "thinking.type: Input should be 'enabled' or 'disabled'";
    if (t.type === 'enabled') {
      if (!Number.isInteger(t.budget_tokens) || (t.budget_tokens as number) < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
      if ((t.budget_tokens as number) >= (body.max_tokens as number)) return '`max_tokens` must be greater than `thinking.budget_tokens`';
    }
  }
  const toolNames = new Set<string>();
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return 'tools: Input should be a valid list';
    for (const [i, tool] of body.tools.entries()) {
      if (!isObj(tool) || typeof tool.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name)) return `tools.${i}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
      if (!isObj(tool.input_schema) || tool.input_schema.type !== 'object') return `tools.${i}.input_schema.type: Input should be 'object'`;
      for (const key of Object.keys(tool)) if (!['name', 'description', 'input_schema', 'cache_control', 'type'].includes(key)) return `tools.${i}.${key}: Extra inputs are not permitted`;
      if (toolNames.has(tool.name)) return 'tools: Tool names must be unique.';
      toolNames.add(tool.name);
    }
  }
  if (body.tool_choice !== undefined) {
    const c = body.tool_choice;
    if (!isObj(c) || !['auto', 'any', 'tool', 'none'].includes(String(c.type))) return "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'";
    if (c.type === 'tool' && (typeof c.name !== 'string' || !toolNames.has(c.name))) return `tool_choice.name: Tool '${String(c.name)}' not found in tools`;
    if (c.type === 'none' && c.disable_parallel_tool_use !== undefined) return 'tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted';
    if (isObj(body.thinking) && body.thinking.type === 'enabled' && (c.type === 'any' || c.type === 'tool'))
      return 'Thinking may not be enabled when tool_choice forces tool use.';
  }

  let pendingToolUses: string[] = [];
  for (const [i, message] of body.messages.entries()) {
    const at = `messages.${i}`;
    if (!isObj(message)) return `${at}: Input should be a valid dictionary`;
    if (message.role !== 'user' && message.role !== 'assistant') return `${at}.role: Input should be 'user' or 'assistant'`;
    for (const key of Object.keys(message)) if (key !== 'role' && key !== 'content') return `${at}.${key}: Extra inputs are not permitted`;
    const content = message.content;
    const blocks: Obj[] = [];
    if (typeof content === 'string') {
      if (!content && message.role === 'user') return `${at}: user messages must have non-empty content`;
    } else if (Array.isArray(content)) {
      for (const [j, block] of content.entries()) {
        const problem = checkBlock(block, `${at}.content.${j}`, message.role);
        if (problem) return problem;
        blocks.push(block as Obj);
      }
    } else return `${at}.content: Field required`;
    const results = blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id as string);
    if (pendingToolUses.length) {
      const missing = pendingToolUses.filter((id) => !results.includes(id));
      if (message.role !== 'user' || missing.length)
        return `${at}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    const unexpected = results.filter((id) => !pendingToolUses.includes(id));
    if (unexpected.length) return `${at}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected.join(', ')}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    pendingToolUses = message.role === 'assistant' ? blocks.filter((b) => b.type === 'tool_use').map((b) => b.id as string) : [];
  }
  if (pendingToolUses.length && body.messages.length) {
    // A conversation may end on assistant tool_use only as a prefill, which this server does not support.
    return `messages: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${pendingToolUses.join(', ')}`;
  }
  return undefined;
}

// ---- the protocol's answer --------------------------------------------------------------------------------------

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.filter((b) => isObj(b) && b.type === 'text').map((b) => (b as Obj).text as string).join(' ');
}

export function isJsonMode(body: Obj): boolean {
  const choice = body.tool_choice;
  const tools = Array.isArray(body.tools) ? (body.tools as Obj[]) : [];
  return isObj(choice) && choice.type === 'tool' && choice.name === JSON_TOOL && tools.some((t) => t.name === JSON_TOOL);
}

export function neutralRequest(body: Obj): NeutralRequest {
  const jsonMode = isJsonMode(body);
  const system = typeof body.system === 'string' ? [body.system] : Array.isArray(body.system) ? (body.system as Obj[]).map((b) => b.text as string) : [];
  const turns: NeutralRequest['turns'] = [];
  for (const message of body.messages as Obj[]) {
    const content = message.content;
    const blocks = Array.isArray(content) ? (content as Obj[]) : [];
    for (const result of blocks.filter((b) => b.type === 'tool_result')) turns.push({ role: 'tool', text: textOf(result.content) });
    const rest = blocks.filter((b) => b.type !== 'tool_result');
    if (typeof content === 'string' || rest.length || !blocks.length)
      turns.push({
        role: message.role as 'user' | 'assistant',
        text: typeof content === 'string' ? content : textOf(rest),
        images: rest.filter((b) => b.type === 'image').length,
      });
  }
  const tools = (Array.isArray(body.tools) ? (body.tools as Obj[]) : []).map((t) => t.name as string).filter((n) => !jsonMode || n !== JSON_TOOL);
  return { model: String(body.model), system, turns, tools, jsonMode, stop: (body.stop_sequences as string[] | undefined) ?? [] };
}

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Obj } | { type: 'thinking'; thinking: string; signature: string };

function contentFor(result: Exclude<NeutralAnswer, { kind: 'error' }>, body: Obj): { blocks: Block[]; stopReason: string } {
  const blocks: Block[] = [];
  if (isObj(body.thinking) && body.thinking.type === 'enabled') blocks.push({ type: 'thinking', thinking: THINKING_TEXT, signature: THINKING_SIGNATURE });
  if (result.kind === 'tools') {
    result.calls.forEach((c, i) => blocks.push({ type: 'tool_use', id: `toolu_conformance_${i}`, name: c.name, input: JSON.parse(c.args) as Obj }));
    return { blocks, stopReason: 'tool_use' };
  }
  if (isJsonMode(body)) {
    try {
      const input: unknown = JSON.parse(result.text);
      if (isObj(input)) {
        blocks.push({ type: 'tool_use', id: 'toolu_conformance_json', name: JSON_TOOL, input });
        return { blocks, stopReason: 'tool_use' };
      }
    } catch {
      // not JSON (a tool result answer): plain text
    }
  }
  blocks.push({ type: 'text', text: result.text });
  return { blocks, stopReason: 'end_turn' };
}

function usageFor(result: Exclude<NeutralAnswer, { kind: 'error' }>) {
  return {
    input_tokens: Math.max(0, result.inputTokens - CACHED_TOKENS),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: CACHED_TOKENS,
    output_tokens: result.outputTokens,
  };
}

function sse(type: string, data: Obj): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** The answer as Anthropic's stream: named events, text in pieces of ≤ 8 characters, JSON input in ≥ 2 pieces. */
export function streamEvents(id: string, model: string, blocks: Block[], stopReason: string, usage: ReturnType<typeof usageFor>): string {
  let out = sse('message_start', {
    message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
  });
  out += sse('ping', {});
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      out += sse('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const p of pieces(block.text)) out += sse('content_block_delta', { index, delta: { type: 'text_delta', text: p } });
    } else if (block.type === 'thinking') {
      out += sse('content_block_start', { index, content_block: { type: 'thinking', thinking: '' } });
      for (const p of pieces(block.thinking)) out += sse('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: p } });
      out += sse('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
    } else {
      out += sse('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      out += sse('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
      for (const p of pieces(JSON.stringify(block.input), 6)) out += sse('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: p } });
    }
    out += sse('content_block_stop', { index });
  });
  out += sse('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  out += sse('message_stop', {});
  return out;
}

/** POST /v1/messages/count_tokens: `{"input_tokens": n}`, n the protocol's input count (no answer is made). */
function countTokens(recorded: RecordedRequest): Response {
  const body = parseJson(recorded.body)?.value;
  if (!isObj(body) || typeof body.model !== 'string' || !Array.isArray(body.messages))
    return anthropicError(400, 'invalid_request_error', 'model and messages are required');
  const result = answer(neutralRequest(body));
  return Response.json({ input_tokens: result.kind === 'error' ? 0 : result.inputTokens });
}

/**
 * The whole (non-streamed) answer to a valid Messages body, or the error Anthropic would give it: what POST
 * /v1/messages answers, and what a Message Batch's request ends with.
 */
export function messageOrError(body: Obj, id = 'msg_conformance'): { message: Obj } | { error: { status: number; type: string; message: string } } {
  const problem = validateMessagesBody(body);
  if (problem) return { error: { status: 400, type: 'invalid_request_error', message: problem } };
  const result = answer(neutralRequest(body));
  if (result.kind === 'error') return { error: { status: 400, type: 'invalid_request_error', message: ERROR_MESSAGE } };
  const { blocks, stopReason } = contentFor(result, body);
  return { message: { id, type: 'message', role: 'assistant', model: body.model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage: usageFor(result) } };
}

async function handle(request: Request, recorded: RecordedRequest, opts: ServerOptions, batches: MessageBatches): Promise<Response> {
  const url = new URL(request.url);
  const apiKey = request.headers.get('x-api-key');
  if (!apiKey) return anthropicError(401, 'authentication_error', 'x-api-key header is required');
  if (opts.apiKey !== undefined && apiKey !== opts.apiKey) return anthropicError(401, 'authentication_error', 'invalid x-api-key');
  const version = request.headers.get('anthropic-version');
  if (!version) return anthropicError(400, 'invalid_request_error', 'anthropic-version: header is required');
  if (!VERSIONS.has(version)) return anthropicError(400, 'invalid_request_error', `anthropic-version: invalid version ${version}`);

  if (request.method === 'GET' && url.pathname === '/v1/models') {
    return Response.json({ data: MODELS, has_more: false, first_id: MODELS[0]?.id, last_id: MODELS[MODELS.length - 1]?.id });
  }
  if (request.method === 'POST' && url.pathname === '/v1/messages/count_tokens') return countTokens(recorded);
  if (url.pathname === '/v1/messages/batches' || url.pathname.startsWith('/v1/messages/batches/')) return batches.handle(request, url, recorded.body);
  if (url.pathname !== '/v1/messages') return anthropicError(404, 'not_found_error', `Not found: ${request.method} ${url.pathname}`);
  if (request.method !== 'POST') return anthropicError(405, 'invalid_request_error', `Method ${request.method} not allowed`);
  if (!(request.headers.get('content-type') ?? '').includes('application/json')) return anthropicError(400, 'invalid_request_error', 'content-type must be application/json');

  const parsed = parseJson(recorded.body);
  if (!parsed) return anthropicError(400, 'invalid_request_error', 'The request body is not valid JSON.');
  const body = parsed.value;
  if (!isObj(body)) return anthropicError(400, 'invalid_request_error', 'The request body must be a JSON object.');
  const overridden = await opts.respond?.(body, recorded);
  if (overridden) return overridden;
  const problem = validateMessagesBody(body);
  if (problem) return anthropicError(400, 'invalid_request_error', problem);

  const result = answer(neutralRequest(body));
  if (result.kind === 'error') return anthropicError(400, 'invalid_request_error', ERROR_MESSAGE);
  const id = 'msg_conformance';
  const model = body.model as string;
  const { blocks, stopReason } = contentFor(result, body);
  const usage = usageFor(result);
  if (body.stream === true)
    return new Response(streamEvents(id, model, blocks, stopReason, usage), {
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
    });
  return Response.json({ id, type: 'message', role: 'assistant', model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage });
}

export function startAnthropicServer(opts: ServerOptions = {}): AnthropicTestServer {
  const batches = new MessageBatches(messageOrError);
  const server = startMockServer({ handle: ({ request, entry }) => handle(request, entry as RecordedRequest, opts, batches) });
  return { port: server.port, baseUrl: `${server.url}/v1`, requests: server.requests, batches, stop: server.stop };
}
