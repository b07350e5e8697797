/**
 * A local Bedrock Runtime for tests: it checks every request's SigV4 signature (403 on mismatch, session tokens
 * included), speaks Converse (POST /model/{id}/converse), ConverseStream (/converse-stream, answered in the binary
 * application/vnd.amazon.eventstream framing, byte for byte) and InvokeModel (/invoke) for Titan and Cohere
 * embeddings, validates request bodies the way Bedrock documents them, and computes its answers by the conformance
 * protocol (tests/conformance/protocol.ts).
 *
 * Model ids that script misbehaviour (for the gateway's 502 and stream-error paths):
 * - `conformance-error`: a 400 ValidationException (the protocol's provider error).
 * - `test.malformed-answer`: 200 with a Converse body that has no output message.
 * - `test.not-json`: 200 with a body that is not JSON.
 * - `test.stream-exception`: a stream that sends some text, then a throttlingException message.
 * - `test.stream-bad-crc`: a stream whose second message has a corrupted CRC.
 * - `test.stream-bad-json`: a stream with an event whose payload is not JSON.
 * - `test.stream-cut`: a stream that stops in the middle of a message.
 * - InvokeModel on a Titan model with inputText `test.embed-malformed`: an embedding answer without a vector.
 *
 * The batch inference control plane (model invocation jobs) is batch-jobs.ts; given the local object store's objects
 * (`s3`), a job reads its records there and writes its output there.
 *
 * A Claude model asked for `additionalModelRequestFields.thinking` (enabled, budget >= 1024, maxTokens above it) puts
 * a signed reasoning block first (`reasoningBlock`), streamed as reasoningContent text deltas and then its signature.
 */
import { embeddingFor, ERROR_MESSAGE, wordCount } from '../../conformance/protocol.ts';
import { answer, type NeutralAnswer, type NeutralRequest, pieces } from '../../conformance/protocol-answer.ts';
import { isObj, type Obj, startMockServer } from '../../mocks/harness.ts';
import { type BatchJob, BatchJobs, type S3Objects } from './batch-jobs.ts';
import { concatBytes, encodeMessage, eventMessage, exceptionMessage } from './eventstream.ts';
import { type Credential, verifyRequest } from './sigv4.ts';

export const REGION = 'us-east-1';
/** Long-term credentials. */
export const KEY = { id: 'AKIDBEDROCKTEST0001', secret: 'bedrock/test+secret=key' };
/** Temporary credentials: the session token must come with them. */
export const TEMP_KEY = { id: 'ASIABEDROCKTEMP0001', secret: 'temporary/secret+key', sessionToken: 'FwoGZXIvYXdzEBEaDTEST//token==' };

