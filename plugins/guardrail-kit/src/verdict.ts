import type { JsonObject } from '@gateway/sdk';
import type { ServiceError } from './http.ts';

/** What `GuardrailCheck.run` resolves to. */
export interface CheckResult {
  verdict: boolean;
  data?: unknown;
  transformed?: JsonObject;
}

/** A failed verdict carrying what went wrong in `data.error` (plus whatever else the check reports). */
export function failedVerdict(error: ServiceError, data: Record<string, unknown> = {}): CheckResult {
  return { verdict: false, data: { ...data, error } };
}

/** A failed verdict for parameters that do not pass the check's schema (the engine should have refused the config). */
export function invalidParameters(errors: string[], data: Record<string, unknown> = {}): CheckResult {
  return failedVerdict({ kind: 'invalid_parameters', message: errors.join('; ') }, data);
}
