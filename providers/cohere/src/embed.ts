/**
 * OpenAI embeddings ⇄ Cohere Embed API v2 (`POST /v2/embed`): `input` → `texts`, float vectors asked for with
 * `embedding_types: ["float"]`, `dimensions` → `output_dimension`; Cohere's `input_type` (required by its v3+
 * models) is `search_document` unless the client sends one. The answer's `embeddings.float` become OpenAI's
 * `data`, encoded as the client asked (`encoding_format: "base64"` → little-endian float32 in base64).
 */
import { encodeEmbedding, Errors, type JsonObject, type TargetConfig, type TranslateContext } from '@gateway/sdk';
import { count, given, isObject } from './json.ts';

/** The client's `encoding_format`, remembered per attempt for the answer (see `includeUsage` in chat.ts). */
const formats = new WeakMap<TranslateContext, 'float' | 'base64'>();

export const DEFAULT_INPUT_TYPE = 'search_document';

export function embedRequest(body: JsonObject, _target: TargetConfig, ctx: TranslateContext): JsonObject {
  const input = body.input;
  let texts: string[];
  if (typeof input === 'string') texts = [input];
  else if (Array.isArray(input) && input.every((item): item is string => typeof item === 'string')) texts = input;
  else throw Errors.badRequest('input: cohere embeds text; token-id input is not accepted', 'input');
  formats.set(ctx, body.encoding_format === 'base64' ? 'base64' : 'float');
  const out: JsonObject = {
    model: body.model ?? null,
    texts,
    input_type: typeof body.input_type === 'string' ? body.input_type : DEFAULT_INPUT_TYPE,
    embedding_types: ['float'],
  };
  if (given(body.dimensions)) out.output_dimension = body.dimensions;
  if (typeof body.truncate === 'string') out.truncate = body.truncate;
  return out;
}

export function embedResponse(json: unknown, ctx: TranslateContext): JsonObject {
  const vectors = isObject(json) && isObject(json.embeddings) ? json.embeddings.float : undefined;
  if (!isObject(json) || !Array.isArray(vectors)) throw new Error('expected a Cohere embed answer with embeddings.float');
  const format = formats.get(ctx) ?? 'float';
  const data = vectors.map((vector, index) => {
    if (!Array.isArray(vector) || !vector.every((n): n is number => typeof n === 'number'))
      throw new Error(`embeddings.float[${index}] is not a list of numbers`);
    return { object: 'embedding', index, embedding: encodeEmbedding(vector, format) };
  });
  // Cohere's embed answers report what they bill (`meta.billed_units`); `meta.tokens` is used when present.
  const meta = isObject(json.meta) ? json.meta : {};
  const tokens = isObject(meta.tokens) && typeof meta.tokens.input_tokens === 'number' ? meta.tokens.input_tokens : undefined;
  const input = tokens ?? (isObject(meta.billed_units) ? count(meta.billed_units.input_tokens) : 0);
  return { object: 'list', data, model: ctx.model ?? '', usage: { prompt_tokens: input, total_tokens: input } };
}
