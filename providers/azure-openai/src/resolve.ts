/**
 * Where a call goes: base URLs (resource, serverless and managed endpoints), the deployment chosen for a model, the
 * api-version and the path of each endpoint. Pure functions of the target and the body; errors are GatewayErrors with
 * status 400 that name the config field to set.
 */
import { Errors, type EndpointKind, type JsonObject, type TargetConfig } from '@gateway/sdk';
import { type AzureForm, field } from './target.ts';

/** Latest GA version of the Azure OpenAI data-plane inference API (chat, completions, embeddings, models). */
export const DEFAULT_API_VERSION = '2024-10-21';
/** Version of the Azure AI model inference API that serverless endpoints speak. */
export const DEFAULT_INFERENCE_API_VERSION = '2024-05-01-preview';

/** One DNS label: what a resource, endpoint or region name must be before it becomes part of a host name. */
const DNS_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

function label(providerId: string, value: string | undefined, name: string, what: string): string {
  if (value === undefined) throw Errors.badRequest(`${providerId}: ${what}`, name);
  if (!DNS_LABEL.test(value)) {
    throw Errors.badRequest(`${providerId}: ${name} must be a single host-name label (letters, digits, hyphens), got ${JSON.stringify(value.slice(0, 64))}`, name);
  }
  return value;
}

/** `https://<resource_name>.openai.azure.com/openai` (INTERFACE.md: what a custom host replaces). */
export function openAIBaseUrl(providerId: string, target: TargetConfig): string {
  const resourceField = field(target, 'resource_name') !== undefined ? 'resource_name' : 'svcB_resource_name';
  const resource = label(
    providerId,
    field(target, resourceField),
    resourceField,
    'set resource_name (or svcB_resource_name) to the Azure OpenAI resource, or a custom_host',
  );
  return `https://${resource}.openai.azure.com/openai`;
}

/** Host label of a serverless endpoint: `svcB_endpoint_name`, else `svcB_deployment_name`. */
function serverlessName(target: TargetConfig): { name: string; value: string | undefined } {
  const endpoint = field(target, 'svcB_endpoint_name');
  return endpoint !== undefined
    ? { name: 'svcB_endpoint_name', value: endpoint }
    : { name: 'svcB_deployment_name', value: field(target, 'svcB_deployment_name') };
}

/**
 * Serverless: `https://<endpoint>.<region>.models.ai.azure.com`; managed online endpoint:
 * `https://<endpoint>.<region>.inference.ml.azure.com`.
 */
export function inferenceBaseUrl(providerId: string, target: TargetConfig, form: 'serverless' | 'managed'): string {
  const region = label(providerId, field(target, 'svcB_region'), 'svcB_region', `set svcB_region for a ${form} endpoint, or a custom_host`);
  if (form === 'serverless') {
    const { name, value } = serverlessName(target);
    const endpoint = label(providerId, value, name, 'set svcB_endpoint_name (or svcB_deployment_name) for a serverless endpoint, or a custom_host');
    return `https://${endpoint}.${region}.models.ai.azure.com`;
  }
  const endpoint = label(providerId, field(target, 'svcB_endpoint_name'), 'svcB_endpoint_name', 'set svcB_endpoint_name for a managed online endpoint, or a custom_host');
  return `https://${endpoint}.${region}.inference.ml.azure.com`;
}

export function baseUrlFor(providerId: string, target: TargetConfig, form: AzureForm): string {
  return form === 'openai' ? openAIBaseUrl(providerId, target) : inferenceBaseUrl(providerId, target, form);
}

/** The api-version of the target itself: `api_version`, else `svcB_api_version`. */
export function targetApiVersion(target: TargetConfig): string | undefined {
  return field(target, 'api_version') ?? field(target, 'svcB_api_version');
}

export interface ResolvedDeployment {
  deployment: string;
  apiVersion: string;
  /** How it was found, for tests and logs. */
  via: 'alias' | 'default' | 'deployment_id' | 'svcB_deployment_id';
}

/**
 * The deployment for a request's model: the `deployments` entry whose alias is the model, else the entry marked
 * `is_default`, else `deployment_id`, else `svcB_deployment_id`. An entry brings its own api_version; otherwise the
 * target's (`api_version`, `svcB_api_version`) or DEFAULT_API_VERSION.
 */
