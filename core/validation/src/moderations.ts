/** POST /moderations body (SPEC.md "POST /moderations"). */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { OPEN, nullable } from './common.ts';
import type { BodyValidator } from './types.ts';

/** Multimodal parts ({type: "text", text} | {type: "image_url", image_url}); only the discriminator is checked. */
const Part = Type.Object({ type: Type.String() }, OPEN);

export const ModerationBodySchema = Type.Object(
  {
    input: Type.Union([Type.String(), Type.Array(Type.String()), Type.Array(Part)], {
      description: 'a string, an array of strings or an array of content parts',
    }),
    /** Any model id: SPEC names two, providers add more (omni-moderation-latest). */
    model: nullable(Type.String()),
  },
  OPEN,
);

export type ModerationBody = Static<typeof ModerationBodySchema>;

export const moderationsValidator: BodyValidator<typeof ModerationBodySchema> = {
  check: TypeCompiler.Compile(ModerationBodySchema),
  crossCheck: () => undefined,
};
