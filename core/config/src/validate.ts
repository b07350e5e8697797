/**
 * validateConfig: the one place that decides whether a value is a config. Five passes, every violation collected:
 * a bounded scan (size, depth, forbidden keys), the schema compiled for the loaded plugins (fields.ts), SPEC.md's cross-field rules, the work limits
 * (targets, worst-case provider calls; see budget.ts), then the rules plugins declare for their fields (the hook
 * engine's: the guardrail checks hooks name exist and accept their parameters; see field-rules.ts).
 */
import type { ConfigValidation, GatewayConfig } from '@gateway/sdk';
import { budgetViolations } from './budget.ts';
import { loadedConfig } from './fields.ts';
import { fieldViolations, type GuardrailScope } from './field-rules.ts';
import { ruleViolations } from './rules.ts';
import { scan } from './scan.ts';
import { schemaViolations } from './schema-errors.ts';

export type { ConfigValidation } from '@gateway/sdk';

/** `scope`: whose saved guardrails the config may name (none without it). */
export function validateConfig(value: unknown, scope?: GuardrailScope): ConfigValidation {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, violations: ['config: must be a JSON object'] };
  }
  const scanned = scan(value);
  if (scanned.fatal) return { ok: false, violations: scanned.violations };

  const violations = [...scanned.violations];
  // Compiled once at start-up for what loaded (fields.ts): compiling is the expensive part, checking is cheap.
  const loaded = loadedConfig();
  const { compiled } = loaded;
  try {
    if (!compiled.Check(value)) violations.push(...schemaViolations(compiled.Errors(value), value, scanned.forbidden));
    violations.push(...ruleViolations(value, [], loaded));
    violations.push(...budgetViolations(value));
    // The plugins' own rules for their fields (the hook engine's: checks named exist and accept their parameters).
    violations.push(...fieldViolations(value, scope, loaded));
  } catch {
    // Only a value JSON could never produce (an array whose prototype was swapped, say) gets here.
    return { ok: false, violations: ['config: must be plain JSON data'] };
  }

  if (violations.length > 0) return { ok: false, violations: [...new Set(violations)] };
  return { ok: true, config: value as GatewayConfig };
}
