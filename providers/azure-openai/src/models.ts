import type { JsonObject } from '@gateway/sdk';

/**
 * GET /v1/models. Azure OpenAI's `GET /openai/models` answers `{data: [{id, object, created_at, status, capabilities,
 * lifecycle_status, deprecation, …}]}`; a serverless endpoint's `GET /info` answers `{model_name, model_type,
 * model_provider_name}`. Both become OpenAI's list (`id`, `object`, `created`, `owned_by`), Azure's fields kept.
 */
export function toModelList(json: unknown, providerId: string): JsonObject {
  if (typeof json !== 'object' || json === null) throw new Error('expected a JSON object');
  const body = json as Record<string, unknown>;
  if (Array.isArray(body.data)) {
    const data = body.data
      .filter((m): m is JsonObject => typeof m === 'object' && m !== null && typeof (m as JsonObject).id === 'string')
      .map((m) => ({
        ...m,
        id: m.id as string,
        object: 'model',
        created: typeof m.created === 'number' ? m.created : typeof m.created_at === 'number' ? m.created_at : 0,
        owned_by: typeof m.owned_by === 'string' ? m.owned_by : typeof m.owner === 'string' ? m.owner : providerId,
      }));
    return { object: 'list', data };
  }
  if (typeof body.model_name === 'string') {
    const model: JsonObject = {
      id: body.model_name,
      object: 'model',
      created: 0,
      owned_by: typeof body.model_provider_name === 'string' ? body.model_provider_name : providerId,
    };
    if (typeof body.model_type === 'string') model.model_type = body.model_type;
    return { object: 'list', data: [model] };
  }
  throw new Error('expected a model list (data) or model information (model_name)');
}
