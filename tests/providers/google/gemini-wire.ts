/**
 * The Gemini wire format as a test server speaks it (shared by the Gemini API server here and the Vertex AI server in
 * ../vertex-ai): request validation the way Google refuses bodies, the conformance protocol's answer
 * (tests/conformance/protocol.ts) as a GenerateContentResponse, as an `alt=sse` stream and as the default JSON-array
 * stream, embeddings, and models that inject failures.
 *
 * Native signals: JSON mode is `generationConfig.responseMimeType: application/json`; cached input is
 * `cachedContentTokenCount: 2`; reasoning is `thoughtsTokenCount` = 3 (at most the answer's count: Gemini counts
 * thoughts apart from `candidatesTokenCount`, which is the protocol's output count less the thoughts). A function call
 * arrives whole in one part (Gemini does not split arguments), with a thought signature on the first call that a
 * Gemini 3 model wants back in the next turn. With `thinkingConfig.includeThoughts` a thought part comes first.
 */
import { embeddingFor, ERROR_MESSAGE } from '../../conformance/protocol.ts';
import { answer, type NeutralAnswer, type NeutralRequest, pieces } from '../../conformance/protocol-answer.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const THOUGHT_SIGNATURE = 'c2lnbmF0dXJlLWNvbmZvcm1hbmNl';
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';
export const THOUGHT_TEXT = 'Thinking it over.';
export const CACHED_TOKENS = 2;
export const REASONING_TOKENS = 3;

/** Models that make the server misbehave, for robustness tests. */
export const FAULT_MODELS = {
  /** 200 with a JSON object that is no GenerateContentResponse. */
  malformed: 'fault-malformed-answer',
  /** 200 with a body that is not JSON. */
  notJson: 'fault-not-json',
  /** A stream whose second event is not JSON. */
  malformedStream: 'fault-malformed-stream',
  /** A stream that ends without a finish reason. */
  cutStream: 'fault-cut-stream',
  /** A stream that reports an error after its first piece. */
  errorInStream: 'fault-error-in-stream',
  /** A prompt blocked by safety: no candidates. */
  blocked: 'fault-blocked-prompt',
  /** An answer cut at the token limit. */
  maxTokens: 'fault-max-tokens',
} as const;

export function googleError(code: number, status: string, message: string): Response {
  return Response.json({ error: { code, message, status } }, { status: code });
}

// ---- validation, as Google refuses bodies ---------------------------------------------------------------------

const REQUEST_FIELDS = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent', 'labels']);
const GENERATION_FIELDS = new Set([
  'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'candidateCount', 'maxOutputTokens', 'temperature', 'topP', 'topK',
  'seed', 'presencePenalty', 'frequencyPenalty', 'responseLogprobs', 'logprobs', 'thinkingConfig', 'responseModalities',
]);
const SCHEMA_FIELDS = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required', 'minProperties', 'maxProperties',
  'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering', 'default', 'items', 'minimum', 'maximum',
]);
const PART_DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];
const PART_FIELDS = new Set([...PART_DATA, 'thought', 'thoughtSignature', 'videoMetadata']);

const unknownName = (name: string, at: string) => `Invalid JSON payload received. Unknown name "${name}" at '${at}': Cannot find field.`;

function checkSchema(schema: unknown, at: string): string | undefined {
  if (!isObj(schema)) return `${at}: must be an object`;
  for (const key of Object.keys(schema)) if (!SCHEMA_FIELDS.has(key)) return unknownName(key, at);
  if (schema.type !== undefined && (typeof schema.type !== 'string' || !/^(string|number|integer|boolean|array|object|null)$/i.test(schema.type)))
    return `Invalid value at '${at}.type': ${JSON.stringify(schema.type)}`;
  if (typeof schema.type === 'string' && schema.type.toLowerCase() === 'object' && isObj(schema.properties) && !Object.keys(schema.properties).length && at.includes('parameters'))
    return `${at}.properties: should be non-empty for OBJECT type`;
  if (isObj(schema.properties)) for (const [k, v] of Object.entries(schema.properties)) {
    const p = checkSchema(v, `${at}.properties[${k}]`);
    if (p) return p;
  }
  if (schema.items !== undefined) return checkSchema(schema.items, `${at}.items`);
  if (Array.isArray(schema.anyOf)) for (const [i, s] of schema.anyOf.entries()) {
    const p = checkSchema(s, `${at}.anyOf[${i}]`);
    if (p) return p;
  }
  return undefined;
}

