/**
 * Vertex AI text embeddings (`:predict` on a google publisher model): `{instances: [{content}], parameters}` →
 * `{predictions: [{embeddings: {values, statistics: {token_count}}}]}`.
 */
import { embeddingInputs, embeddingList } from '@gateway/provider-google';
import type { Json, JsonObject, TranslateContext } from '@gateway/sdk';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

export function toVertexEmbedRequest(body: JsonObject): JsonObject {
  const out: JsonObject = {
    instances: embeddingInputs(body).map((content): JsonObject => {
      const instance: JsonObject = { content };
      if (typeof body.task_type === 'string') instance.task_type = body.task_type;
      return instance;
    }),
  };
  if (typeof body.dimensions === 'number') out.parameters = { outputDimensionality: body.dimensions };
  return out;
}

export function fromVertexEmbedResponse(json: unknown, ctx: TranslateContext): JsonObject {
  if (!isObject(json) || !Array.isArray(json.predictions)) throw new Error('expected {predictions: [...]}');
  let tokens = 0;
  const vectors = json.predictions.map((p: Json) => {
    const embeddings = isObject(p) && isObject(p.embeddings) ? p.embeddings : undefined;
    const values = embeddings?.values;
    if (!Array.isArray(values) || !values.every((v) => typeof v === 'number')) throw new Error('a prediction without embeddings.values');
    const stats = isObject(embeddings?.statistics) ? (embeddings?.statistics as JsonObject) : {};
    if (typeof stats.token_count === 'number') tokens += stats.token_count;
    return values as number[];
  });
  return embeddingList(vectors, ctx, tokens);
}
