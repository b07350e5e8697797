/**
 * `default.allowedRequestTypes` {allowedTypes?, blockedTypes?}: which kinds of endpoint a request may use. Types are
 * the gateway's endpoint kinds: `chatComplete`, `complete`, `embed`, `moderate`, `messages` and `countTokens`
 * (Anthropic's /v1/messages and its token count, `proxy` before), `responses` (POST /v1/responses), `listModels`, `proxy` (every other provider path).
 * Each list is an array or a comma-separated string.
 *
 * - only allowedTypes: the request's type must be listed;
 * - only blockedTypes: it must not be listed;
 * - both: blocked wins, then it must be allowed (a type in both lists is a parameter error);
 * - neither: the metadata keys `supported_endpoints` / `blocked_endpoints` (comma-separated) are used the same way,
 *   and with none of those either, every type passes.
 */
import type { EndpointKind } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';

export const REQUEST_TYPES: readonly EndpointKind[] = ['chatComplete', 'complete', 'embed', 'moderate', 'messages', 'countTokens', 'responses', 'listModels', 'proxy'];

const TypeList = Type.Union([Type.Array(Type.String({ minLength: 1 })), Type.String()]);

function list(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const items = Array.isArray(value) ? value : value.split(',');
  return items.map((t) => t.trim()).filter(Boolean);
}

export const allowedRequestTypes = defineCheck({
  name: 'allowedRequestTypes',
  schema: Type.Object(
    { allowedTypes: Type.Optional(TypeList), blockedTypes: Type.Optional(TypeList) },
    { additionalProperties: false },
  ),
  rules(p) {
    const violations: string[] = [];
    const allowed = list(p.allowedTypes);
    const blocked = list(p.blockedTypes);
    for (const [name, items] of [['allowedTypes', allowed], ['blockedTypes', blocked]] as const)
      for (const t of items)
        if (!REQUEST_TYPES.includes(t as EndpointKind))
          violations.push(`${name}: "${t}" is not a request type (one of ${REQUEST_TYPES.join(', ')})`);
    const both = allowed.filter((t) => blocked.includes(t));
    if (both.length > 0) violations.push(`blockedTypes: ${both.join(', ')} also in allowedTypes`);
    return violations;
  },
  run(ctx, p) {
    const type = ctx.request.endpoint;
    let allowed = list(p.allowedTypes);
    let blocked = list(p.blockedTypes);
    let from: 'parameters' | 'metadata' | 'none' = 'parameters';
    if (allowed.length === 0 && blocked.length === 0) {
      allowed = list(ctx.request.metadata.supported_endpoints);
      blocked = list(ctx.request.metadata.blocked_endpoints);
      from = allowed.length > 0 || blocked.length > 0 ? 'metadata' : 'none';
    }
    const isBlocked = blocked.includes(type);
    const verdict = !isBlocked && (allowed.length === 0 || allowed.includes(type));
    return {
      verdict,
      data: {
        requestType: type,
        from,
        ...(allowed.length > 0 ? { allowedTypes: allowed } : {}),
        ...(blocked.length > 0 ? { blockedTypes: blocked } : {}),
        explanation: isBlocked
          ? `Request type "${type}" is blocked.`
          : verdict
            ? `Request type "${type}" is allowed.`
            : `Request type "${type}" is not in the allowed types.`,
      },
    };
  },
});