/** The first thing Gemini would refuse in a generateContent body; undefined when it is valid. */
export function validateGenerateContent(body: Obj, model: string): string | undefined {
  for (const key of Object.keys(body)) if (!REQUEST_FIELDS.has(key)) return unknownName(key, '');
  if (!Array.isArray(body.contents) || body.contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified';
  let previousRole: unknown;
  let pendingCalls = 0;
  for (const [i, content] of body.contents.entries()) {
    const at = `contents[${i}]`;
    if (!isObj(content)) return `${at}: must be an object`;
    if (content.role !== 'user' && content.role !== 'model') return `* GenerateContentRequest.${at}.role: Please use a valid role: user, model.`;
    if (content.role === previousRole) return 'Please ensure that multiturn requests alternate between user and model.';
    previousRole = content.role;
    if (!Array.isArray(content.parts) || !content.parts.length) return `* GenerateContentRequest.${at}.parts: contents.parts must not be empty.`;
    let calls = 0;
    let responses = 0;
    for (const [j, part] of content.parts.entries()) {
      const pat = `${at}.parts[${j}]`;
      if (!isObj(part)) return `${pat}: must be an object`;
      for (const key of Object.keys(part)) if (!PART_FIELDS.has(key)) return unknownName(key, pat);
      const data = PART_DATA.filter((k) => part[k] !== undefined);
      if (data.length !== 1) return `* GenerateContentRequest.${pat}.data: required oneof field 'data' must have one initialized field`;
      if (part.text !== undefined && (typeof part.text !== 'string' || part.text === '')) return `* GenerateContentRequest.${pat}.text: must be a non-empty string`;
      if (part.inlineData !== undefined) {
        const d = part.inlineData;
        if (!isObj(d) || typeof d.mimeType !== 'string' || typeof d.data !== 'string') return `${pat}.inline_data: mimeType and data are required`;
        if (!/^[A-Za-z0-9+/]*={0,2}$/.test(d.data)) return `Invalid value at '${pat}.inline_data.data' (TYPE_BYTES), Base64 decoding failed`;
      }
      if (part.fileData !== undefined && (!isObj(part.fileData) || typeof part.fileData.fileUri !== 'string')) return `${pat}.file_data: fileUri is required`;
      if (part.functionCall !== undefined) {
        const c = part.functionCall;
        if (content.role !== 'model') return `${pat}: function calls are only allowed in model turns`;
        if (!isObj(c) || typeof c.name !== 'string' || !c.name || (c.args !== undefined && !isObj(c.args))) return `${pat}.function_call: name is required and args must be an object`;
        if (calls === 0 && /^gemini-3/.test(model)) {
          if (part.thoughtSignature === undefined)
            return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`${c.name}\` , position ${i + 1}.`;
          if (part.thoughtSignature !== THOUGHT_SIGNATURE && part.thoughtSignature !== SKIP_SIGNATURE) return 'Corrupted thought signature.';
        }
        calls++;
      }
      if (part.functionResponse !== undefined) {
        const r = part.functionResponse;
        if (content.role !== 'user') return `${pat}: function responses are only allowed in user turns`;
        if (!isObj(r) || typeof r.name !== 'string' || !isObj(r.response)) return `${pat}.function_response: name and a response object are required`;
        responses++;
      }
    }
    if (pendingCalls && responses !== pendingCalls)
      return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
    pendingCalls = calls;
  }
  if (body.systemInstruction !== undefined) {
    const s = body.systemInstruction;
    if (!isObj(s) || !Array.isArray(s.parts) || !s.parts.every((p) => isObj(p) && typeof p.text === 'string')) return 'systemInstruction: parts of text are required';
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return 'tools: must be a list';
    for (const [i, tool] of body.tools.entries()) {
      if (!isObj(tool)) return `tools[${i}]: must be an object`;
      for (const key of Object.keys(tool)) if (!['functionDeclarations', 'googleSearch', 'codeExecution', 'urlContext'].includes(key)) return unknownName(key, `tools[${i}]`);
      for (const [j, fn] of ((tool.functionDeclarations as unknown[]) ?? []).entries()) {
        const at = `tools[${i}].function_declarations[${j}]`;
        if (!isObj(fn) || typeof fn.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/.test(fn.name)) return `* GenerateContentRequest.${at}.name: Invalid function name.`;
        for (const key of Object.keys(fn)) if (!['name', 'description', 'parameters', 'response', 'behavior'].includes(key)) return unknownName(key, at);
        if (fn.parameters !== undefined) {
          const p = checkSchema(fn.parameters, `${at}.parameters`);
          if (p) return p;
        }
      }
    }
  }
  if (body.toolConfig !== undefined) {
    const fc = isObj(body.toolConfig) ? body.toolConfig.functionCallingConfig : undefined;
    if (!isObj(fc) || !['AUTO', 'ANY', 'NONE', 'VALIDATED'].includes(String(fc.mode))) return "toolConfig.functionCallingConfig.mode: Invalid value";
    if (fc.allowedFunctionNames !== undefined && fc.mode !== 'ANY' && fc.mode !== 'VALIDATED')
      return 'allowed_function_names should only be set when the Function calling mode is ANY.';
  }
  if (body.generationConfig !== undefined) {
    const g = body.generationConfig;
    if (!isObj(g)) return 'generationConfig: must be an object';
    for (const key of Object.keys(g)) if (!GENERATION_FIELDS.has(key)) return unknownName(key, 'generation_config');
    if (g.responseSchema !== undefined) {
      if (g.responseMimeType !== 'application/json') return 'responseSchema requires responseMimeType application/json';
      const p = checkSchema(g.responseSchema, 'generation_config.response_schema');
      if (p) return p;
    }
    if (g.stopSequences !== undefined && (!Array.isArray(g.stopSequences) || g.stopSequences.length > 5)) return 'stopSequences: at most 5';
  }
  return undefined;
}

// ---- the protocol's answer --------------------------------------------------------------------------------------

function functionResponseText(response: unknown): string {
  if (isObj(response) && Object.keys(response).length === 1 && typeof response.output === 'string') return response.output;
  return JSON.stringify(response);
}

export function neutralFromGemini(body: Obj, model: string): NeutralRequest {
  const system = isObj(body.systemInstruction) && Array.isArray(body.systemInstruction.parts)
    ? (body.systemInstruction.parts as Obj[]).map((p) => String(p.text ?? ''))
    : [];
  const turns: NeutralRequest['turns'] = [];
  for (const content of body.contents as Obj[]) {
    const parts = content.parts as Obj[];
    const results = parts.filter((p) => isObj(p.functionResponse));
    for (const r of results) turns.push({ role: 'tool', text: functionResponseText((r.functionResponse as Obj).response) });
    const rest = parts.filter((p) => !isObj(p.functionResponse) && p.thought !== true);
    if (rest.length || !results.length) {
      const media = rest.map((p) => (isObj(p.inlineData) ? p.inlineData : isObj(p.fileData) ? p.fileData : undefined)).filter(isObj);
      turns.push({
        role: content.role === 'model' ? 'assistant' : 'user',
        text: rest.filter((p) => typeof p.text === 'string').map((p) => p.text as string).join(' '),
        images: media.filter((m) => String(m.mimeType ?? '').startsWith('image/')).length,
      });
    }
  }
  const tools = ((body.tools as Obj[] | undefined) ?? []).flatMap((t) => ((t.functionDeclarations as Obj[] | undefined) ?? []).map((f) => String(f.name)));
  const g = isObj(body.generationConfig) ? body.generationConfig : {};
  return {
    model,
    system,
    turns,
    tools,
    jsonMode: g.responseMimeType === 'application/json',
    stop: Array.isArray(g.stopSequences) ? (g.stopSequences as string[]) : [],
  };
}

type Answered = Exclude<NeutralAnswer, { kind: 'error' }>;

export function usageMetadata(result: Answered): Obj {
  const thoughts = Math.min(REASONING_TOKENS, result.outputTokens);
  return {
    promptTokenCount: result.inputTokens,
    candidatesTokenCount: result.outputTokens - thoughts,
    thoughtsTokenCount: thoughts,
    cachedContentTokenCount: CACHED_TOKENS,
    totalTokenCount: result.inputTokens + result.outputTokens,
  };
}

function callParts(result: Answered): Obj[] {
  if (result.kind !== 'tools') return [];
  return result.calls.map((c, i) => ({ functionCall: { name: c.name, args: JSON.parse(c.args) as Obj }, ...(i === 0 ? { thoughtSignature: THOUGHT_SIGNATURE } : {}) }));
}

function wantsThoughts(body: Obj): boolean {
  const g = isObj(body.generationConfig) ? body.generationConfig : {};
  return isObj(g.thinkingConfig) && g.thinkingConfig.includeThoughts === true;
}

let responseCounter = 0;

/** The whole answer as a GenerateContentResponse. */
export function generateContentResponse(result: Answered, body: Obj, model: string, finishReason = 'STOP'): Obj {
  const parts: Obj[] = wantsThoughts(body) ? [{ text: THOUGHT_TEXT, thought: true }] : [];
  if (result.kind === 'tools') parts.push(...callParts(result));
  else parts.push({ text: result.text });
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }],
    usageMetadata: usageMetadata(result),
    modelVersion: model,
    responseId: `resp-${++responseCounter}`,
  };
}

