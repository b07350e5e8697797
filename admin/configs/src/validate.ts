/**
 * A config to save: the same validation as a header config (the host's service `configValidator`: 400
 * `invalid_config` listing every violation by path), masked secrets put back from the previous version (unless
 * where they are sent changed), and every saved guardrail it names visible to its workspace.
 */
import type { SavedGuardrailStore } from '@gateway/admin-guardrails';
import { type DocumentFields, restoreMasked, type StoredDocument } from '@gateway/admin-kit';
import { type ConfigValidator, GatewayError, type JsonObject } from '@gateway/sdk';
import { stringEntries } from './refs.ts';

export function invalidConfig(violations: readonly string[]): GatewayError {
  return new GatewayError({ code: 'invalid_config', type: 'invalid_config', status: 400, message: `Invalid config: ${violations.join('; ')}`, param: 'config' });
}

export interface ConfigScope {
  organisationId: string;
  workspaceId: string;
}

/** Nothing stored yet: a new config's masks stand for nothing. */
export const NO_PREVIOUS: StoredDocument = { masked: {}, secrets: [] };

/** The config with its secrets and every violation found (none: it may be saved). */
function examine(
  raw: unknown,
  previous: StoredDocument,
  scope: ConfigScope,
  guardrails: SavedGuardrailStore | undefined,
  validator: ConfigValidator,
  fields: DocumentFields,
): { value: JsonObject | undefined; violations: string[] } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { value: undefined, violations: ['config: must be a JSON object'] };
  const { value, problems } = restoreMasked(raw as JsonObject, previous, '', fields);
  const violations = [...problems];

  // Saved guardrails are named by id or slug for the config's workspace; the validator, which knows no workspace,
  // is given their ids (it then checks their checks as it does for any string entry).
  const forValidation: Record<string, unknown> = { ...value };
  for (const { key, index, ref } of stringEntries(value)) {
    if (!guardrails) continue; // the validator reports that no guardrail store is loaded
    const found = guardrails.find(scope.organisationId, scope.workspaceId, ref);
    if (!found) {
      violations.push(`${key}[${index}]: no saved guardrail ${JSON.stringify(ref.slice(0, 128))} that this workspace may use`);
      continue;
    }
    const list = [...(forValidation[key] as unknown[])];
    list[index] = found.id;
    forValidation[key] = list;
  }
  const result = validator.validate(forValidation, scope);
  if (!result.ok) violations.push(...result.violations.filter((v) => !/: no saved guardrail with id /.test(v)));
  return { value, violations: [...new Set(violations)] };
}

type Examined = Parameters<typeof examine>;

/** The config with its secrets, or a thrown 400 listing every violation; nothing is written before this passes. */
export function checkedConfig(...args: Examined): JsonObject {
  const { value, violations } = examine(...args);
  if (violations.length > 0 || !value) throw invalidConfig(violations);
  return value;
}

/** Every violation of a config, for a dry run (POST /configs/:configId/validate): [] when it may be saved. */
export function configViolations(...args: Examined): string[] {
  return examine(...args).violations;
}
