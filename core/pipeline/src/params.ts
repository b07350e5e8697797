import { cachedParamPath, type JsonObject, type ParamPathSegment, type TargetConfig, WILDCARD } from '@gateway/sdk';

type Container = Record<string, unknown> | unknown[];

/** Shallow-copies a container so that the request's own body is never mutated (fallback reuses it). */
function copy(value: Container): Container {
  return Array.isArray(value) ? value.slice() : { ...value };
}

/** Removes a path from a copy-on-write tree; returns the new root (the same object when nothing was removed). */
function dropPath(node: unknown, segments: readonly ParamPathSegment[], depth: number): unknown {
  if (node === null || typeof node !== 'object') return node;
  const seg = segments[depth] as ParamPathSegment;
  const last = depth === segments.length - 1;
  const container = node as Container;
  if (seg === WILDCARD) {
    if (!Array.isArray(container)) return node;
    if (last) return [];
    let changed: unknown[] | undefined;
    for (let i = 0; i < container.length; i++) {
      const next = dropPath(container[i], segments, depth + 1);
      if (next !== container[i]) (changed ??= container.slice())[i] = next;
    }
    return changed ?? node;
  }
  if (Array.isArray(container) !== (typeof seg === 'number')) return node;
  if (!Object.hasOwn(container, seg as string | number)) return node;
  const child = (container as Record<string | number, unknown>)[seg as string | number];
  if (last) {
    const out = copy(container);
    if (Array.isArray(out)) out.splice(seg as number, 1);
    else delete out[seg as string];
    return out;
  }
  const next = dropPath(child, segments, depth + 1);
  if (next === child) return node;
  const out = copy(container) as Record<string | number, unknown>;
  out[seg as string | number] = next;
  return out;
}

/**
 * The body a target sends: `default_params` fill what the client left out, `override_params` replace, then
 * `drop_params` remove. Returns the input object itself when no rule applies, so that the raw bytes can be sent.
 */
export function applyParamRules(body: JsonObject, target: TargetConfig): JsonObject {
  const defaults = target.default_params;
  const overrides = target.override_params;
  const drops = target.drop_params;
  let out: JsonObject = body;
  if (defaults) {
    for (const key of Object.keys(defaults)) {
      if (out[key] === undefined) {
        if (out === body) out = { ...body };
        out[key] = defaults[key] as JsonObject[string];
      }
    }
  }
  if (overrides) {
    const keys = Object.keys(overrides);
    if (keys.length) {
      if (out === body) out = { ...body };
      for (const key of keys) out[key] = overrides[key] as JsonObject[string];
    }
  }
  if (drops) {
    for (const path of drops) {
      const segments = cachedParamPath(path);
      if (segments) out = dropPath(out, segments, 0) as JsonObject;
    }
  }
  return out;
}