/** The answer as stream chunks: text in pieces of ≤ 8 characters, function calls whole, the finish on the last. */
export function streamChunks(result: Answered, body: Obj, model: string): Obj[] {
  const responseId = `resp-${++responseCounter}`;
  const usage = usageMetadata(result);
  const partial = { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount };
  const chunk = (parts: Obj[], last: boolean): Obj => ({
    candidates: [{ content: { role: 'model', parts }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 }],
    usageMetadata: last ? usage : partial,
    modelVersion: model,
    responseId,
  });
  const out: Obj[] = [];
  if (wantsThoughts(body)) out.push(chunk([{ text: THOUGHT_TEXT, thought: true }], false));
  if (result.kind === 'tools') out.push(chunk(callParts(result), true));
  else {
    const ps = pieces(result.text);
    ps.forEach((p, i) => out.push(chunk([{ text: p }], i === ps.length - 1)));
  }
  return out;
}

export function sse(chunks: Obj[]): string {
  return chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join('');
}

function sseResponse(text: string): Response {
  return new Response(text, { headers: { 'content-type': 'text/event-stream' } });
}

/** Failure-injecting answers; undefined for ordinary models. */
function faultAnswer(model: string, stream: boolean, body: Obj): Response | undefined {
  const ok: Answered = { kind: 'text', text: 'Partial answer here', inputTokens: 1, outputTokens: 3 };
  switch (model) {
    case FAULT_MODELS.malformed:
      return Response.json({ hello: 'world' });
    case FAULT_MODELS.notJson:
      return new Response('<html>upstream proxy error</html>', { headers: { 'content-type': 'application/json' } });
    case FAULT_MODELS.malformedStream:
      return sseResponse(`${sse(streamChunks(ok, body, model).slice(0, 1))}data: {"candidates": [oops\r\n\r\n`);
    case FAULT_MODELS.cutStream:
      return sseResponse(sse(streamChunks(ok, body, model).slice(0, 1)));
    case FAULT_MODELS.errorInStream:
      return sseResponse(`${sse(streamChunks(ok, body, model).slice(0, 1))}${sse([{ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }])}`);
    case FAULT_MODELS.blocked: {
      const blocked = { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 }, modelVersion: model };
      return stream ? sseResponse(sse([blocked])) : Response.json(blocked);
    }
    case FAULT_MODELS.maxTokens: {
      if (stream) {
        const chunks = streamChunks(ok, body, model);
        const last = chunks[chunks.length - 1] as { candidates: Obj[] };
        (last.candidates[0] as Obj).finishReason = 'MAX_TOKENS';
        return sseResponse(sse(chunks));
      }
      return Response.json(generateContentResponse(ok, body, model, 'MAX_TOKENS'));
    }
    default:
      return undefined;
  }
}

