/**
 * Streams and the cache (README.md "Streaming").
 *
 * - Storing: the SSE bytes the client was sent (OpenAI-shaped chunks: the core has already translated a provider's
 *   own format) are assembled into the whole answer a non-streamed request would have got: a `chat.completion` (or
 *   `text_completion`) with the content, tool calls, refusal, logprobs and finish reason of each choice, and `usage`
 *   when the stream carried it. A stream is assembled only when it ended with `data: [DONE]` and held no error event.
 * - Replaying: a stored answer is sent to a streaming request as a valid SSE stream: per choice one chunk with the
 *   role and the whole content (tool calls, refusal, logprobs), one chunk with the finish reason, then, when the
 *   request asked for `stream_options.include_usage`, the usage chunk (empty `choices`), then `data: [DONE]`.
 */
import type { Json, JsonObject } from '@gateway/sdk';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The `data:` payloads of an SSE text, event by event; undefined when it holds a malformed event. */
export function sseEvents(text: string): string[] {
  const events: string[] = [];
  let data: string[] = [];
  let start = 0;
  const flush = () => {
    if (data.length) events.push(data.join('\n'));
    data = [];
  };
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    let line = text.slice(start, end);
    start = end + 1;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line === '') flush();
    else if (line.startsWith('data:')) data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
  }
  flush();
  return events;
}

export interface Assembled {
  /** The whole answer, as JSON text. */
  body: string;
  usage: boolean;
}

interface ToolCallAcc {
  id?: unknown;
  type?: unknown;
  name: string;
  nameSet: boolean;
  arguments: string;
  extra: Obj;
}

interface ChatChoiceAcc {
  index: number;
  fields: Obj;
  texts: Map<string, string>;
  toolCalls: Map<number, ToolCallAcc>;
  functionCall?: { name: string; arguments: string };
  logprobs?: { content?: unknown[]; refusal?: unknown[] };
  finish: unknown;
}

/**
 * The whole answer of a complete OpenAI-shaped stream (chat or text completion), or undefined when the stream is not
 * one that may be stored: no `[DONE]`, an error event, a malformed chunk, nothing in it.
 */
export function assembleStream(kind: 'chat' | 'text', sse: string): Assembled | undefined {
  const events = sseEvents(sse);
  if (events.length < 2 || events[events.length - 1] !== '[DONE]') return undefined;
  const chunks: Obj[] = [];
  for (let i = 0; i < events.length - 1; i++) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(events[i] as string);
    } catch {
      return undefined;
    }
    if (!isObj(parsed) || parsed.error !== undefined) return undefined;
    chunks.push(parsed);
  }
  if (!chunks.length) return undefined;
  return kind === 'chat' ? assembleChat(chunks) : assembleText(chunks);
}

const META = ['id', 'created', 'model', 'system_fingerprint', 'service_tier'] as const;

function meta(chunks: Obj[], object: string): Obj {
  const out: Obj = {};
  for (const chunk of chunks) for (const k of META) if (out[k] === undefined && chunk[k] !== undefined && chunk[k] !== null) out[k] = chunk[k];
  return { id: out.id ?? '', object, created: out.created ?? Math.floor(Date.now() / 1000), model: out.model ?? '', ...pick(out, ['system_fingerprint', 'service_tier']) };
}

function pick(obj: Obj, keys: readonly string[]): Obj {
  const out: Obj = {};
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k];
  return out;
}

function lastUsage(chunks: Obj[]): unknown {
  let usage: unknown;
  for (const chunk of chunks) if (isObj(chunk.usage)) usage = chunk.usage;
  return usage;
}

