/**
 * OpenAI embeddings ⇄ Bedrock InvokeModel (POST /model/{modelId}/invoke), in each model's own body format:
 *
 * - Amazon Titan Text Embeddings (`amazon.titan-embed-text-v1`, `-v2:0`, `amazon.titan-embed-g1-text-02`):
 *   `{"inputText": "…", "dimensions"?: 256|512|1024 (v2 only)}` → `{"embedding": [...], "inputTextTokenCount": n}`.
 *   One text per call.
 * - Cohere Embed (`cohere.embed-english-v3`, `cohere.embed-multilingual-v3`, `cohere.embed-v4:0`):
 *   `{"texts": [...], "input_type": "search_document"|…, "truncate"?, "output_dimension"? (v4)}` →
 *   `{"embeddings": [[...]] | {"float": [[...]]}, "id", "response_type", "texts"}`. Up to 96 texts per call. Its
 *   body carries no token count (Bedrock reports it in a response header the core does not pass on), so usage is 0.
 *
 * `encoding_format: "base64"` is honoured with the SDK's `encodeEmbedding` (Bedrock itself answers numbers).
 *
 * Contract gap: a Titan request with several inputs would need one upstream call per input, and the provider
 * contract makes one call per request; such a request is refused with a 400 that says so.
 */
import { encodeEmbedding, Errors, type JsonObject, type TranslateContext } from '@gateway/sdk';
import { baseModelId, embeddingKind, type EmbeddingKind } from './models.ts';

const bad = (message: string, param: string | null = null) => Errors.badRequest(message, param);

function kindOf(model: unknown): EmbeddingKind {
  if (typeof model !== 'string' || !model) throw bad('model is required', 'model');
  const kind = embeddingKind(model);
  if (!kind) throw bad(`${model} is not an embedding model the bedrock provider translates (amazon.titan-embed-*, cohere.embed-*)`, 'model');
  return kind;
}

function inputs(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length && input.every((s) => typeof s === 'string')) return input as string[];
  throw bad('Bedrock embedding models take text: input must be a string or an array of strings (not token ids)', 'input');
}

export function embedRequest(body: JsonObject): JsonObject {
  const model = body.model as string;
  const kind = kindOf(model);
  const texts = inputs(body.input);
  const dimensions = body.dimensions;
  const id = baseModelId(model).toLowerCase();

  if (kind === 'titan') {
    if (texts.length !== 1) {
      throw bad(
        `${model} embeds one text per call and this gateway makes one provider call per request: send one input per request, or use a Cohere Embed model for batches`,
        'input',
      );
    }
    const out: JsonObject = { inputText: texts[0] as string };
    if (dimensions !== undefined && dimensions !== null) {
      if (!id.startsWith('amazon.titan-embed-text-v2')) throw bad(`${model} has a fixed size; dimensions is accepted by amazon.titan-embed-text-v2 only`, 'dimensions');
      out.dimensions = dimensions;
    }
    return out;
  }

  if (texts.length > 96) throw bad('Cohere Embed on Bedrock takes at most 96 texts per call', 'input');
  const out: JsonObject = {
    texts,
    input_type: typeof body.input_type === 'string' ? body.input_type : 'search_document',
  };
  if (typeof body.truncate === 'string') out.truncate = body.truncate;
  if (dimensions !== undefined && dimensions !== null) {
    if (!id.startsWith('cohere.embed-v4')) throw bad(`${model} has a fixed size; dimensions is accepted by cohere.embed-v4 only`, 'dimensions');
    out.output_dimension = dimensions;
  }
  return out;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function vector(value: unknown, where: string): number[] {
  if (!Array.isArray(value) || !value.length || !value.every((n) => typeof n === 'number' && Number.isFinite(n))) {
    throw new Error(`${where} is not a vector of numbers`);
  }
  return value as number[];
}

export function embedResponse(json: unknown, ctx: TranslateContext): JsonObject {
  if (!isObject(json)) throw new Error('the InvokeModel answer is not a JSON object');
  const format = ctx.body?.encoding_format;
  let vectors: number[][];
  let tokens = 0;
  if (kindOf(ctx.model) === 'titan') {
    vectors = [vector(json.embedding, 'embedding')];
    if (json.inputTextTokenCount !== undefined) {
      if (typeof json.inputTextTokenCount !== 'number' || json.inputTextTokenCount < 0) throw new Error('inputTextTokenCount is not a count');
      tokens = json.inputTextTokenCount;
    }
  } else {
    const raw = isObject(json.embeddings) ? json.embeddings.float : json.embeddings;
    if (!Array.isArray(raw) || !raw.length) throw new Error('embeddings is not a list of vectors');
    vectors = raw.map((v, i) => vector(v, `embeddings[${i}]`));
  }
  return {
    object: 'list',
    data: vectors.map((v, index) => ({ object: 'embedding', index, embedding: encodeEmbedding(v, format) })),
    model: ctx.model ?? '',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
