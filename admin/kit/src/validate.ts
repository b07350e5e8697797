/**
 * Body validation of the administration routes: TypeBox schemas compiled once, every violation listed by path in
 * one 400 (`body.name: Expected string; body.scopes: …`), unknown properties refused when the schema says so.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Errors } from '@gateway/sdk';

/** The body as the schema's type, or a 400 listing every violation. */
export type BodyValidator<T extends TSchema> = (body: unknown) => Static<T>;

function where(path: string): string {
  return path === '' ? 'body' : `body${path.replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/\//g, '.')}`;
}

/** Compile at module load (`const check = validator(Schema)`), never per request. */
export function validator<T extends TSchema>(schema: T): BodyValidator<T> {
  const compiled = TypeCompiler.Compile(schema);
  return (body: unknown) => {
    if (compiled.Check(body)) return body as Static<T>;
    if (body === undefined) throw Errors.badRequest('The request needs a JSON body', 'body');
    const seen = new Set<string>();
    const lines: string[] = [];
    let firstPath: string | undefined;
    for (const error of compiled.Errors(body)) {
      const path = where(error.path);
      const line = `${path}: ${error.message}`;
      if (seen.has(path)) continue; // the first (most specific) message per path
      seen.add(path);
      firstPath ??= path;
      lines.push(line);
      if (lines.length >= 20) break;
    }
    const param = firstPath === undefined || firstPath === 'body' ? null : firstPath.slice(5);
    throw Errors.badRequest(`Invalid request body: ${lines.join('; ')}`, param);
  };
}

/**
 * A 400 listing violations a route found itself (`path: reason`, path below `body`), in the validator's style; the
 * first one's path is the `param` unless given.
 */
export function invalidBody(violations: readonly string[], param: string | null = violations[0]?.split(':')[0] ?? null) {
  return Errors.badRequest(`Invalid request body: ${violations.map((v) => `body.${v}`).join('; ')}`, param);
}
