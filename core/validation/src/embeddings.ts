/** POST /embeddings body (SPEC.md "POST /embeddings"). */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { OPEN, nullable } from './common.ts';
import type { BodyValidator } from './types.ts';

const MAX_INPUTS = 2048;
const Batch = <T extends TSchema>(item: T) =>
  Type.Array(item, { minItems: 1, maxItems: MAX_INPUTS });

/** "Not empty" at every level: no empty string, no empty array, no empty token array. */
const Input = Type.Union(
  [
    Type.String({ minLength: 1 }),
    Batch(Type.String({ minLength: 1 })),
    Batch(Type.Integer()),
    Batch(Type.Array(Type.Integer(), { minItems: 1 })),
  ],
  { description: `a non-empty string, or 1..${MAX_INPUTS} strings, token ids or token-id arrays` },
);

export const EmbeddingBodySchema = Type.Object(
  {
    input: Input,
    model: Type.String(),
    dimensions: nullable(Type.Integer({ minimum: 1 })),
    encoding_format: nullable(Type.Union([Type.Literal('float'), Type.Literal('base64')])),
    user: nullable(Type.String()),
  },
  OPEN,
);

export type EmbeddingBody = Static<typeof EmbeddingBodySchema>;

export const embeddingsValidator: BodyValidator<typeof EmbeddingBodySchema> = {
  check: TypeCompiler.Compile(EmbeddingBodySchema),
  crossCheck: () => undefined,
};
