import type { Static, TObject } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/** A check's parameter schema, compiled once at module load. */
export interface CompiledParameters<T extends TObject> {
  readonly schema: T;
  /** Violations of `parameters`, for `GuardrailCheck.validate` (empty when valid). Never echoes values. */
  validate(parameters: unknown): string[];
  /** The parameters with their defaults applied, or the violations. */
  parse(parameters: unknown): Parsed<Static<T>>;
}

/**
 * Compiles a TypeBox object schema for a check's parameters. `rules` adds checks the schema cannot say (a URL's
 * scheme, one of two properties present); it runs on the value with defaults applied, only when the schema passed.
 * Messages name the parameter and the rule, never the value (a value may be an API key).
 */
export function compileParameters<T extends TObject>(schema: T, rules?: (value: Static<T>) => string[]): CompiledParameters<T> {
  const compiled = TypeCompiler.Compile(schema);
  const parse = (parameters: unknown): Parsed<Static<T>> => {
    if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
      return { ok: false, errors: ['parameters: must be an object'] };
    }
    // Defaults go onto a copy: the config object the engine holds is never changed.
    const value = Value.Default(schema, structuredClone(parameters)) as unknown;
    if (!compiled.Check(value)) {
      // One message per parameter: the first TypeBox gives (a missing property is also "Expected string").
      const byPath = new Map<string, string>();
      for (const e of compiled.Errors(value)) if (!byPath.has(e.path)) byPath.set(e.path, `${e.path.replace(/^\//, '') || 'parameters'}: ${e.message}`);
      return { ok: false, errors: [...byPath.values()] };
    }
    const extra = rules?.(value) ?? [];
    return extra.length > 0 ? { ok: false, errors: extra } : { ok: true, value };
  };
  return {
    schema,
    parse,
    validate: (parameters) => {
      const parsed = parse(parameters);
      return parsed.ok ? [] : parsed.errors;
    },
  };
}

/**
 * An http(s) URL without credentials in it, or why not. Only `http:` and `https:` are ever called; credentials belong
 * in `apiKey`, where they are sent as a header and never appear in an error or a log.
 */
export function httpUrl(name: string, value: string): URL | string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${name}: must be an absolute http or https URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${name}: only http and https URLs are allowed`;
  if (url.username || url.password) return `${name}: must not carry credentials (use apiKey)`;
  return url;
}

/** `httpUrl` as a rule for `compileParameters`: a list with the violation, or empty. */
export function urlRule(name: string, value: string | undefined): string[] {
  if (value === undefined) return [];
  const url = httpUrl(name, value);
  return typeof url === 'string' ? [url] : [];
}
