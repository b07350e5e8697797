/**
 * Mistral's embeddings API is OpenAI's but for two names: the output size is `output_dimension` (OpenAI:
 * `dimensions`), and there is no `user` (refused as an extra field). `encoding_format` (float / base64) is Mistral's
 * too, so the answer passes through unchanged.
 */
import type { JsonObject, TargetConfig, TranslateContext } from '@gateway/sdk';

export function mistralEmbedRequest(body: JsonObject, _target: TargetConfig, _ctx: TranslateContext): JsonObject {
  if (!('dimensions' in body) && !('user' in body)) return body;
  const { dimensions, user: _user, ...rest } = body;
  const out: JsonObject = rest;
  if (dimensions !== undefined && dimensions !== null && !('output_dimension' in body)) out.output_dimension = dimensions;
  return out;
}