export interface RecordedRequest {
  method: string;
  /** The path as sent (still percent-encoded). */
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface BedrockServer {
  url: string;
  requests: RecordedRequest[];
  /** The batch inference jobs, by job id. */
  jobs: Map<string, BatchJob>;
  stop(): Promise<void>;
}


class Invalid extends Error {}
const invalid = (message: string): never => {
  throw new Invalid(message);
};

function error(status: number, type: string, message: string): Response {
  return Response.json(
    { message },
    { status, headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': crypto.randomUUID() } },
  );
}

// ---- request validation (what Bedrock documents and enforces) -------------------------------------------------

const CONVERSE_KEYS = new Set([
  'messages', 'system', 'inferenceConfig', 'toolConfig', 'outputConfig', 'additionalModelRequestFields',
  'additionalModelResponseFieldPaths', 'guardrailConfig', 'performanceConfig', 'promptVariables', 'requestMetadata',
]);
const BLOCK_KEYS = new Set(['text', 'image', 'document', 'toolUse', 'toolResult', 'reasoningContent', 'cachePoint', 'guardContent', 'video']);
const IMAGE_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp']);

function onlyKeys(obj: Obj, allowed: Set<string>, where: string) {
  for (const key of Object.keys(obj)) if (!allowed.has(key)) invalid(`Malformed input request: #${where}: extraneous key [${key}] is not permitted, please reformat your input and try again.`);
}

const family = (model: string) => model.replace(/^(us|eu|apac|global)\./, '').split('.')[0];
const noSystem = (model: string) => /^mistral\.(mistral-7b-instruct|mixtral-8x7b-instruct)/.test(model);
const toolChoiceForms = (model: string): Set<string> => {
  switch (family(model)) {
    case 'anthropic':
    case 'amazon':
      return new Set(['auto', 'any', 'tool']);
    case 'mistral':
      return /^mistral\.mistral-large/.test(model) ? new Set(['auto', 'any']) : new Set();
    default:
      return new Set();
  }
};
const llamaWithVision = (model: string) => /^meta\.(llama3-2-(11b|90b)|llama4)/.test(model);

function validateConverse(body: Obj, model: string, stream: boolean) {
  onlyKeys(body, CONVERSE_KEYS, '');
  const messages = (Array.isArray(body.messages) ? body.messages : []) as unknown[];
  if (!messages.length) invalid('A conversation must start with a user message. Try again with a conversation that starts with a user message.');
  let toolBlocks = false;
  let previousToolUses = new Set<string>();
  messages.forEach((message, i) => {
    if (!isObj(message) || (message.role !== 'user' && message.role !== 'assistant')) invalid(`messages.${i}.role must be user or assistant`);
    const m = message as Obj;
    if (i === 0 && m.role !== 'user') invalid('A conversation must start with a user message. Try again with a conversation that starts with a user message.');
    if (i > 0 && (messages[i - 1] as Obj).role === m.role) invalid('A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.');
    if (!Array.isArray(m.content) || !m.content.length) invalid(`messages.${i}.content must not be empty`);
    const toolUses = new Set<string>();
    (m.content as unknown[]).forEach((block, j) => {
      if (!isObj(block) || Object.keys(block).length !== 1 || !BLOCK_KEYS.has(Object.keys(block)[0] as string)) {
        invalid(`messages.${i}.content.${j} must hold exactly one content block member`);
      }
      const b = block as Obj;
      if ('text' in b && (typeof b.text !== 'string' || !b.text.trim())) {
        invalid(`The text field in the ContentBlock object at messages.${i}.content.${j} is blank. Add text to the text field, and try again.`);
      }
      if ('image' in b) {
        const image = b.image as Obj;
        if (!isObj(image) || !IMAGE_FORMATS.has(image.format as string) || !isObj(image.source) || typeof image.source.bytes !== 'string') {
          invalid(`messages.${i}.content.${j}.image is malformed`);
        }
        if (family(model) === 'meta' && !llamaWithVision(model)) invalid("This model doesn't support the image content block that you provided. Try again with a supported content block.");
        if (Buffer.from((image.source as Obj).bytes as string, 'base64').byteLength === 0) invalid(`messages.${i}.content.${j}.image.source.bytes is empty`);
      }
      if ('reasoningContent' in b) {
        const r = b.reasoningContent as Obj;
        const text = isObj(r) && isObj(r.reasoningText) ? (r.reasoningText as Obj) : undefined;
        const wellFormed = text ? typeof text.text === 'string' && typeof text.signature === 'string' : isObj(r) && typeof r.redactedContent === 'string';
        if (m.role !== 'assistant' || !wellFormed) invalid(`messages.${i}.content.${j}.reasoningContent is malformed`);
      }
      if ('toolUse' in b) {
        toolBlocks = true;
        const use = b.toolUse as Obj;
        if (m.role !== 'assistant' || !isObj(use) || typeof use.toolUseId !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(use.toolUseId) || typeof use.name !== 'string' || !isObj(use.input)) {
          invalid(`messages.${i}.content.${j}.toolUse is malformed`);
        }
        toolUses.add(use.toolUseId as string);
      }
      if ('toolResult' in b) {
        toolBlocks = true;
        const result = b.toolResult as Obj;
        if (m.role !== 'user' || !isObj(result) || typeof result.toolUseId !== 'string' || !Array.isArray(result.content)) invalid(`messages.${i}.content.${j}.toolResult is malformed`);
        if (!previousToolUses.has(result.toolUseId as string)) {
          invalid(`The toolUseId ${String(result.toolUseId)} in messages.${i}.content.${j}.toolResult has no toolUse block in the previous turn.`);
        }
      }
    });
    previousToolUses = toolUses;
  });
  if ((messages as Obj[])[messages.length - 1]?.role !== 'user') invalid('The last message must be a user message.');

  if (body.system !== undefined) {
    if (!Array.isArray(body.system) || body.system.some((s) => !isObj(s) || typeof s.text !== 'string')) invalid('system must be a list of text blocks');
    if (noSystem(model)) invalid("This model doesn't support system messages. Try again without a system message or use a model that supports system messages.");
  }

  const inference = body.inferenceConfig;
  if (inference !== undefined) {
    if (!isObj(inference)) invalid('inferenceConfig must be an object');
    const cfg = inference as Obj;
    onlyKeys(cfg, new Set(['maxTokens', 'temperature', 'topP', 'stopSequences']), '/inferenceConfig');
    if (cfg.maxTokens !== undefined && (!Number.isInteger(cfg.maxTokens) || (cfg.maxTokens as number) < 1)) invalid('inferenceConfig.maxTokens must be a positive integer');
    for (const k of ['temperature', 'topP']) if (cfg[k] !== undefined && (typeof cfg[k] !== 'number' || (cfg[k] as number) < 0 || (cfg[k] as number) > 1)) invalid(`inferenceConfig.${k} must be between 0 and 1`);
    if (cfg.stopSequences !== undefined && (!Array.isArray(cfg.stopSequences) || cfg.stopSequences.some((s) => typeof s !== 'string'))) invalid('inferenceConfig.stopSequences must be strings');
  }

  // Claude's extended thinking, which Converse takes only in additionalModelRequestFields (Anthropic's rules).
  const extra = body.additionalModelRequestFields;
  if (extra !== undefined) {
    if (!isObj(extra)) invalid('additionalModelRequestFields must be an object');
    const thinking = (extra as Obj).thinking;
    if (thinking !== undefined) {
      if (family(model) !== 'anthropic') invalid(`The model returned the following errors: extraneous key [thinking] is not permitted`);
      if (!isObj(thinking) || (thinking.type !== 'enabled' && thinking.type !== 'disabled')) invalid('thinking.type: Input should be enabled or disabled');
      const t = thinking as Obj;
      if (t.type === 'enabled') {
        if (!Number.isInteger(t.budget_tokens) || (t.budget_tokens as number) < 1024) invalid('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
        const max = isObj(inference) ? ((inference as Obj).maxTokens as number | undefined) : undefined;
        if (max === undefined || max <= (t.budget_tokens as number)) invalid('`max_tokens` must be greater than `thinking.budget_tokens`');
      }
    }
  }

  const toolConfig = body.toolConfig;
  if (toolConfig === undefined) {
    if (toolBlocks) invalid('The toolConfig field must be defined when using toolUse and toolResult content blocks.');
  } else {
    if (!isObj(toolConfig) || !Array.isArray(toolConfig.tools) || !toolConfig.tools.length) invalid('toolConfig.tools must be a non-empty list');
    const names = new Set<string>();
    for (const tool of (toolConfig as Obj).tools as unknown[]) {
      const spec = isObj(tool) ? tool.toolSpec : undefined;
      if (!isObj(spec) || typeof spec.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(spec.name) || !isObj(spec.inputSchema) || !isObj(spec.inputSchema.json)) {
        invalid('toolConfig.tools holds a malformed toolSpec');
      }
      names.add((spec as Obj).name as string);
    }
    const choice = (toolConfig as Obj).toolChoice;
    if (choice !== undefined) {
      const form = isObj(choice) && Object.keys(choice).length === 1 ? (Object.keys(choice)[0] as string) : '';
      if (!['auto', 'any', 'tool'].includes(form)) invalid('toolConfig.toolChoice must be one of auto, any, tool');
      if (!toolChoiceForms(model).has(form)) invalid(`This model doesn't support the toolConfig.toolChoice.${form} field. Remove toolConfig.toolChoice.${form} and try again.`);
      if (form === 'tool' && !names.has(((choice as Obj).tool as Obj)?.name as string)) invalid('toolConfig.toolChoice.tool names a tool that is not in toolConfig.tools');
    }
    if (stream && family(model) === 'meta') invalid("This model doesn't support tool use in streaming mode.");
  }

  const output = body.outputConfig;
  if (output !== undefined) {
    const format = isObj(output) ? output.textFormat : undefined;
    const schema = isObj(format) && isObj(format.structure) && isObj(format.structure.jsonSchema) ? format.structure.jsonSchema : undefined;
    if (!isObj(format) || format.type !== 'json_schema' || !schema || typeof schema.schema !== 'string' || typeof schema.name !== 'string') {
      invalid('outputConfig.textFormat must be {type: json_schema, structure: {jsonSchema: {schema, name}}}');
    }
    try {
      JSON.parse((schema as Obj).schema as string);
    } catch {
      invalid('outputConfig.textFormat.structure.jsonSchema.schema is not valid JSON');
    }
  }
}

// ---- the protocol's answer in Converse terms ------------------------------------------------------------------

function blockTexts(content: Obj[]): string {
  return content.filter((b) => typeof b.text === 'string').map((b) => b.text as string).join(' ');
}

interface Plan {
  answer: NeutralAnswer;
  /** The forced tool (toolChoice.tool) that carries a JSON-mode answer. */
  forced?: string;
}

function plan(body: Obj, model: string): Plan {
  const toolConfig = isObj(body.toolConfig) ? body.toolConfig : undefined;
  const choice = toolConfig && isObj(toolConfig.toolChoice) ? toolConfig.toolChoice : undefined;
  const forced = choice && isObj(choice.tool) ? (choice.tool.name as string) : undefined;
  const tools = ((toolConfig?.tools as Obj[] | undefined) ?? []).map((t) => (t.toolSpec as Obj).name as string).filter((n) => n !== forced);
  const neutral: NeutralRequest = {
    model,
    system: ((body.system as Obj[] | undefined) ?? []).map((s) => s.text as string),
    turns: (body.messages as Obj[]).map((m) => {
      const content = m.content as Obj[];
      const results = content.filter((b) => isObj(b.toolResult));
      if (m.role === 'user' && results.length && results.length === content.length) {
        return { role: 'tool' as const, text: results.map((b) => blockTexts((b.toolResult as Obj).content as Obj[])).join(' ') };
      }
      return { role: m.role as 'user' | 'assistant', text: blockTexts(content), images: content.filter((b) => isObj(b.image)).length };
    }),
    tools,
    jsonMode: forced !== undefined || isObj(body.outputConfig),
    stop: ((isObj(body.inferenceConfig) ? body.inferenceConfig.stopSequences : undefined) as string[] | undefined) ?? [],
  };
  return { answer: answer(neutral), forced };
}

interface Content {
  blocks: Obj[];
  stopReason: string;
  inputTokens: number;
  outputTokens: number;
}

function contentOf({ answer: result, forced }: Plan): Content {
  if (result.kind === 'error') throw new Error('unreachable');
  if (result.kind === 'tools') {
    return {
      blocks: result.calls.map((c, i) => ({ toolUse: { toolUseId: `tooluse_conformance_${i}`, name: c.name, input: JSON.parse(c.args) } })),
      stopReason: 'tool_use',
      inputTokens: result.inputTokens,
      outputTokens: result.outputTokens,
    };
  }
  if (forced) {
    return {
      blocks: [{ toolUse: { toolUseId: 'tooluse_json', name: forced, input: JSON.parse(result.text) } }],
      stopReason: 'tool_use',
      inputTokens: result.inputTokens,
      outputTokens: result.outputTokens,
    };
  }
  return { blocks: [{ text: result.text }], stopReason: 'end_turn', inputTokens: result.inputTokens, outputTokens: result.outputTokens };
}

/** Bedrock counts cache reads apart from `inputTokens`: the protocol's input count splits into 2 cached + the rest. */
function usage(c: Content) {
  const cached = 2;
  const inputTokens = Math.max(0, c.inputTokens - cached);
  return { inputTokens, outputTokens: c.outputTokens, totalTokens: inputTokens + c.outputTokens + cached, cacheReadInputTokens: cached, cacheWriteInputTokens: 0 };
}

/** The reasoning a thinking Claude model puts first: about the last user text, signed. */
export function reasoningBlock(body: Obj): Obj {
  const turns = body.messages as Obj[];
  const last = [...turns].reverse().find((t) => t.role === 'user');
  const said = ((last?.content as Obj[]) ?? []).map((b) => (typeof b.text === 'string' ? b.text : '')).join(' ');
  const text = `The user wrote "${said}". Answer briefly.`;
  return { reasoningContent: { reasoningText: { text, signature: `sig-${Buffer.from(text).toString('base64').slice(0, 24)}` } } };
}

// ---- streams ---------------------------------------------------------------------------------------------------

const PAD = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/** Bedrock pads stream payloads with a `p` field of varying length. */
const pad = (n: number) => PAD.slice(0, 1 + (n * 7) % PAD.length);

function streamMessages(c: Content, forcedJson: boolean): Uint8Array[] {
  const out: Uint8Array[] = [eventMessage('messageStart', { p: pad(0), role: 'assistant' })];
  c.blocks.forEach((block, index) => {
    if (isObj(block.reasoningContent)) {
      const r = (block.reasoningContent as Obj).reasoningText as Obj;
      for (const piece of pieces(r.text as string)) out.push(eventMessage('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: piece } }, p: pad(piece.length) }));
      out.push(eventMessage('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { signature: r.signature } }, p: pad(index) }));
    } else if (isObj(block.toolUse)) {
      const use = block.toolUse;
      out.push(eventMessage('contentBlockStart', { contentBlockIndex: index, p: pad(index + 1), start: { toolUse: { toolUseId: use.toolUseId, name: use.name } } }));
      const args = JSON.stringify(use.input);
      for (const piece of pieces(args, forcedJson ? 5 : 6)) out.push(eventMessage('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: piece } }, p: pad(piece.length) }));
    } else {
      for (const piece of pieces(block.text as string)) out.push(eventMessage('contentBlockDelta', { contentBlockIndex: index, delta: { text: piece }, p: pad(piece.length) }));
    }
    out.push(eventMessage('contentBlockStop', { contentBlockIndex: index, p: pad(index) }));
  });
  out.push(eventMessage('messageStop', { p: pad(3), stopReason: c.stopReason }));
  out.push(eventMessage('metadata', { metrics: { latencyMs: 12 }, p: pad(5), usage: usage(c) }));
  return out;
}

/** The bytes in uneven slices, so that messages split across reads (and reads hold several messages). */
function sliced(bytes: Uint8Array): ReadableStream<Uint8Array> {
  const sizes = [5, 37, 1, 120, 13, 64];
  let at = 0;
  let n = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (at >= bytes.byteLength) return controller.close();
      const size = sizes[n++ % sizes.length] as number;
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
      await Bun.sleep(0);
    },
  });
}

const STREAM_HEADERS = { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'test-request-id' };

function scriptedStream(model: string): Response | undefined {
  const start = eventMessage('messageStart', { role: 'assistant' });
  const delta = (text: string) => eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text } });
  let parts: Uint8Array[];
  switch (model) {
    case 'test.stream-exception':
      parts = [start, delta('partial '), exceptionMessage('throttlingException', 'Too many tokens, please wait before trying again.')];
      break;
    case 'test.stream-bad-crc': {
      const broken = delta('broken').slice();
      broken[broken.byteLength - 1] = (broken[broken.byteLength - 1] as number) ^ 0xff;
      parts = [start, broken, delta('never seen')];
      break;
    }
    case 'test.stream-bad-json':
      parts = [start, delta('fine'), rawEvent('contentBlockDelta', 'this is not json')];
      break;
    case 'test.stream-cut': {
      const whole = delta('half');
      parts = [start, delta('some text '), whole.slice(0, Math.floor(whole.byteLength / 2))];
      break;
    }
    default:
      return undefined;
  }
  return new Response(sliced(concatBytes(parts)), { headers: STREAM_HEADERS });
}

/** An event whose payload is framed as given (not JSON-encoded). */
function rawEvent(eventType: string, payload: string): Uint8Array {
  return encodeMessage(
    [
      { name: ':event-type', type: 'string', value: eventType },
      { name: ':content-type', type: 'string', value: 'application/json' },
      { name: ':message-type', type: 'string', value: 'event' },
    ],
    payload,
  );
}

// ---- embeddings ------------------------------------------------------------------------------------------------

function invoke(body: Obj, model: string): Response {
  if (/^amazon\.titan-embed/.test(model)) {
    onlyKeys(body, new Set(['inputText', 'dimensions', 'normalize', 'embeddingTypes']), '');
    if (typeof body.inputText !== 'string' || !body.inputText) invalid(`Malformed input request: #/inputText: expected type: String, found: ${Array.isArray(body.inputText) ? 'JSONArray' : typeof body.inputText}`);
    if (body.dimensions !== undefined) {
      if (!/^amazon\.titan-embed-text-v2/.test(model)) invalid('Malformed input request: #: extraneous key [dimensions] is not permitted');
      if (![256, 512, 1024].includes(body.dimensions as number)) invalid('Malformed input request: #/dimensions: must be one of 256, 512, 1024');
    }
    const text = body.inputText as string;
    if (text === 'test.embed-malformed') return Response.json({ inputTextTokenCount: 3 });
    const vector = embeddingFor(text);
    return Response.json({ embedding: vector, embeddingsByType: { float: vector }, inputTextTokenCount: wordCount(text) });
  }
  if (/^cohere\.embed/.test(model)) {
    onlyKeys(body, new Set(['texts', 'images', 'input_type', 'truncate', 'embedding_types', 'output_dimension']), '');
    if (!Array.isArray(body.texts) || !body.texts.length || body.texts.length > 96 || body.texts.some((t) => typeof t !== 'string')) invalid('Malformed input request: #/texts: expected 1 to 96 strings');
    if (!['search_document', 'search_query', 'classification', 'clustering'].includes(body.input_type as string)) invalid('Malformed input request: #/input_type: is required');
    const texts = body.texts as string[];
    return Response.json({ id: crypto.randomUUID(), texts, embeddings: texts.map(embeddingFor), response_type: 'embeddings_floats' });
  }
  return error(400, 'ValidationException', `The provided model identifier ${model} is invalid.`);
}

// ---- Converse answers ------------------------------------------------------------------------------------------

/** A Claude model asked to think puts its reasoning first. */
function withThinking(content: Content, body: Obj): Content {
  const thinking = isObj(body.additionalModelRequestFields) ? (body.additionalModelRequestFields as Obj).thinking : undefined;
  if (isObj(thinking) && thinking.type === 'enabled') content.blocks.unshift(reasoningBlock(body));
  return content;
}

/**
 * The Converse answer to a request body, or the ValidationException message Bedrock would give for it: what POST
 * …/converse answers, and what a batch inference job of the Converse type writes for each record.
 */
export function converseAnswer(body: Obj, model: string): { json: Obj } | { error: string } {
  try {
    validateConverse(body, model, false);
  } catch (e) {
    if (e instanceof Invalid) return { error: e.message };
    throw e;
  }
  const p = plan(body, model);
  if (p.answer.kind === 'error') return { error: ERROR_MESSAGE };
  const content = withThinking(contentOf(p), body);
  return {
    json: { output: { message: { role: 'assistant', content: content.blocks } }, stopReason: content.stopReason, usage: usage(content), metrics: { latencyMs: 12 } },
  };
}

// ---- the server ------------------------------------------------------------------------------------------------

export async function startBedrockServer(opts: { credentials?: Record<string, Credential>; s3?: S3Objects } = {}): Promise<BedrockServer> {
  const credentials = opts.credentials ?? {
    [KEY.id]: { secret: KEY.secret },
    [TEMP_KEY.id]: { secret: TEMP_KEY.secret, sessionToken: TEMP_KEY.sessionToken },
  };
  const jobs = new BatchJobs(opts.s3 ?? { objects: new Map() }, converseAnswer);
  const server = startMockServer<RecordedRequest>({
    record: ({ method, path, headers, body }) => ({ method, path, headers, body }),
    handle({ request, url, bytes, text }) {
      const rawPath = url.pathname;

      const rejected = verifyRequest({ method: request.method, url: request.url, headers: request.headers, body: bytes }, { credentials, region: REGION, service: 'bedrock' });
      if (rejected) return error(rejected.status, rejected.errorType, rejected.message);

      if (rawPath === '/model-invocation-job' || rawPath.startsWith('/model-invocation-job/')) return jobs.handle(request.method, rawPath, text);
      const route = /^\/model\/([^/]+)\/(converse|converse-stream|invoke)$/.exec(rawPath);
      if (!route || request.method !== 'POST') return error(404, 'UnknownOperationException', `No operation at ${request.method} ${rawPath}`);
      const model = decodeURIComponent(route[1] as string);
      const action = route[2] as string;
      let body: Obj;
      try {
        const parsed = JSON.parse(text) as unknown;
        if (!isObj(parsed)) throw new Error();
        body = parsed;
      } catch {
        return error(400, 'SerializationException', 'Unable to parse the request body as JSON');
      }

      try {
        if (action === 'invoke') return invoke(body, model);
        if (model === 'test.not-json') return new Response('<html>gateway timeout</html>', { headers: { 'content-type': 'text/html' } });
        if (model === 'test.malformed-answer') return Response.json({ output: {}, stopReason: 'end_turn' });
        if (action === 'converse-stream') {
          const scripted = scriptedStream(model);
          if (scripted) return scripted;
        }
        if (action === 'converse') {
          const answered = converseAnswer(body, model);
          return 'error' in answered ? error(400, 'ValidationException', answered.error) : Response.json(answered.json);
        }
        validateConverse(body, model, true);
        const p = plan(body, model);
        if (p.answer.kind === 'error') return error(400, 'ValidationException', ERROR_MESSAGE);
        const content = withThinking(contentOf(p), body);
        return new Response(sliced(concatBytes(streamMessages(content, p.forced !== undefined))), { headers: STREAM_HEADERS });
      } catch (e) {
        if (e instanceof Invalid) return error(400, 'ValidationException', e.message);
        throw e;
      }
    },
  });
  return { url: server.url, requests: server.requests, jobs: jobs.jobs, stop: server.stop };
}