/**
 * Answers generateContent / streamGenerateContent / batchEmbedContents of a Gemini model (the caller routed and
 * authenticated). `sseStream`: the query asked for `alt=sse`; without it a stream is one JSON array.
 */
export function answerGemini(method: string, model: string, body: Obj, sseStream: boolean): Response {
  if (method === 'batchEmbedContents') {
    if (!Array.isArray(body.requests) || !body.requests.length) return googleError(400, 'INVALID_ARGUMENT', '* BatchEmbedContentsRequest.requests: requests must not be empty');
    const embeddings: Obj[] = [];
    for (const [i, r] of body.requests.entries()) {
      if (!isObj(r) || r.model !== `models/${model}`)
        return googleError(400, 'INVALID_ARGUMENT', `* BatchEmbedContentsRequest.requests[${i}].model: the model must be models/${model}`);
      const parts = isObj(r.content) && Array.isArray(r.content.parts) ? (r.content.parts as Obj[]) : [];
      const text = parts.map((p) => String(p.text ?? '')).join('');
      embeddings.push({ values: embeddingFor(text) });
    }
    return Response.json({ embeddings });
  }
  if (method !== 'generateContent' && method !== 'streamGenerateContent') return googleError(404, 'NOT_FOUND', `Method ${method} not found`);
  const stream = method === 'streamGenerateContent';
  const fault = faultAnswer(model, stream, body);
  if (fault) return fault;
  const problem = validateGenerateContent(body, model);
  if (problem) return googleError(400, 'INVALID_ARGUMENT', problem);
  const result = answer(neutralFromGemini(body, model));
  if (result.kind === 'error') return googleError(400, 'INVALID_ARGUMENT', ERROR_MESSAGE);
  if (!stream) return Response.json(generateContentResponse(result, body, model));
  const chunks = streamChunks(result, body, model);
  return sseStream ? sseResponse(sse(chunks)) : Response.json(chunks);
}
