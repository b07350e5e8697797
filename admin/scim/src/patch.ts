/**
 * PATCH operations (RFC 7644 §3.5.2) as identity providers really send them: Entra ID capitalises the op
 * (`"Replace"`), sends `{"op":"Replace","value":{"active":false}}` without a path and `"False"` as a string; Okta
 * removes a member with the path `members[value eq "<id>"]`. Normalised here, applied by the resource.
 */
import { ScimError } from './scim-errors.ts';

export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

export interface PatchOp {
  readonly op: 'add' | 'replace' | 'remove';
  /** Lower-cased attribute path, or undefined for a whole-resource value. */
  readonly path?: string;
  /** `members[value eq "x"]`: the x. */
  readonly filterValue?: string;
  readonly value: unknown;
}

const VALUE_FILTER = /^([a-z.]+)\[\s*value\s+eq\s+"([^"]*)"\s*\]$/i;

export function parsePatch(body: unknown): PatchOp[] {
  const ops = (body as { Operations?: unknown } | undefined)?.Operations;
  if (!Array.isArray(ops) || ops.length === 0) throw new ScimError(400, 'A PATCH needs an Operations array', 'invalidSyntax');
  return ops.map((raw) => {
    const o = raw as { op?: unknown; path?: unknown; value?: unknown };
    const op = typeof o.op === 'string' ? o.op.toLowerCase() : '';
    if (op !== 'add' && op !== 'replace' && op !== 'remove') throw new ScimError(400, `Unknown PATCH op ${JSON.stringify(o.op)}`, 'invalidSyntax');
    if (o.path !== undefined && typeof o.path !== 'string') throw new ScimError(400, 'A PATCH path must be a string', 'invalidPath');
    const path = (o.path as string | undefined)?.trim();
    if (!path) {
      if (op === 'remove') throw new ScimError(400, 'A remove operation needs a path', 'noTarget');
      return { op, value: o.value };
    }
    const filtered = VALUE_FILTER.exec(path);
    if (filtered) return { op, path: (filtered[1] as string).toLowerCase(), filterValue: filtered[2], value: o.value };
    return { op, path: path.toLowerCase(), value: o.value };
  });
}

/** `true`, `"True"`, `"false"`…: Entra sends booleans as strings in PATCH values. */
export function booleanOf(value: unknown, attribute: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw new ScimError(400, `${attribute} must be a boolean`, 'invalidValue');
}

/** The ids of a `members` (or `groups`) value: `[{"value":"id"}]`, or one such object. */
export function idsOf(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return list.map((m) => {
    const id = (m as { value?: unknown })?.value;
    if (typeof id !== 'string' || id === '') throw new ScimError(400, 'Each member needs a "value" (its id)', 'invalidValue');
    return id;
  });
}
