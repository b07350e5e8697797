/**
 * Mistral's error bodies: `{"object": "error", "message": <string or {"detail": [...]}>, "type", "param", "code"}`;
 * a validation failure (422) carries pydantic's details in `message.detail` (or a top-level `detail`), each
 * `{type, loc, msg}`. The message becomes `loc: msg` per detail, joined, e.g.
 * `body.max_completion_tokens: Extra inputs are not permitted`.
 */
import type { ProviderErrorInfo } from '@gateway/sdk';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function details(detail: unknown): string | undefined {
  if (typeof detail === 'string') return detail;
  if (!Array.isArray(detail) || !detail.length) return undefined;
  return detail
    .map((d) => {
      if (!isObject(d)) return String(d);
      const loc = Array.isArray(d.loc) ? d.loc.join('.') : '';
      const msg = typeof d.msg === 'string' ? d.msg : JSON.stringify(d);
      return loc ? `${loc}: ${msg}` : msg;
    })
    .join('; ');
}

export function mistralError(json: unknown): ProviderErrorInfo | undefined {
  if (!isObject(json) || isObject(json.error)) return undefined; // OpenAI's own shape: the core reads it
  const raw = json.message;
  let message: string | undefined;
  if (typeof raw === 'string') {
    // Older answers put the JSON of the details inside the message string.
    try {
      const inner: unknown = JSON.parse(raw);
      message = isObject(inner) ? details(inner.detail) : undefined;
    } catch {
      message = undefined;
    }
    message ??= raw;
  } else if (isObject(raw)) message = details(raw.detail) ?? JSON.stringify(raw);
  else message = details(json.detail);
  if (!message) return undefined;
  return {
    message,
    type: typeof json.type === 'string' ? json.type : undefined,
    code: typeof json.code === 'string' || typeof json.code === 'number' ? String(json.code) : null,
    param: typeof json.param === 'string' ? json.param : null,
  };
}
