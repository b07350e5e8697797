/** POST /chat/completions body (SPEC.md "POST /chat/completions"). */
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

const Role = Type.Union([
  Type.Literal('system'),
  Type.Literal('developer'),
  Type.Literal('user'),
  Type.Literal('assistant'),
  Type.Literal('tool'),
  Type.Literal('function'),
]);

/** SPEC does not show the message shape, so only `role` and the broad form of `content` are checked. */
const Message = Type.Object(
  {
    role: Role,
    content: Type.Optional(
      Type.Union([Type.String(), Type.Array(Type.Object({}, OPEN)), Type.Null()], {
        description: 'a string, an array of content parts or null',
      }),
    ),
  },
  OPEN,
);

const FunctionName = Type.Object({ name: Type.String() }, OPEN);
const Tool = Type.Object({ type: Type.Literal('function'), function: FunctionName }, OPEN);

const ToolChoice = Type.Union(
  [Type.Literal('none'), Type.Literal('auto'), Type.Literal('required'), Tool],
  { description: '"none", "auto", "required" or {type: "function", function: {name}}' },
);

const FunctionCall = Type.Union([Type.Literal('none'), Type.Literal('auto'), FunctionName], {
  description: '"none", "auto" or {name}',
});

const ResponseFormat = Type.Object(
  { type: Type.Union([Type.Literal('text'), Type.Literal('json_object'), Type.Literal('json_schema')]) },
  OPEN,
);

const Thinking = Type.Object({ type: Type.Literal('enabled'), budget_tokens: Type.Integer() }, OPEN);

export const ChatCompletionBodySchema = Type.Object(
  {
    messages: Type.Array(Message, { minItems: 1 }),
    model: nullable(Type.String()),
    frequency_penalty: nullable(Penalty),
    presence_penalty: nullable(Penalty),
    logit_bias: nullable(LogitBias),
    logprobs: nullable(Type.Boolean()),
    top_logprobs: nullable(Type.Integer({ minimum: 0, maximum: 20 })),
    /** Deprecated in favour of max_completion_tokens, still accepted. */
    max_tokens: nullable(TokenCount),
    max_completion_tokens: nullable(TokenCount),
    n: nullable(N),
    response_format: nullable(ResponseFormat),
    seed: nullable(Seed),
    stop: nullable(Stop),
    stream: nullable(Type.Boolean()),
    stream_options: nullable(StreamOptions),
    thinking: nullable(Thinking),
    temperature: nullable(Temperature),
    top_p: nullable(TopP),
    tools: nullable(Type.Array(Tool, { maxItems: 128 })),
    tool_choice: nullable(ToolChoice),
    parallel_tool_calls: nullable(Type.Boolean()),
    user: nullable(Type.String()),
    function_call: nullable(FunctionCall),
    functions: nullable(Type.Array(FunctionName, { minItems: 1, maxItems: 128 })),
  },
  OPEN,
);

export type ChatCompletionBody = Static<typeof ChatCompletionBodySchema>;

export const chatValidator: BodyValidator<typeof ChatCompletionBodySchema> = {
  check: TypeCompiler.Compile(ChatCompletionBodySchema),
  crossCheck(body) {
    if (body.top_logprobs != null && body.logprobs !== true) {
      return { param: 'top_logprobs', reason: 'requires logprobs to be true' };
    }
    if (body.stream_options != null && body.stream !== true) return STREAM_OPTIONS_NEED_STREAM;
    return undefined;
  },
};
