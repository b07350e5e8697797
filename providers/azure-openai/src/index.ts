import { definePlugin } from '@gateway/sdk';
import { createAzureAdapter } from './adapter.ts';
import { DEFAULT_AUTHORITY_HOST, EntraTokens } from './entra.ts';

export { createAzureAdapter, entraCredentials, type AzureAdapterOptions } from './adapter.ts';
export {
  AZURE_ML_SCOPE,
  COGNITIVE_SERVICES_SCOPE,
  DEFAULT_AUTHORITY_HOST,
  EntraTokens,
  type EntraCredentials,
  type EntraTokenOptions,
} from './entra.ts';
export { toModelList } from './models.ts';
export {
  baseUrlFor,
  DEFAULT_API_VERSION,
  DEFAULT_INFERENCE_API_VERSION,
  inferenceBaseUrl,
  inferencePath,
  openAIBaseUrl,
  openAIPath,
  resolveDeployment,
  type ResolvedDeployment,
} from './resolve.ts';
export type { AzureForm, AzureTarget, EntraFields } from './target.ts';

/** `AZURE_AUTHORITY_HOST` (the Azure SDKs' variable): another Entra authority, e.g. a sovereign cloud's. */
function authorityHost(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (!URL.canParse(value)) return undefined;
  const { protocol } = new URL(value);
  return protocol === 'https:' || protocol === 'http:' ? value.trim() : undefined;
}

export default definePlugin({
  setup(api) {
    const configured = api.env.AZURE_AUTHORITY_HOST;
    const host = authorityHost(configured);
    if (configured !== undefined && configured.trim() !== '' && host === undefined) {
      api.logger.warn({ AZURE_AUTHORITY_HOST: configured }, `AZURE_AUTHORITY_HOST is not an http(s) URL; using ${DEFAULT_AUTHORITY_HOST}`);
    }
    // One token cache for both ids: the same service principal serves Azure OpenAI and Azure AI endpoints.
    const tokens = new EntraTokens({ authorityHost: host });
    // Workload identity (the Azure SDKs' variable): the token file of `entraFederated` integrations.
    const federatedTokenFile = api.env.AZURE_FEDERATED_TOKEN_FILE?.trim() || undefined;
    api.provider(createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai', tokens, federatedTokenFile }));
    api.provider(createAzureAdapter({ id: 'azure-ai', defaultForm: 'serverless', tokens, federatedTokenFile }));
  },
});
