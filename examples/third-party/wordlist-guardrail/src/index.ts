/**
 * A guardrail check, `wordlist.blockedWords`: fails when the text being judged (the request's messages for input
 * guardrails, the answer's for output guardrails) holds one of the configured words. A config uses it as
 *
 *     "input_guardrails": [{ "wordlist.blockedWords": { "words": ["project-x"] }, "deny": true }]
 *
 * Its parameters are checked when the config is validated (`validate`), so a bad entry is a 400 before any call.
 */
import { definePlugin, type GuardrailCheck, type GuardrailCheckContext, type JsonObject } from '@gateway/sdk';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The text of the messages (input) or of the answer's choices (output). */
function textOf(ctx: GuardrailCheckContext): string {
  const parts: string[] = [];
  const add = (content: unknown) => {
    if (typeof content === 'string') parts.push(content);
    else if (Array.isArray(content)) for (const part of content) if (isObject(part) && typeof part.text === 'string') parts.push(part.text);
  };
  if (ctx.phase === 'output') {
    const choices = ctx.responseBody?.choices;
    if (Array.isArray(choices)) for (const c of choices) if (isObject(c) && isObject(c.message)) add(c.message.content);
  } else {
    const messages = ctx.request.body?.messages;
    if (Array.isArray(messages)) for (const m of messages) if (isObject(m)) add(m.content);
  }
  return parts.join('\n');
}

export const blockedWords: GuardrailCheck = {
  id: 'wordlist.blockedWords',
  validate(parameters) {
    if (!isObject(parameters)) return ['parameters: must be an object'];
    const { words, caseSensitive } = parameters;
    const out: string[] = [];
    if (!Array.isArray(words) || words.length === 0 || !words.every((w) => typeof w === 'string' && w !== ''))
      out.push('words: must be a non-empty list of non-empty strings');
    if (caseSensitive !== undefined && typeof caseSensitive !== 'boolean') out.push('caseSensitive: must be a boolean');
    return out;
  },
  async run(ctx, parameters: JsonObject) {
    const exact = parameters.caseSensitive === true;
    const text = exact ? textOf(ctx) : textOf(ctx).toLowerCase();
    const words = (parameters.words as string[]).filter((w) => text.includes(exact ? w : w.toLowerCase()));
    return { verdict: words.length === 0, data: { found: words } };
  },
};

export default definePlugin({ setup: (api) => api.guardrail(blockedWords) });
