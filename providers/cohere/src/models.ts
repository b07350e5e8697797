/**
 * Cohere's model list (`GET /v1/models`, `{models: [{name, endpoints, context_length, …}], next_page_token}`) as
 * OpenAI's (`{object: "list", data: [{id, object: "model", created, owned_by}]}`). One page of up to 1000 models is
 * asked for (Cohere's default page holds 20). Cohere gives no creation time: `created` is 0.
 */
import type { JsonObject } from '@gateway/sdk';
import { isObject } from './json.ts';

export const MODELS_PATH = '/v1/models?page_size=1000';

export function modelsResponse(json: unknown): JsonObject {
  if (!isObject(json) || !Array.isArray(json.models)) throw new Error('expected a Cohere model list with models');
  const data: JsonObject[] = [];
  for (const model of json.models) {
    if (!isObject(model) || typeof model.name !== 'string') throw new Error('a model without a name');
    const entry: JsonObject = { id: model.name, object: 'model', created: 0, owned_by: 'cohere' };
    if (typeof model.context_length === 'number') entry.context_length = model.context_length;
    if (Array.isArray(model.endpoints)) entry.endpoints = model.endpoints;
    data.push(entry);
  }
  return { object: 'list', data };
}
