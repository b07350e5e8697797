/**
 * JSON Schema (what OpenAI clients send as tool parameters and `response_format.json_schema.schema`) reduced to the
 * OpenAPI-style `Schema` object Gemini accepts in `functionDeclarations[].parameters` and
 * `generationConfig.responseSchema`: local `$ref`s are inlined, `type: [X, "null"]` becomes `nullable`, `oneOf`
 * becomes `anyOf`, `const` becomes a one-value `enum`, and keywords Gemini rejects (`additionalProperties`,
 * `$schema`, `strict`, `patternProperties`, unsupported `format`s, …) are dropped.
 */
import type { Json, JsonObject } from '@gateway/sdk';

/** Keywords of Gemini's Schema object that are copied as they are (after the value checks below). */
const PLAIN = ['title', 'description', 'nullable', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'example', 'default', 'propertyOrdering'] as const;
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);
/** The formats Gemini documents per type; any other would be refused. */
const FORMATS: Record<string, Set<string>> = {
  string: new Set(['enum', 'date-time']),
  integer: new Set(['int32', 'int64']),
  number: new Set(['float', 'double']),
};
/** Deep enough for any real schema; stops self-referencing `$ref`s from expanding forever. */
const MAX_DEPTH = 24;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function resolveRef(ref: string, root: JsonObject): JsonObject | undefined {
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!m) return undefined;
  const defs = root[m[1] as string];
  if (!isObject(defs)) return undefined;
  const name = (m[2] as string).replace(/~1/g, '/').replace(/~0/g, '~');
  const found = defs[name];
  return isObject(found) ? found : undefined;
}

function convert(schema: Json | undefined, root: JsonObject, depth: number): JsonObject {
  if (!isObject(schema) || depth > MAX_DEPTH) return {};
  let s = schema;
  if (typeof s.$ref === 'string') {
    const target = resolveRef(s.$ref, root);
    if (!target) return {};
    // Siblings of $ref (a description, say) add to the referenced schema.
    const { $ref: _ignored, ...siblings } = s;
    s = { ...target, ...siblings };
  }
  const out: JsonObject = {};

  // allOf: merged into one schema (the common use is composition of object parts).
  if (Array.isArray(s.allOf)) {
    let merged: JsonObject = {};
    for (const part of s.allOf) {
      const c = convert(part, root, depth + 1);
      merged = {
        ...merged,
        ...c,
        ...(isObject(merged.properties) || isObject(c.properties)
          ? { properties: { ...(isObject(merged.properties) ? merged.properties : {}), ...(isObject(c.properties) ? c.properties : {}) } }
          : {}),
        ...(Array.isArray(merged.required) || Array.isArray(c.required)
          ? { required: [...new Set([...((merged.required as Json[]) ?? []), ...((c.required as Json[]) ?? [])])] }
          : {}),
      };
    }
    Object.assign(out, merged);
  }

  let nullable = s.nullable === true;
  let type: string | undefined;
  if (typeof s.type === 'string' && TYPES.has(s.type)) type = s.type;
  else if (Array.isArray(s.type)) {
    const types = s.type.filter((t): t is string => typeof t === 'string' && TYPES.has(t));
    if (types.includes('null')) nullable = true;
    const rest = types.filter((t) => t !== 'null');
    if (rest.length === 1) type = rest[0];
    else if (rest.length > 1) out.anyOf = rest.map((t) => convert({ ...s, type: t }, root, depth + 1));
  }

  const alternatives = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  if (alternatives) {
    const kept: JsonObject[] = [];
    for (const alt of alternatives) {
      if (isObject(alt) && alt.type === 'null') nullable = true;
      else kept.push(convert(alt, root, depth + 1));
    }
    if (kept.length === 1 && !type) Object.assign(out, kept[0]);
    else if (kept.length) out.anyOf = kept;
  }

  if (type === 'null') {
    nullable = true;
    type = undefined;
  }
  if (type) out.type = type;
  if (nullable) out.nullable = true;

  for (const key of PLAIN) if (s[key] !== undefined && key !== 'nullable') out[key] = s[key] as Json;

  if (typeof s.format === 'string' && type && FORMATS[type]?.has(s.format)) out.format = s.format;

  const enumValues = Array.isArray(s.enum) ? s.enum : s.const !== undefined ? [s.const] : undefined;
  if (enumValues?.every((v) => typeof v === 'string')) {
    out.enum = enumValues;
    if (!out.type) out.type = 'string';
  }

  if (isObject(s.properties)) {
    const props: JsonObject = {};
    for (const [name, value] of Object.entries(s.properties)) props[name] = convert(value, root, depth + 1);
    out.properties = props;
    if (!out.type) out.type = 'object';
    if (Array.isArray(s.required)) out.required = s.required.filter((r) => typeof r === 'string' && r in props);
  }
  if (s.items !== undefined) {
    const items = Array.isArray(s.items) ? s.items[0] : s.items;
    out.items = convert(items, root, depth + 1);
    if (!out.type) out.type = 'array';
  }
  return out;
}

/** A JSON Schema as Gemini's Schema object. Pure: the input is left as it is. */
export function toGeminiSchema(schema: Json | undefined): JsonObject {
  return isObject(schema) ? convert(schema, schema, 0) : {};
}

/**
 * Tool parameters as Gemini wants them, or undefined when the function takes none: Gemini refuses an `object`
 * schema with no properties, so such a declaration is sent without `parameters`.
 */
export function toGeminiParameters(schema: Json | undefined): JsonObject | undefined {
  if (!isObject(schema)) return undefined;
  const converted = toGeminiSchema(schema);
  if (converted.type === 'object' && (!isObject(converted.properties) || Object.keys(converted.properties).length === 0)) return undefined;
  return Object.keys(converted).length ? converted : undefined;
}
