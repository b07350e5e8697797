/** OpenAI embeddings ↔ Gemini `batchEmbedContents`, and Gemini's model list → OpenAI's. */
import { encodeEmbedding, Errors, type Json, type JsonObject, type TranslateContext } from '@gateway/sdk';
import { requestFacts } from './facts.ts';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The input texts of an embeddings request; token arrays have no Gemini counterpart and are refused. */
export function embeddingInputs(body: JsonObject): string[] {
  const input = body.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length && input.every((s) => typeof s === 'string')) return input as string[];
  throw Errors.badRequest('this provider embeds text: input must be a string or an array of strings (token arrays are not supported)', 'input');
}

/** `models/<name>` as Gemini names a model in request bodies. */
export function geminiModelName(model: string): string {
  return model.includes('/') ? model : `models/${model}`;
}

/** The batchEmbedContents body: one request per input text, `dimensions` as `outputDimensionality`. */
export function toGeminiEmbedRequest(body: JsonObject, model: string): JsonObject {
  const name = geminiModelName(model);
  return {
    requests: embeddingInputs(body).map((text) => {
      const item: JsonObject = { model: name, content: { parts: [{ text }] } };
      if (typeof body.dimensions === 'number') item.outputDimensionality = body.dimensions;
      if (typeof body.task_type === 'string') item.taskType = body.task_type;
      return item;
    }),
  };
}

/** An embedding list from vectors, encoded as the client asked (`encoding_format`, floats when unknown). */
export function embeddingList(vectors: number[][], ctx: TranslateContext, promptTokens: number): JsonObject {
  const format = requestFacts(ctx)?.encodingFormat;
  return {
    object: 'list',
    data: vectors.map((values, index) => ({ object: 'embedding', index, embedding: encodeEmbedding(values, format) })),
    model: ctx.model ?? '',
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

function vector(values: Json | undefined): number[] {
  if (!Array.isArray(values) || !values.every((v) => typeof v === 'number')) throw new Error('an embedding without numeric values');
  return values as number[];
}

/** The batchEmbedContents answer `{embeddings: [{values}]}` as OpenAI's embedding list. */
export function fromGeminiEmbedResponse(json: unknown, ctx: TranslateContext): JsonObject {
  if (!isObject(json) || !Array.isArray(json.embeddings)) throw new Error('expected {embeddings: [...]}');
  const vectors = json.embeddings.map((e) => vector(isObject(e) ? e.values : undefined));
  // The Gemini API reports no token count for embeddings; a usageMetadata, when present, is used.
  const usage = isObject(json.usageMetadata) ? json.usageMetadata : {};
  const tokens = typeof usage.promptTokenCount === 'number' ? usage.promptTokenCount : 0;
  return embeddingList(vectors, ctx, tokens);
}

/** GET /v1beta/models answer → `{object: 'list', data: [{id, object: 'model', created, owned_by}]}`. */
export function fromGeminiModelList(json: unknown): JsonObject {
  if (!isObject(json) || (json.models !== undefined && !Array.isArray(json.models))) throw new Error('expected {models: [...]}');
  const models = (json.models as Json[] | undefined) ?? [];
  return {
    object: 'list',
    data: models.filter(isObject).map((m) => {
      const name = typeof m.name === 'string' ? m.name : '';
      const out: JsonObject = { id: name.replace(/^models\//, ''), object: 'model', created: 0, owned_by: 'google' };
      if (typeof m.displayName === 'string') out.display_name = m.displayName;
      if (typeof m.inputTokenLimit === 'number') out.context_window = m.inputTokenLimit;
      return out;
    }),
  };
}
