import type { TargetConfig } from '@gateway/sdk';

/**
 * Fields this provider reads beyond the config schema of `@gateway/sdk`: the Microsoft Entra ID client-credentials
 * of a service principal. They reach a target from an integration or a virtual key (the closed config schema does not
 * accept them in `x-gateway-config` yet; see the README).
 */
export interface EntraFields {
  svcB_entra_tenant_id?: string;
  svcB_entra_client_id?: string;
  svcB_entra_client_secret?: string;
  /**
   * `entraFederated`: the service principal proves itself with the gateway's federated identity token instead of a
   * secret. Only a stored integration sets it: the config schema refuses it in `x-gateway-config`, so no caller can
   * borrow the gateway's own identity for a tenant and client of their choosing.
   */
  svcB_entra_auth_mode?: 'entraFederated';
}

export type AzureTarget = TargetConfig & EntraFields;

/** Which Azure API a target addresses. */
export type AzureForm = 'openai' | 'serverless' | 'managed';

/** `svcB_deployment_type` picks the Azure AI endpoint forms; otherwise the adapter's own default form. */
export function formOf(target: TargetConfig, fallback: AzureForm): AzureForm {
  const type = target.svcB_deployment_type;
  return type === 'serverless' || type === 'managed' ? type : fallback;
}

/** A non-empty string field, trimmed; undefined otherwise. */
export function field(target: TargetConfig, name: string): string | undefined {
  const value = (target as Record<string, unknown>)[name];
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}
