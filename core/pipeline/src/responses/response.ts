/**
 * OpenAI chat completion → Responses object (docs/responses.md, "Translation"), and the parts of a Response the
 * stream builds too: ids, the echoed request fields, the usage. Pure but for the ids it draws.
 */
import type { Json, JsonObject } from '@gateway/sdk';
import { isObject } from './request.ts';

/** An id of OpenAI's form: `resp_`, `msg_`, `fc_`, `rs_` then 48 hex characters. */
export function newId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `${prefix}_${Buffer.from(bytes).toString('hex')}`;
}

/** What a Response echoes of its request; the rest of the object is the answer's. */
export interface ResponseFrame {
  id: string;
  createdAt: number;
  body: JsonObject;
}

/** Chat usage → Responses usage. */
export function responsesUsage(usage: Json | undefined): JsonObject | null {
  if (!isObject(usage)) return null;
  const input = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : 0;
  const output = typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0;
  const cached = isObject(usage.prompt_tokens_details) && typeof usage.prompt_tokens_details.cached_tokens === 'number' ? usage.prompt_tokens_details.cached_tokens : 0;
  const reasoning =
    isObject(usage.completion_tokens_details) && typeof usage.completion_tokens_details.reasoning_tokens === 'number' ? usage.completion_tokens_details.reasoning_tokens : 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: typeof usage.total_tokens === 'number' ? usage.total_tokens : input + output,
  };
}

const or = (value: Json | undefined, fallback: Json): Json => (value === undefined ? fallback : value);

/** The Response object around `output`: the request's fields echoed as OpenAI echoes them. */
export function responseObject(frame: ResponseFrame, status: string, output: JsonObject[], extra: { model?: Json; usage?: JsonObject | null; incomplete?: string; error?: JsonObject } = {}): JsonObject {
  const b = frame.body;
  const reasoning = isObject(b.reasoning) ? { effort: or(b.reasoning.effort, null), summary: or(b.reasoning.summary, null) } : { effort: null, summary: null };
  return {
    id: frame.id,
    object: 'response',
    created_at: frame.createdAt,
    status,
    error: extra.error ?? null,
    incomplete_details: extra.incomplete ? { reason: extra.incomplete } : null,
    instructions: or(b.instructions, null),
    max_output_tokens: or(b.max_output_tokens, null),
    model: extra.model ?? or(b.model, null),
    output,
    parallel_tool_calls: or(b.parallel_tool_calls, true),
    previous_response_id: or(b.previous_response_id, null),
    reasoning,
    store: or(b.store, true),
    temperature: or(b.temperature, 1),
    text: isObject(b.text) && isObject(b.text.format) ? { format: b.text.format } : { format: { type: 'text' } },
    tool_choice: or(b.tool_choice, 'auto'),
    tools: or(b.tools, []),
    top_p: or(b.top_p, 1),
    truncation: or(b.truncation, 'disabled'),
    usage: extra.usage ?? null,
    user: or(b.user, null),
    metadata: or(b.metadata, {}),
  };
}

export function messageItem(id: string, text: string, status = 'completed'): JsonObject {
  return { id, type: 'message', status, role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
}

export function functionCallItem(id: string, callId: string, name: string, args: string, status = 'completed'): JsonObject {
  return { id, type: 'function_call', status, call_id: callId, name, arguments: args };
}

export function reasoningItem(id: string, text: string): JsonObject {
  return { id, type: 'reasoning', summary: [{ type: 'summary_text', text }] };
}

/** `finish_reason` as a Response's status and incomplete reason. */
export function statusOf(finish: Json | undefined): { status: string; incomplete?: string } {
  if (finish === 'length') return { status: 'incomplete', incomplete: 'max_output_tokens' };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete: 'content_filter' };
  return { status: 'completed' };
}

/** A whole chat completion as a Response. */
export function chatToResponse(chat: JsonObject, frame: ResponseFrame): JsonObject {
  const choice = Array.isArray(chat.choices) && isObject(chat.choices[0]) ? chat.choices[0] : {};
  const message = isObject(choice.message) ? choice.message : {};
  const output: JsonObject[] = [];
  const reasoning = typeof message.reasoning_content === 'string' ? message.reasoning_content : typeof message.reasoning === 'string' ? message.reasoning : '';
  if (reasoning) output.push(reasoningItem(newId('rs'), reasoning));
  const text = typeof message.content === 'string' ? message.content : '';
  const refusal = typeof message.refusal === 'string' ? message.refusal : '';
  if (text) output.push(messageItem(newId('msg'), text));
  else if (refusal) output.push({ id: newId('msg'), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal }] });
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (!isObject(call) || !isObject(call.function)) continue;
      const fn = call.function;
      output.push(functionCallItem(newId('fc'), typeof call.id === 'string' ? call.id : newId('fc'), String(fn.name ?? ''), typeof fn.arguments === 'string' ? fn.arguments : '{}'));
    }
  }
  const { status, incomplete } = statusOf(choice.finish_reason);
  return responseObject(frame, status, output, { model: typeof chat.model === 'string' ? chat.model : undefined, usage: responsesUsage(chat.usage), incomplete });
}
