/**
 * Where Mistral's chat completions API differs from OpenAI's (everything else goes as it came). Mistral refuses
 * fields it does not know (`422 extra_forbidden`), in the body and inside messages, so the translation is:
 *
 * - `seed` → `random_seed`; `max_completion_tokens` → `max_tokens`;
 * - `tool_choice: "required"` → `"any"` (Mistral's name for "call at least one tool");
 * - `developer` messages → `system` (Mistral has no developer role);
 * - message fields Mistral's message schemas lack are left out (`name` except on tool messages, `refusal`, `audio`,
 *   `function_call`, …): user/system `{role, content}`, assistant `{role, content, tool_calls, prefix}`, tool
 *   `{role, content, tool_call_id, name}`;
 * - tool call ids that are not 9 letters or digits (what Mistral demands) become such ids, the same one for the
 *   assistant's call and the tool result that answers it;
 * - OpenAI-only fields with no Mistral counterpart are dropped: `stream_options` (Mistral's last chunk carries usage
 *   anyway), `logprobs`, `top_logprobs`, `logit_bias`, `user`, `store`, `metadata`, `service_tier`,
 *   `prompt_cache_key`, `safety_identifier`.
 *
 * Answers: a whole answer's `finish_reason: "model_length"` → `"length"`, and `message.content` given as a list of
 * chunks (text, thinking) → the text as a string (thinking as `reasoning_content` when strict wire compliance is
 * off). Streams are OpenAI SSE and pass through unchanged.
 */
import { createHash } from 'node:crypto';
import type { Json, JsonObject, TargetConfig, TranslateContext } from '@gateway/sdk';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const given = (v: Json | undefined): v is Json => v !== undefined && v !== null;

/** OpenAI request fields with no Mistral counterpart (Mistral would refuse them). */
export const DROPPED_FIELDS = [
  'stream_options',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'user',
  'store',
  'metadata',
  'service_tier',
  'prompt_cache_key',
  'safety_identifier',
] as const;

/** The fields of each Mistral message kind. */
const MESSAGE_FIELDS: Record<string, readonly string[]> = {
  system: ['role', 'content'],
  user: ['role', 'content'],
  assistant: ['role', 'content', 'tool_calls', 'prefix'],
  tool: ['role', 'content', 'tool_call_id', 'name'],
};

const TOOL_CALL_ID = /^[a-zA-Z0-9]{9}$/;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A tool call id Mistral accepts: kept when it already is one, else 9 letters/digits derived from it (stable). */
export function mistralToolCallId(id: string): string {
  if (TOOL_CALL_ID.test(id)) return id;
  const digest = createHash('sha256').update(id).digest();
  let out = '';
  for (let i = 0; i < 9; i++) out += ALPHABET[(digest[i] as number) % ALPHABET.length];
  return out;
}

const foreignId = (id: unknown) => typeof id === 'string' && !TOOL_CALL_ID.test(id);

/** Whether a message must change for Mistral (checked first: most messages need nothing and are not copied). */
function needsChange(raw: JsonObject, fields: readonly string[]): boolean {
  if (raw.role === 'developer') return true;
  for (const key in raw) if (!fields.includes(key) || (key !== 'content' && raw[key] === null)) return true;
  if (raw.role === 'tool') return foreignId(raw.tool_call_id);
  return Array.isArray(raw.tool_calls) && raw.tool_calls.some((call) => isObject(call) && foreignId(call.id));
}

function message(raw: Json): Json {
  if (!isObject(raw) || typeof raw.role !== 'string') return raw;
  const role = raw.role === 'developer' ? 'system' : raw.role;
  const fields = MESSAGE_FIELDS[role];
  // A role Mistral does not know goes as it is (Mistral names it in its answer); most messages need no change.
  if (!fields || !needsChange(raw, fields)) return raw;
  const out: JsonObject = {};
  for (const key of fields) if (raw[key] !== undefined && (key === 'content' || raw[key] !== null)) out[key] = raw[key] as Json;
  out.role = role;
  if (typeof out.tool_call_id === 'string') out.tool_call_id = mistralToolCallId(out.tool_call_id);
  if (Array.isArray(out.tool_calls)) {
    out.tool_calls = out.tool_calls.map((call) =>
      isObject(call) && foreignId(call.id) ? { ...call, id: mistralToolCallId(call.id as string) } : call,
    );
  }
  return out;
}

/** Pure: a new body when something differs from OpenAI's, the very same object otherwise (its bytes go as sent). */
export function mistralChatRequest(body: JsonObject, _target: TargetConfig, _ctx: TranslateContext): JsonObject {
  let out: JsonObject | undefined;
  const edit = () => (out ??= { ...body });

  if (Array.isArray(body.messages)) {
    const messages = body.messages.map(message);
    if (messages.some((m, i) => m !== (body.messages as Json[])[i])) edit().messages = messages;
  }
  if ('seed' in body) {
    const o = edit();
    delete o.seed;
    if (given(body.seed) && !given(body.random_seed)) o.random_seed = body.seed;
  }
  if ('max_completion_tokens' in body) {
    const o = edit();
    delete o.max_completion_tokens;
    if (given(body.max_completion_tokens) && !given(body.max_tokens)) o.max_tokens = body.max_completion_tokens;
  }
  if (body.tool_choice === 'required') edit().tool_choice = 'any';
  for (const field of DROPPED_FIELDS) if (field in body) delete edit()[field];
  return out ?? body;
}

function contentText(content: Json[], ctx: TranslateContext): { text: string; thinking: string } {
  let text = '';
  let thinking = '';
  for (const chunk of content) {
    if (typeof chunk === 'string') text += chunk;
    else if (isObject(chunk) && chunk.type === 'text' && typeof chunk.text === 'string') text += chunk.text;
    else if (isObject(chunk) && chunk.type === 'thinking' && !ctx.strictWireCompliance) {
      const parts = Array.isArray(chunk.thinking) ? chunk.thinking : [chunk.thinking ?? ''];
      for (const part of parts) thinking += typeof part === 'string' ? part : isObject(part) && typeof part.text === 'string' ? part.text : '';
    }
  }
  return { text, thinking };
}

/** A whole chat answer: OpenAI's shape already, but for the finish reason `model_length` and chunked content. */
export function mistralChatResponse(json: unknown, ctx: TranslateContext): JsonObject {
  if (!isObject(json)) throw new Error('expected a JSON object');
  if (!Array.isArray(json.choices)) return json;
  let changed = false;
  const choices = json.choices.map((choice) => {
    if (!isObject(choice)) return choice;
    let out = choice;
    if (choice.finish_reason === 'model_length') out = { ...out, finish_reason: 'length' };
    const msg = choice.message;
    if (isObject(msg) && Array.isArray(msg.content)) {
      const { text, thinking } = contentText(msg.content, ctx);
      const next: JsonObject = { ...msg, content: text };
      if (thinking) next.reasoning_content = thinking;
      out = { ...out, message: next };
    }
    if (out !== choice) changed = true;
    return out;
  });
  return changed ? { ...json, choices } : json;
}