export function resolveDeployment(providerId: string, target: TargetConfig, model: string | undefined): ResolvedDeployment {
  const entries = Array.isArray(target.deployments) ? target.deployments : [];
  const fallbackVersion = targetApiVersion(target) ?? DEFAULT_API_VERSION;
  const fromEntry = (entry: (typeof entries)[number], via: 'alias' | 'default'): ResolvedDeployment => ({
    deployment: entry.deployment_id,
    apiVersion: typeof entry.api_version === 'string' && entry.api_version.trim() !== '' ? entry.api_version.trim() : fallbackVersion,
    via,
  });
  if (model !== undefined) {
    const match = entries.find((entry) => entry.alias === model);
    if (match) return fromEntry(match, 'alias');
  }
  const preferred = entries.find((entry) => entry.is_default === true);
  if (preferred) return fromEntry(preferred, 'default');
  const deploymentId = field(target, 'deployment_id');
  if (deploymentId !== undefined) return { deployment: deploymentId, apiVersion: fallbackVersion, via: 'deployment_id' };
  const svcDeploymentId = field(target, 'svcB_deployment_id');
  if (svcDeploymentId !== undefined) return { deployment: svcDeploymentId, apiVersion: fallbackVersion, via: 'svcB_deployment_id' };

  const aliases = entries.map((entry) => JSON.stringify(entry.alias));
  const why = entries.length
    ? `no entry of deployments has the alias ${model === undefined ? '(no model sent)' : JSON.stringify(model)} (aliases: ${aliases.join(', ')}) and none is marked is_default`
    : 'the config has no deployments';
  throw Errors.badRequest(
    `${providerId}: no Azure OpenAI deployment for model ${model === undefined ? '(none)' : JSON.stringify(model)}: ${why}, and neither deployment_id nor svcB_deployment_id is set`,
    'model',
  );
}

const OPENAI_PATHS: Partial<Record<EndpointKind, string>> = {
  chatComplete: '/chat/completions',
  complete: '/completions',
  embed: '/embeddings',
};

const query = (apiVersion: string) => `?api-version=${encodeURIComponent(apiVersion)}`;

/** Path under the Azure OpenAI base URL: `/deployments/<deployment>/<endpoint>?api-version=<v>`, or `/models?…`. */
export function openAIPath(providerId: string, endpoint: EndpointKind, target: TargetConfig, body: JsonObject): string {
  if (endpoint === 'listModels') {
    const entries = Array.isArray(target.deployments) ? target.deployments : [];
    const version = targetApiVersion(target) ?? entries.find((e) => e.is_default === true)?.api_version ?? DEFAULT_API_VERSION;
    return `/models${query(version)}`;
  }
  const suffix = OPENAI_PATHS[endpoint];
  if (!suffix) throw Errors.unsupportedEndpoint(providerId, endpoint);
  const model = typeof body.model === 'string' ? body.model : undefined;
  const { deployment, apiVersion } = resolveDeployment(providerId, target, model);
  return `/deployments/${encodeURIComponent(deployment)}${suffix}${query(apiVersion)}`;
}

/**
 * Serverless endpoints speak the Azure AI model inference API (`/chat/completions`, `/embeddings`, `/info`, with an
 * api-version); a managed online endpoint has one scoring URI, `/score`, for every kind of request.
 */
export function inferencePath(providerId: string, endpoint: EndpointKind, target: TargetConfig, form: 'serverless' | 'managed'): string {
  if (form === 'managed') {
    if (endpoint !== 'chatComplete' && endpoint !== 'embed') {
      throw Errors.unsupportedEndpoint(providerId, `${endpoint} on a managed online endpoint (it has one scoring URI, /score)`);
    }
    const version = targetApiVersion(target);
    return version === undefined ? '/score' : `/score${query(version)}`;
  }
  const version = targetApiVersion(target) ?? DEFAULT_INFERENCE_API_VERSION;
  if (endpoint === 'chatComplete') return `/chat/completions${query(version)}`;
  if (endpoint === 'embed') return `/embeddings${query(version)}`;
  if (endpoint === 'listModels') return `/info${query(version)}`;
  throw Errors.unsupportedEndpoint(providerId, `${endpoint} on a serverless endpoint`);
}
