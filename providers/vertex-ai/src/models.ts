/**
 * Which Vertex AI resource a `model` names, and the URL path of a method on it.
 *
 * - a complete resource identifier — `projects/<p>/locations/<l>/publishers/<pub>/models/<m>` or
 *   `projects/<p>/locations/<l>/endpoints/<e>` — is used as the path as it is;
 * - `publishers/<pub>/models/<m>` and `endpoints/<e>` are placed under the config's project and region;
 * - `anthropic.<model>[@<version>]` is an Anthropic model (rawPredict / streamRawPredict);
 * - `google.<model>` or a bare name is a Gemini model of the `google` publisher.
 */
import { safeModel } from '@gateway/provider-google';
import { Errors, type TargetConfig } from '@gateway/sdk';

export type Publisher = 'google' | 'anthropic' | (string & {});

export interface VertexModel {
  publisher: Publisher;
  /** The resource path after `/v1/`, without the method. */
  resource: string;
  /** The model's own name (last path segment, or the endpoint id). */
  name: string;
}

export const DEFAULT_REGION = 'us-central1';

/** The publisher a model string names, without needing the config (the answer side has only the model). */
export function publisherOf(model: string | undefined): Publisher {
  if (!model) return 'google';
  const full = /(?:^|\/)publishers\/([^/]+)\/models\//.exec(model);
  if (full) return full[1] as string;
  if (model.startsWith('anthropic.')) return 'anthropic';
  return 'google';
}

/** The project: config `svcC_project_id`, else the service account's `project_id`. */
export function projectOf(target: TargetConfig): string | undefined {
  if (typeof target.svcC_project_id === 'string' && target.svcC_project_id) return target.svcC_project_id;
  const sa = target.svcC_service_account_json;
  if (typeof sa === 'object' && sa !== null && typeof (sa as Record<string, unknown>).project_id === 'string')
    return (sa as Record<string, unknown>).project_id as string;
  if (typeof sa === 'string') {
    try {
      const parsed = JSON.parse(sa) as Record<string, unknown>;
      if (typeof parsed.project_id === 'string') return parsed.project_id;
    } catch {
      // reported by authorization
    }
  }
  return undefined;
}

export function regionOf(target: TargetConfig): string {
  return typeof target.svcC_region === 'string' && target.svcC_region ? target.svcC_region : DEFAULT_REGION;
}

function checkedSegment(value: string, what: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(value)) throw Errors.badRequest(`${what} ${JSON.stringify(value.slice(0, 100))} is not valid`, what === 'region' ? 'svcC_region' : 'svcC_project_id');
  return value;
}

function parent(target: TargetConfig): string {
  const project = projectOf(target);
  if (!project) throw Errors.badRequest('vertex-ai needs a project: set svcC_project_id (or project_id in the service account)', 'svcC_project_id');
  return `projects/${checkedSegment(project, 'project')}/locations/${checkedSegment(regionOf(target), 'region')}`;
}

export function resolveModel(model: unknown, target: TargetConfig): VertexModel {
  const m = safeModel(model);
  if (m.startsWith('projects/')) {
    const publisher = /\/publishers\/([^/]+)\/models\/([^/]+)$/.exec(m);
    if (publisher) return { publisher: publisher[1] as string, resource: m, name: publisher[2] as string };
    const endpoint = /^projects\/[^/]+\/locations\/[^/]+\/endpoints\/([^/]+)$/.exec(m);
    if (endpoint) return { publisher: 'google', resource: m, name: endpoint[1] as string };
    throw Errors.badRequest(`model ${JSON.stringify(m.slice(0, 200))}: a resource identifier is projects/<p>/locations/<l>/publishers/<pub>/models/<m> or projects/<p>/locations/<l>/endpoints/<e>`, 'model');
  }
  if (m.startsWith('publishers/')) {
    const publisher = /^publishers\/([^/]+)\/models\/([^/]+)$/.exec(m);
    if (!publisher) throw Errors.badRequest(`model ${JSON.stringify(m.slice(0, 200))}: expected publishers/<pub>/models/<m>`, 'model');
    return { publisher: publisher[1] as string, resource: `${parent(target)}/${m}`, name: publisher[2] as string };
  }
  if (m.startsWith('endpoints/')) {
    if (!/^endpoints\/[^/]+$/.test(m)) throw Errors.badRequest(`model ${JSON.stringify(m.slice(0, 200))}: expected endpoints/<id>`, 'model');
    return { publisher: 'google', resource: `${parent(target)}/${m}`, name: m.slice('endpoints/'.length) };
  }
  if (m.includes('/')) throw Errors.badRequest(`model ${JSON.stringify(m.slice(0, 200))} is not a Vertex AI model name`, 'model');
  let publisher: Publisher = 'google';
  let name = m;
  if (m.startsWith('anthropic.')) {
    publisher = 'anthropic';
    name = m.slice('anthropic.'.length);
  } else if (m.startsWith('google.')) name = m.slice('google.'.length);
  if (!name) throw Errors.badRequest('model names no model', 'model');
  return { publisher, resource: `${parent(target)}/publishers/${publisher}/models/${name}`, name };
}

/** `/v1/<resource>:<method>` (a query, such as `?alt=sse`, may follow in `method`). */
export function methodPath(model: VertexModel, method: string): string {
  return `/v1/${model.resource}:${method}`;
}
