/**
 * `default.jsonSchema` {schema, not?}: passes when the judged text holds JSON (found as described in json.ts) that is
 * valid against the JSON Schema `schema`, or, with `not: true`, when it holds no such JSON.
 *
 * Validation uses Ajv: draft-07 by default, 2019-09 or 2020-12 when the schema's `$schema` says so. Every `pattern` /
 * `patternProperties` runs on re2js (linear time), `format` is not checked, and remote `$ref`s are never fetched.
 * Each distinct schema is compiled once (cached by object and by content) with a fresh Ajv instance, so two
 * configs using the same `$id` never collide.
 */
import { Type } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { defineCheck } from '../check.ts';
import { compileRegex } from '../regex.ts';
import { judgedText } from '../text.ts';
import { findJson } from '../json.ts';

const re2Engine = Object.assign(
  (pattern: string) => {
    const compiled = compileRegex(pattern, { literal: false });
    return { test: (s: string) => compiled.test(s) };
  },
  { code: 're2js' },
);

/**
 * Ajv (about 9 MB resident with its three dialects) is loaded when the first schema is compiled, not at start: a
 * gateway whose configs use no jsonSchema check never carries it (issue #24, memory). `require` keeps compileSchema
 * synchronous, as the config checks calling it are.
 */
const loadAjv = () => ({
  Ajv: (require('ajv') as typeof import('ajv')).default,
  Ajv2019: (require('ajv/dist/2019') as typeof import('ajv/dist/2019')).default,
  Ajv2020: (require('ajv/dist/2020') as typeof import('ajv/dist/2020')).default,
});

const byObject = new WeakMap<object, ValidateFunction>();
const byContent = new Map<string, ValidateFunction>();
const CONTENT_CACHE_LIMIT = 200;

function ajvFor(schema: Record<string, unknown>) {
  const options = {
    allErrors: true,
    strict: false,
    logger: false as const,
    validateFormats: false,
    addUsedSchema: false,
    code: { regExp: re2Engine },
  };
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  const { Ajv, Ajv2019, Ajv2020 } = loadAjv();
  if (dialect.includes('2020-12')) return new Ajv2020(options);
  if (dialect.includes('2019-09')) return new Ajv2019(options);
  return new Ajv(options);
}

/** Compiles (once) or throws with Ajv's reason. */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const hit = byObject.get(schema);
  if (hit) return hit;
  const key = JSON.stringify(schema);
  let validate = byContent.get(key);
  if (!validate) {
    validate = ajvFor(schema).compile(schema);
    if (byContent.size >= CONTENT_CACHE_LIMIT) byContent.delete(byContent.keys().next().value as string);
    byContent.set(key, validate);
  }
  byObject.set(schema, validate);
  return validate;
}

export const jsonSchema = defineCheck({
  name: 'jsonSchema',
  schema: Type.Object(
    {
      schema: Type.Record(Type.String(), Type.Unknown()),
      not: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  rules(p) {
    try {
      compileSchema(p.schema);
      return [];
    } catch (error) {
      return [`schema: is not a usable JSON Schema: ${(error as Error).message}`];
    }
  },
  run(ctx, p) {
    const { text, source } = judgedText(ctx);
    const not = p.not ?? false;
    const found = findJson(text);
    if (!found) {
      return {
        verdict: not,
        data: { source, textFound: text !== undefined, jsonFound: false, not, explanation: 'The text holds no JSON.' },
      };
    }
    const validate = compileSchema(p.schema);
    const valid = validate(found.value) === true;
    const errors = (validate.errors ?? []).slice(0, 20).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);
    return {
      verdict: not ? !valid : valid,
      data: {
        source,
        textFound: true,
        jsonFound: true,
        jsonFrom: found.from,
        valid,
        not,
        ...(valid ? {} : { errors }),
        explanation: valid ? 'The JSON matches the schema.' : `The JSON does not match the schema: ${errors.join('; ')}`,
      },
    };
  },
});
