/**
 * POST /messages and /messages/count_tokens bodies (Anthropic's Messages API, docs/anthropic-messages.md): only what
 * every provider needs before routing (model, messages, max_tokens). Content blocks are checked when they are
 * translated; a native provider judges the rest itself.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { OPEN } from './common.ts';
import type { BodyValidator } from './types.ts';

const Message = Type.Object(
  {
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
    content: Type.Union([Type.String(), Type.Array(Type.Object({ type: Type.String() }, OPEN))], {
      description: 'a string or an array of content blocks',
    }),
  },
  OPEN,
);

const System = Type.Union([Type.String(), Type.Array(Type.Object({ type: Type.String() }, OPEN))], {
  description: 'a string or an array of text blocks',
});

const common = {
  model: Type.String({ minLength: 1 }),
  messages: Type.Array(Message),
  system: Type.Optional(System),
  tools: Type.Optional(Type.Array(Type.Object({ name: Type.String() }, OPEN))),
};

export const MessagesBodySchema = Type.Object(
  { ...common, max_tokens: Type.Integer({ minimum: 1 }), stream: Type.Optional(Type.Boolean()) },
  OPEN,
);
export const CountTokensBodySchema = Type.Object(common, OPEN);

export type MessagesBody = Static<typeof MessagesBodySchema>;

export const messagesValidator: BodyValidator<typeof MessagesBodySchema> = {
  check: TypeCompiler.Compile(MessagesBodySchema),
  crossCheck: () => undefined,
};

export const countTokensValidator: BodyValidator<typeof CountTokensBodySchema> = {
  check: TypeCompiler.Compile(CountTokensBodySchema),
  crossCheck: () => undefined,
};