function assembleChat(chunks: Obj[]): Assembled | undefined {
  const choices = new Map<number, ChatChoiceAcc>();
  for (const chunk of chunks) {
    if (!Array.isArray(chunk.choices)) continue;
    for (const c of chunk.choices) {
      if (!isObj(c)) return undefined;
      const index = typeof c.index === 'number' ? c.index : 0;
      let acc = choices.get(index);
      if (!acc) choices.set(index, (acc = { index, fields: {}, texts: new Map(), toolCalls: new Map(), finish: null }));
      if (c.finish_reason !== undefined && c.finish_reason !== null) acc.finish = c.finish_reason;
      if (isObj(c.logprobs)) {
        acc.logprobs ??= {};
        for (const k of ['content', 'refusal'] as const) {
          const part = c.logprobs[k];
          if (Array.isArray(part)) acc.logprobs[k] = [...(acc.logprobs[k] ?? []), ...part];
        }
      }
      const delta = c.delta;
      if (!isObj(delta)) continue;
      for (const [k, v] of Object.entries(delta)) {
        if (k === 'tool_calls' && Array.isArray(v)) {
          for (const tc of v) {
            if (!isObj(tc)) return undefined;
            const i = typeof tc.index === 'number' ? tc.index : acc.toolCalls.size;
            let t = acc.toolCalls.get(i);
            if (!t) acc.toolCalls.set(i, (t = { name: '', nameSet: false, arguments: '', extra: {} }));
            if (tc.id !== undefined && tc.id !== null) t.id = tc.id;
            if (tc.type !== undefined && tc.type !== null) t.type = tc.type;
            const fn = tc.function;
            if (isObj(fn)) {
              if (typeof fn.name === 'string' && fn.name && !t.nameSet) {
                t.name = fn.name;
                t.nameSet = true;
              }
              if (typeof fn.arguments === 'string') t.arguments += fn.arguments;
            }
            for (const [ek, ev] of Object.entries(tc)) if (!['index', 'id', 'type', 'function'].includes(ek)) t.extra[ek] = ev;
          }
        } else if (k === 'function_call' && isObj(v)) {
          acc.functionCall ??= { name: '', arguments: '' };
          if (typeof v.name === 'string' && v.name && !acc.functionCall.name) acc.functionCall.name = v.name;
          if (typeof v.arguments === 'string') acc.functionCall.arguments += v.arguments;
        } else if (typeof v === 'string' && k !== 'role') {
          // content, refusal and any other text a provider streams (reasoning, say): pieces are concatenated.
          acc.texts.set(k, (acc.texts.get(k) ?? '') + v);
        } else if (v !== null && v !== undefined) acc.fields[k] = v;
        else if (!acc.texts.has(k) && !(k in acc.fields)) acc.fields[k] = null;
      }
    }
  }
  if (!choices.size) return undefined;
  const usage = lastUsage(chunks);
  const out: Obj = meta(chunks, 'chat.completion');
  out.choices = [...choices.values()]
    .sort((a, b) => a.index - b.index)
    .map((acc) => {
      const message: Obj = { role: acc.fields.role ?? 'assistant' };
      message.content = acc.texts.get('content') ?? null;
      for (const [k, v] of acc.texts) if (k !== 'content') message[k] = v;
      for (const [k, v] of Object.entries(acc.fields)) if (k !== 'role' && message[k] === undefined) message[k] = v;
      if (acc.toolCalls.size)
        message.tool_calls = [...acc.toolCalls.entries()]
          .sort((a, b) => a[0] - b[0])
          .map(([, t]) => ({ ...t.extra, id: t.id ?? '', type: t.type ?? 'function', function: { name: t.name, arguments: t.arguments } }));
      if (acc.functionCall) message.function_call = acc.functionCall;
      return { index: acc.index, message, logprobs: acc.logprobs ?? null, finish_reason: acc.finish ?? 'stop' };
    });
  if (usage !== undefined) out.usage = usage;
  return { body: JSON.stringify(out), usage: usage !== undefined };
}

