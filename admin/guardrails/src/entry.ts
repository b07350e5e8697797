/**
 * A saved guardrail is the object form of a guardrail entry (INTERFACE.md): `id`, `deny`, `async`, `on_fail`,
 * `on_success`, and checks keyed by check id. It is validated by the config validator itself (the host's service `configValidator`), as the entry of a
 * config's `output_guardrails` (the wider of the two entry schemas: `on_fail.deny` is allowed), so that unknown
 * checks and bad parameters are refused exactly as they are inline.
 */
import { type ConfigValidator, GUARDRAIL_POLICY_KEYS, type JsonObject } from '@gateway/sdk';

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

const AT = 'output_guardrails[0]';

/** Every violation of an entry, at paths under `prefix` (`entry.on_fail.feedback.value: …`). */
export function entryViolations(entry: unknown, validator: ConfigValidator, prefix = 'entry'): string[] {
  if (!isObject(entry)) return [`${prefix}: must be an object of checks keyed by check id, with optional id, deny, async, on_fail, on_success`];
  const out: string[] = [];
  if (!Object.keys(entry).some((key) => !GUARDRAIL_POLICY_KEYS.has(key)))
    out.push(`${prefix}: names no check (its properties other than id, deny, async, on_fail, on_success are checks keyed by check id)`);
  const result = validator.validate({ output_guardrails: [entry] });
  if (!result.ok) {
    for (const violation of result.violations) {
      if (violation.startsWith(AT)) out.push(`${prefix}${violation.slice(AT.length)}`);
      else if (violation.startsWith('config:')) out.push(`${prefix}${violation.slice('config'.length)}`);
      else out.push(`${prefix}: ${violation}`);
    }
  }
  return out;
}
