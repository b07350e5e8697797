/**
 * POST /responses bodies (OpenAI's Responses API, docs/responses.md), checked before routing for every provider, native
 * or translated: SPEC.md's response object limits (metadata 16 pairs, keys of at most 64 and values of at most 512
 * characters; temperature 0..2; top_p 0..1; truncation `auto` | `disabled`; the tool kinds file search, function,
 * computer use and web search). Input items are checked when they are translated; a native provider judges the rest.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { nullable, OPEN, Temperature, TopP } from './common.ts';
import type { BodyValidator, Violation } from './types.ts';

/** The tool kinds SPEC.md lists (with the names OpenAI has given web search and computer use). */
export const RESPONSES_TOOL_KINDS = ['function', 'file_search', 'computer_use_preview', 'web_search', 'web_search_preview', 'web_search_preview_2025_03_11'] as const;

const KINDS: ReadonlySet<string> = new Set(RESPONSES_TOOL_KINDS);
const Tool = Type.Object(
  {
    type: Type.String({ minLength: 1 }),
    name: Type.Optional(Type.String({ minLength: 1 })),
    parameters: nullable(Type.Object({}, OPEN)),
    vector_store_ids: Type.Optional(Type.Array(Type.String())),
    max_num_results: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
  },
  OPEN,
);

const InputItem = Type.Object({}, OPEN);

export const ResponsesBodySchema = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    input: Type.Optional(Type.Union([Type.String(), Type.Array(InputItem)], { description: 'a string or an array of input items' })),
    instructions: nullable(Type.String()),
    metadata: nullable(Type.Record(Type.String(), Type.String({ maxLength: 512 }), { maxProperties: 16 })),
    temperature: nullable(Temperature),
    top_p: nullable(TopP),
    truncation: nullable(Type.Union([Type.Literal('auto'), Type.Literal('disabled')])),
    tools: Type.Optional(Type.Array(Tool)),
    tool_choice: Type.Optional(Type.Union([Type.Literal('none'), Type.Literal('auto'), Type.Literal('required'), Type.Object({ type: Type.String() }, OPEN)])),
    parallel_tool_calls: nullable(Type.Boolean()),
    previous_response_id: nullable(Type.String({ minLength: 1 })),
    max_output_tokens: nullable(Type.Integer({ minimum: 1 })),
    reasoning: nullable(Type.Object({ effort: nullable(Type.String()) }, OPEN)),
    text: nullable(Type.Object({ format: Type.Optional(Type.Object({ type: Type.String() }, OPEN)) }, OPEN)),
    user: Type.Optional(Type.String()),
    store: nullable(Type.Boolean()),
    stream: nullable(Type.Boolean()),
  },
  OPEN,
);

export type ResponsesBody = Static<typeof ResponsesBodySchema>;

export const responsesValidator: BodyValidator<typeof ResponsesBodySchema> = {
  check: TypeCompiler.Compile(ResponsesBodySchema),
  crossCheck(body): Violation | undefined {
    if (body.metadata) {
      for (const key of Object.keys(body.metadata)) {
        if (key.length > 64) return { param: 'metadata', reason: `key ${JSON.stringify(key.slice(0, 16))}… is longer than 64 characters` };
      }
    }
    for (const [i, tool] of (body.tools ?? []).entries()) {
      if (!KINDS.has(tool.type)) return { param: `tools[${i}].type`, reason: `must be one of ${RESPONSES_TOOL_KINDS.join(', ')}` };
      if (tool.type === 'function' && tool.name === undefined) return { param: `tools[${i}].name`, reason: 'is required for a function tool' };
      if (tool.type === 'file_search' && tool.vector_store_ids === undefined) return { param: `tools[${i}].vector_store_ids`, reason: 'is required for a file_search tool' };
    }
    if (Array.isArray(body.input) && body.input.length === 0 && !body.previous_response_id) return { param: 'input', reason: 'must not be empty' };
    if (body.input === undefined && !body.previous_response_id) return { param: 'input', reason: 'is required' };
    return undefined;
  },
};
