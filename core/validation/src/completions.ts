/** POST /completions body (SPEC.md "POST /completions"). */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import {
  LogitBias,
  N,
  OPEN,
  Penalty,
  STREAM_OPTIONS_NEED_STREAM,
  Seed,
  Stop,
  StreamOptions,
  Temperature,
  TokenCount,
  TopP,
  nullable,
} from './common.ts';
import type { BodyValidator } from './types.ts';

const Prompt = Type.Union(
  [
    Type.String(),
    Type.Array(Type.String()),
    Type.Array(Type.Integer()),
    Type.Array(Type.Array(Type.Integer())),
  ],
  { description: 'a string, an array of strings, an array of token ids or an array of token-id arrays' },
);

export const CompletionBodySchema = Type.Object(
  {
    model: Type.String(),
    prompt: Prompt,
    best_of: nullable(Type.Integer({ minimum: 0, maximum: 20 })),
    echo: nullable(Type.Boolean()),
    frequency_penalty: nullable(Penalty),
    presence_penalty: nullable(Penalty),
    logit_bias: nullable(LogitBias),
    logprobs: nullable(Type.Integer({ minimum: 0, maximum: 5 })),
    max_tokens: nullable(TokenCount),
    n: nullable(N),
    seed: nullable(Seed),
    stop: nullable(Stop),
    stream: nullable(Type.Boolean()),
    stream_options: nullable(StreamOptions),
    suffix: nullable(Type.String()),
    temperature: nullable(Temperature),
    top_p: nullable(TopP),
    user: nullable(Type.String()),
  },
  OPEN,
);

export type CompletionBody = Static<typeof CompletionBodySchema>;

export const completionsValidator: BodyValidator<typeof CompletionBodySchema> = {
  check: TypeCompiler.Compile(CompletionBodySchema),
  crossCheck(body) {
    const { best_of: bestOf, n } = body;
    // SPEC says best_of "must exceed n"; we apply OpenAI's actual rule, best_of >= n, because best_of = n = 1 is
    // the documented default pair and a strict ">" would reject it.
    if (bestOf != null && n != null && bestOf < n) {
      return { param: 'best_of', reason: 'must be greater than or equal to n' };
    }
    // best_of = 1 (the default) generates nothing extra, so only best_of > 1 is refused with streaming.
    if (bestOf != null && bestOf > 1 && body.stream === true) {
      return { param: 'best_of', reason: 'cannot be greater than 1 when stream is true' };
    }
    if (body.stream_options != null && body.stream !== true) return STREAM_OPTIONS_NEED_STREAM;
    return undefined;
  },
};
