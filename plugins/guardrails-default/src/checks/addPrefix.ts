/**
 * `default.addPrefix` {prefix, applyToRole?=user, addToExisting?=true, onlyIfEmpty?=false}: a transformer that always
 * passes and returns the body with `prefix` added.
 *
 * Input phase, chat completions: the target is the LAST message of `applyToRole` for `user` and `assistant`, the FIRST
 * for `system` and `developer`.
 * - target found: with `onlyIfEmpty` nothing changes; else with `addToExisting` (default) the prefix is put before its
 *   content (a string content; or the first text part of an array content, or a new first text part when it has
 *   none); with `addToExisting: false` a new message `{role, content: prefix}` is inserted just before it;
 * - no such message: one is added, at the start for system/developer, at the end otherwise.
 * Input phase, text completions: the prompt (every prompt of an array) gets the prefix. Other bodies are left alone.
 * Output phase: the content / text of every choice gets the prefix (`applyToRole` and the other options do not apply).
 * `transformed` is absent when nothing changed; `data.applied` says whether anything did.
 */
import type { Json, JsonObject } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { mapTexts } from '../text.ts';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

const Role = Type.Union([Type.Literal('user'), Type.Literal('system'), Type.Literal('assistant'), Type.Literal('developer')]);

function prefixContent(content: Json | undefined, prefix: string): Json {
  if (typeof content === 'string') return prefix + content;
  if (Array.isArray(content)) {
    const i = content.findIndex((p) => isObject(p) && p.type === 'text' && typeof p.text === 'string');
    if (i < 0) return [{ type: 'text', text: prefix }, ...content];
    const out = content.slice();
    const part = content[i] as JsonObject;
    out[i] = { ...part, text: prefix + (part.text as string) };
    return out;
  }
  return prefix;
}

function prefixChat(body: JsonObject, messages: Json[], prefix: string, role: string, addToExisting: boolean, onlyIfEmpty: boolean) {
  const first = role === 'system' || role === 'developer';
  let target = -1;
  if (first) target = messages.findIndex((m) => isObject(m) && m.role === role);
  else
    for (let i = messages.length - 1; i >= 0 && target < 0; i--) {
      const m = messages[i];
      if (isObject(m) && m.role === role) target = i;
    }
  const out = messages.slice();
  if (target >= 0) {
    if (onlyIfEmpty) return undefined;
    const message = messages[target] as JsonObject;
    if (addToExisting) out[target] = { ...message, content: prefixContent(message.content, prefix) };
    else out.splice(target, 0, { role, content: prefix });
  } else if (first) out.unshift({ role, content: prefix });
  else out.push({ role, content: prefix });
  return { ...body, messages: out };
}

export const addPrefix = defineCheck({
  name: 'addPrefix',
  schema: Type.Object(
    {
      prefix: Type.String({ minLength: 1 }),
      applyToRole: Type.Optional(Role),
      addToExisting: Type.Optional(Type.Boolean()),
      onlyIfEmpty: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  run(ctx, p) {
    const role = p.applyToRole ?? 'user';
    let transformed: JsonObject | undefined;
    const body = ctx.request.body;
    if (ctx.phase === 'input' && body && Array.isArray(body.messages)) {
      transformed = prefixChat(body, body.messages, p.prefix, role, p.addToExisting ?? true, p.onlyIfEmpty ?? false);
    } else if (ctx.phase === 'output' || (body && 'prompt' in body)) {
      transformed = mapTexts(ctx, (text) => p.prefix + text).body;
    }
    return {
      verdict: true,
      ...(transformed ? { transformed } : {}),
      data: {
        applied: transformed !== undefined,
        ...(ctx.phase === 'input' ? { applyToRole: role } : {}),
        explanation: transformed ? 'The prefix was added.' : 'Nothing to add the prefix to.',
      },
    };
  },
});
