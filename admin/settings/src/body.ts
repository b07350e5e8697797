/** Hand-checked settings bodies: every problem in one 400, the first one's field as `param`. */
import { Errors } from '@gateway/sdk';

export interface Problem {
  param: string;
  message: string;
}

/** The body as a plain object; 400 otherwise. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined) throw Errors.badRequest('The request needs a JSON body', 'body');
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw Errors.badRequest('The body must be a JSON object', 'body');
  return body as Record<string, unknown>;
}

export function throwProblems(problems: readonly Problem[]): void {
  if (problems.length) throw Errors.badRequest(problems.map((p) => p.message).join('; '), problems[0]!.param);
}
