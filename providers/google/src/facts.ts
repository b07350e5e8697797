/**
 * What the answer's translation needs to know of the client's request: whether a stream ends with a usage chunk
 * (`stream_options.include_usage`) and how embeddings are encoded (`encoding_format`). Read from
 * `TranslateContext.body`, the OpenAI body of the attempt. Without it (a translator called on its own) the facts are
 * unknown and the answer side falls back to a shape every client reads: floats for embeddings, usage on the last
 * chunk of a stream.
 */
import type { TranslateContext } from '@gateway/sdk';

export interface RequestFacts {
  includeUsage: boolean;
  encodingFormat: unknown;
}

export function requestFacts(ctx: TranslateContext): RequestFacts | undefined {
  const body = ctx.body;
  if (!body) return undefined;
  const options = body.stream_options;
  const includeUsage = typeof options === 'object' && options !== null && !Array.isArray(options) && options.include_usage === true;
  return { includeUsage, encodingFormat: body.encoding_format };
}
