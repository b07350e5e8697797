/**
 * `defineCheck`: builds a `GuardrailCheck` from a TypeBox parameter schema (compiled once, when the module loads),
 * optional cross-field rules, and a run function that receives parameters already known to be valid.
 *
 * - `validate(parameters)` returns violations as `<path>: <message>`, e.g. `rule: is required`,
 *   `minWords: must be >= 0`, `operator: must be one of any, all, none` (never a parameter's value).
 * - `run` checks the parameters again (the compiled check costs next to nothing): a config that reached it without
 *   being validated gets a failed verdict with `data.error = {kind: "invalid_parameters", message}`.
 * - Nothing here throws on purpose: like the other guardrail packages of this repository (docs/guardrails.md,
 *   "Failures"), what goes wrong is a failed verdict with `data.error = {kind, message, status?}`. Should a check
 *   throw anyway, the hook engine records a failed verdict with the error.
 */
import type { GuardrailCheck, GuardrailCheckContext, JsonObject } from '@gateway/sdk';
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';

export const PLUGIN_PREFIX = 'default';

export interface CheckResult {
  verdict: boolean;
  data?: unknown;
  transformed?: JsonObject;
}

export interface CheckDefinition<S extends TSchema> {
  /** The check's name; its id is `default.<name>`. */
  name: string;
  schema: S;
  /** Rules the schema cannot say (min <= max, a regex that compiles …); runs only on schema-valid parameters. */
  rules?(parameters: Static<S>): string[];
  /** Parameters that decide where the check sends its secrets (`GuardrailCheck.destination`). */
  destination?: readonly string[];
  run(ctx: GuardrailCheckContext, parameters: Static<S>): Promise<CheckResult> | CheckResult;
}

/** A check plus the parameter type it was defined with (for tests and for callers that build parameters). */
export interface DefinedCheck extends GuardrailCheck {
  readonly name: string;
  validate(parameters: unknown): string[];
}

/** What went wrong, in `data.error` of a failed verdict (the same shape as the other guardrail packages use). */
export interface CheckError {
  kind: 'invalid_parameters' | 'timeout' | 'aborted' | 'network' | 'http_status' | 'unreadable' | 'forbidden';
  message: string;
  /** The remote service's HTTP status, for `http_status`. */
  status?: number;
}

/** A failed verdict carrying `error` in `data.error`, beside whatever else the check reports. */
export function failedVerdict(error: CheckError, data: Record<string, unknown> = {}): CheckResult {
  return { verdict: false, data: { ...data, error, explanation: data.explanation ?? error.message } };
}

/** `/metadataPairs/team` → `metadataPairs.team`; the root → `parameters`. */
function pathName(path: string): string {
  if (path === '' || path === '/') return 'parameters';
  return path
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function describe(error: ValueError): string {
  const s = error.schema as Record<string, unknown>;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required';
    case ValueErrorType.ObjectAdditionalProperties:
      return 'is not a known parameter';
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `must be >= ${s.minimum}`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `must be <= ${s.maximum}`;
    case ValueErrorType.Integer:
      return 'must be an integer';
    case ValueErrorType.Number:
      return 'must be a number';
    case ValueErrorType.String:
      return 'must be a string';
    case ValueErrorType.Boolean:
      return 'must be true or false';
    case ValueErrorType.Array:
      return 'must be an array';
    case ValueErrorType.Object:
      return 'must be an object';
    case ValueErrorType.StringMinLength:
      return s.minLength === 1 ? 'must not be empty' : `must be at least ${s.minLength} characters`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${s.maxLength} characters`;
    case ValueErrorType.ArrayMinItems:
      return s.minItems === 1 ? 'must not be empty' : `must have at least ${s.minItems} items`;
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${s.maxItems} items`;
    case ValueErrorType.ObjectMinProperties:
      return s.minProperties === 1 ? 'must not be empty' : `must have at least ${s.minProperties} keys`;
    case ValueErrorType.Union: {
      const literals = Array.isArray(s.anyOf) ? (s.anyOf as Record<string, unknown>[]).map((v) => v.const) : [];
      if (literals.length > 0 && literals.every((v) => typeof v === 'string'))
        return `must be one of ${literals.join(', ')}`;
      return error.message.charAt(0).toLowerCase() + error.message.slice(1);
    }
    case ValueErrorType.Literal:
      return `must be ${JSON.stringify(s.const)}`;
    default:
      return error.message.charAt(0).toLowerCase() + error.message.slice(1);
  }
}

/** Readable violations of a compiled schema: one per path, the "is required" one first. */
function schemaViolations(errors: Iterable<ValueError>): string[] {
  const byPath = new Map<string, string>();
  for (const error of errors) {
    const path = pathName(error.path);
    const message = describe(error);
    const existing = byPath.get(path);
    if (existing === undefined || (message === 'is required' && existing !== message)) byPath.set(path, message);
    if (byPath.size >= 20) break;
  }
  return [...byPath].map(([path, message]) => `${path}: ${message}`);
}

/**
 * `timeout` is the hook engine's per-check time limit (milliseconds) and may sit in any check's parameters. A check
 * whose schema does not use `timeout` itself accepts it (a positive number) and never sees it.
 */
const ENGINE_TIMEOUT = 'timeout';

function withoutEngineTimeout(value: unknown): { rest: unknown; violations: string[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !(ENGINE_TIMEOUT in value))
    return { rest: value, violations: [] };
  const { [ENGINE_TIMEOUT]: timeout, ...rest } = value as Record<string, unknown>;
  const ok = typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0;
  return { rest, violations: ok ? [] : ['timeout: must be a positive number of milliseconds'] };
}

export function defineCheck<S extends TSchema>(definition: CheckDefinition<S>): DefinedCheck {
  const compiled = TypeCompiler.Compile(definition.schema);
  const id = `${PLUGIN_PREFIX}.${definition.name}`;
  const ownsTimeout = Object.hasOwn((definition.schema as { properties?: object }).properties ?? {}, ENGINE_TIMEOUT);
  const ownParameters = (parameters: unknown) =>
    ownsTimeout ? { rest: parameters ?? {}, violations: [] } : withoutEngineTimeout(parameters ?? {});

  const validateOwn = (value: unknown): string[] => {
    if (!compiled.Check(value)) return schemaViolations(compiled.Errors(value));
    return definition.rules ? definition.rules(value as Static<S>) : [];
  };

  const validate = (parameters: unknown): string[] => {
    const { rest, violations } = ownParameters(parameters);
    return [...violations, ...validateOwn(rest)];
  };

  return {
    id,
    name: definition.name,
    validate,
    ...(definition.destination ? { destination: definition.destination } : {}),
    async run(ctx, parameters) {
      const { rest, violations } = ownParameters(parameters);
      violations.push(...validateOwn(rest));
      if (violations.length > 0)
        return failedVerdict({ kind: 'invalid_parameters', message: `invalid parameters for ${id}: ${violations.join('; ')}` });
      return definition.run(ctx, rest as Static<S>);
    },
  };
}

/** The same check under another id (Portkey's lower-case spellings), sharing schema and behaviour. */
export function aliasCheck(check: DefinedCheck, name: string): DefinedCheck {
  return { ...check, id: `${PLUGIN_PREFIX}.${name}`, name };
}

/** `min <= max` for range checks. */
export function rangeRule(min: number | undefined, max: number | undefined, minName: string, maxName: string): string[] {
  return min !== undefined && max !== undefined && min > max ? [`${minName}: must be <= ${maxName}`] : [];
}
