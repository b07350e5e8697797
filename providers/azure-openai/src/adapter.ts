/**
 * The Azure adapter. Azure OpenAI speaks OpenAI's bodies, so requests and answers (streams included) pass through
 * untranslated; what differs is where a call goes (resource, deployment, api-version) and how it is authorised
 * (`api-key`, or a Microsoft Entra ID bearer token). The same adapter serves the Azure AI serverless and managed
 * online endpoint forms, chosen per target by `svcB_deployment_type`.
 */
import { applyKeyAuth, type KeyAuth, targetKey } from '@gateway/provider-openai-compatible';
import {
  Errors,
  GatewayError,
  type EndpointKind,
  type EndpointTranslator,
  type JsonObject,
  type ProviderAdapter,
  type ProviderCall,
  type TargetConfig,
} from '@gateway/sdk';
import { AZURE_ML_SCOPE, COGNITIVE_SERVICES_SCOPE, type EntraCredentials, EntraTokens } from './entra.ts';
import { azureFields } from './fields.ts';
import { toModelList } from './models.ts';
import { baseUrlFor, inferencePath, openAIPath } from './resolve.ts';
import { type AzureForm, type AzureTarget, field, formOf } from './target.ts';

export interface AzureAdapterOptions {
  /** Provider id: `azure-openai` or `azure-ai`. */
  id: string;
  /** The form of a target without `svcB_deployment_type`. */
  defaultForm: AzureForm;
  /** Shared Entra token cache (one per process, shared by both ids). */
  tokens?: EntraTokens;
  /** AZURE_FEDERATED_TOKEN_FILE: the gateway's federated identity token, for `entraFederated` integrations. */
  federatedTokenFile?: string;
}

const API_KEY: KeyAuth = { kind: 'header', name: 'api-key' };
const BEARER: KeyAuth = { kind: 'bearer' };
/** Credential headers this adapter owns: whatever a client or a forward rule put there is replaced. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'api-key']);

/**
 * The service principal of a target: tenant, client and secret all three or none (a partial set is a config mistake
 * worth a clear 400); or, for an `entraFederated` integration, tenant and client with the federated token file.
 */
export function entraCredentials(providerId: string, target: TargetConfig, form: AzureForm, federatedTokenFile?: string): EntraCredentials | undefined {
  const t = target as AzureTarget;
  const tenantId = field(t, 'svcB_entra_tenant_id');
  const clientId = field(t, 'svcB_entra_client_id');
  const clientSecret = field(t, 'svcB_entra_client_secret');
  const scope = field(t, 'svcB_entra_scope') ?? (form === 'managed' ? AZURE_ML_SCOPE : COGNITIVE_SERVICES_SCOPE);
  if (t.svcB_entra_auth_mode === 'entraFederated') {
    if (tenantId === undefined || clientId === undefined)
      throw Errors.badRequest(`${providerId}: entraFederated needs svcB_entra_tenant_id and svcB_entra_client_id`, tenantId === undefined ? 'svcB_entra_tenant_id' : 'svcB_entra_client_id');
    if (!federatedTokenFile)
      throw new GatewayError({
        code: 'provider_authentication_failed',
        type: 'authentication_error',
        status: 502,
        message: `${providerId}: entraFederated needs the gateway's federated identity token; set AZURE_FEDERATED_TOKEN_FILE`,
        extra: { provider: providerId },
      });
    return { tenantId, clientId, scope, federatedTokenFile };
  }
  if (tenantId === undefined && clientId === undefined && clientSecret === undefined) return undefined;
  if (tenantId === undefined || clientId === undefined || clientSecret === undefined) {
    const missing = [
      tenantId === undefined && 'svcB_entra_tenant_id',
      clientId === undefined && 'svcB_entra_client_id',
      clientSecret === undefined && 'svcB_entra_client_secret',
    ].filter(Boolean);
    throw Errors.badRequest(`${providerId}: Microsoft Entra ID client credentials need ${missing.join(' and ')} as well`, missing[0] as string);
  }
  return { tenantId, clientId, clientSecret, scope };
}

function withCredential(call: ProviderCall, auth: KeyAuth, key: string, extra?: Record<string, string>): ProviderCall {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(call.headers)) if (!CREDENTIAL_HEADERS.has(name.toLowerCase())) headers[name] = value;
  if (extra) Object.assign(headers, extra);
  return applyKeyAuth({ ...call, headers }, auth, key);
}

/** `azureml-model-deployment` routes a managed online endpoint's traffic to one deployment. */
function formHeaders(target: TargetConfig, form: AzureForm): Record<string, string> | undefined {
  if (form !== 'managed') return undefined;
  const deployment = field(target, 'svcB_deployment_name');
  return deployment === undefined ? undefined : { 'azureml-model-deployment': deployment };
}

export function createAzureAdapter(options: AzureAdapterOptions): ProviderAdapter {
  const { id, defaultForm } = options;
  const tokens = options.tokens ?? new EntraTokens();

  const translator = (endpoint: Exclude<EndpointKind, 'proxy'>): EndpointTranslator => ({
    path(target: TargetConfig, body: JsonObject): string {
      const form = formOf(target, defaultForm);
      return form === 'openai' ? openAIPath(id, endpoint, target, body) : inferencePath(id, endpoint, target, form);
    },
  });

  return {
    id,
    targetFields: azureFields,
    pricing: new URL('../pricing.json', import.meta.url),
    baseUrl: (target) => baseUrlFor(id, target, formOf(target, defaultForm)),
    authorize(call: ProviderCall, target: TargetConfig): ProviderCall | Promise<ProviderCall> {
      const form = formOf(target, defaultForm);
      const extra = formHeaders(target, form);
      const entra = entraCredentials(id, target, form, options.federatedTokenFile);
      if (entra) {
        const cached = tokens.peek(entra);
        if (cached !== undefined) return withCredential(call, BEARER, cached, extra);
        return tokens.get(entra, id).then((token) => withCredential(call, BEARER, token, extra));
      }
      if (form === 'openai') {
        // Azure OpenAI: `api-key: <api_key>`; a config `Authorization` is a bearer (Entra) token given directly.
        const apiKey = field(target, 'api_key');
        if (apiKey !== undefined) return withCredential(call, API_KEY, apiKey, extra);
        const bearer = targetKey({ Authorization: target.Authorization });
        if (bearer) return withCredential(call, BEARER, bearer, extra);
        return extra ? { ...call, headers: { ...call.headers, ...extra } } : call;
      }
      // Serverless and managed endpoints take their key (or a token) as a bearer.
      const key = targetKey(target);
      if (key) return withCredential(call, BEARER, key, extra);
      return extra ? { ...call, headers: { ...call.headers, ...extra } } : call;
    },
    endpoints: {
      chatComplete: translator('chatComplete'),
      complete: translator('complete'),
      embed: translator('embed'),
      listModels: { ...translator('listModels'), response: (json) => toModelList(json, id) },
    },
  };
}