function assembleText(chunks: Obj[]): Assembled | undefined {
  const choices = new Map<number, { text: string; finish: unknown; logprobs?: Record<string, unknown[]> }>();
  for (const chunk of chunks) {
    if (!Array.isArray(chunk.choices)) continue;
    for (const c of chunk.choices) {
      if (!isObj(c)) return undefined;
      const index = typeof c.index === 'number' ? c.index : 0;
      let acc = choices.get(index);
      if (!acc) choices.set(index, (acc = { text: '', finish: null }));
      if (typeof c.text === 'string') acc.text += c.text;
      if (c.finish_reason !== undefined && c.finish_reason !== null) acc.finish = c.finish_reason;
      if (isObj(c.logprobs)) {
        acc.logprobs ??= {};
        for (const [k, v] of Object.entries(c.logprobs)) if (Array.isArray(v)) acc.logprobs[k] = [...(acc.logprobs[k] ?? []), ...v];
      }
    }
  }
  if (!choices.size) return undefined;
  const usage = lastUsage(chunks);
  const out: Obj = meta(chunks, 'text_completion');
  out.choices = [...choices.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, acc]) => ({ text: acc.text, index, logprobs: acc.logprobs ?? null, finish_reason: acc.finish ?? 'stop' }));
  if (usage !== undefined) out.usage = usage;
  return { body: JSON.stringify(out), usage: usage !== undefined };
}

// ---- replay -------------------------------------------------------------------------------------------------------

const frame = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
export const DONE = 'data: [DONE]\n\n';

/**
 * A whole answer as an OpenAI SSE stream ending with `data: [DONE]`; undefined when the answer is not one that can
 * be streamed (not a completion object, or the request wants the usage chunk and the answer has no usage).
 */
export function replayAsStream(kind: 'chat' | 'text', body: string, includeUsage: boolean): string | undefined {
  let answer: unknown;
  try {
    answer = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isObj(answer) || !Array.isArray(answer.choices)) return undefined;
  if (includeUsage && !isObj(answer.usage)) return undefined;
  const head: Obj = {
    id: answer.id ?? '',
    object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
    created: answer.created ?? Math.floor(Date.now() / 1000),
    model: answer.model ?? '',
    ...pick(answer, ['system_fingerprint', 'service_tier']),
  };
  const usageNull = includeUsage ? { usage: null } : {};
  let out = '';
  for (const c of answer.choices) {
    if (!isObj(c)) return undefined;
    const index = typeof c.index === 'number' ? c.index : 0;
    if (kind === 'chat') {
      const message = isObj(c.message) ? c.message : {};
      const delta: Obj = { role: message.role ?? 'assistant', content: message.content ?? null };
      for (const [k, v] of Object.entries(message)) {
        if (k === 'role' || k === 'content' || v === undefined) continue;
        if (k === 'tool_calls' && Array.isArray(v)) delta.tool_calls = v.map((tc, i) => (isObj(tc) ? { index: i, ...tc } : tc));
        else if (k !== 'annotations') delta[k] = v;
      }
      out += frame({ ...head, choices: [{ index, delta, logprobs: c.logprobs ?? null, finish_reason: null }], ...usageNull });
      out += frame({ ...head, choices: [{ index, delta: {}, logprobs: null, finish_reason: c.finish_reason ?? 'stop' }], ...usageNull });
    } else {
      out += frame({ ...head, choices: [{ text: c.text ?? '', index, logprobs: c.logprobs ?? null, finish_reason: null }], ...usageNull });
      out += frame({ ...head, choices: [{ text: '', index, logprobs: null, finish_reason: c.finish_reason ?? 'stop' }], ...usageNull });
    }
  }
  if (includeUsage) out += frame({ ...head, choices: [], usage: answer.usage });
  return out + DONE;
}

/** Whether a request body asks for the usage chunk of a stream. */
export function wantsUsage(body: JsonObject): boolean {
  const options: Json | undefined = body.stream_options;
  return options !== null && typeof options === 'object' && !Array.isArray(options) && options.include_usage === true;
}
