/**
 * Request bodies of the prompt routes (INTERFACE.md, "Prompts"): the fields a version is made of, checked whole (every
 * problem in one 400), and the version they make, from the body alone or, with `patch: true`, over the latest one.
 */
import { invalidBody, SLUG_PATTERN, validator } from '@gateway/admin-kit';
import type { Json, JsonObject } from '@gateway/sdk';
import { type Static, Type } from '@sinclair/typebox';
import { type PromptDefinition, type PromptTarget, type PromptTemplate, templateOfString, templateProblems } from './definition.ts';

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Slug = Type.String({ minLength: 1, maxLength: 64 });
const Ref = Type.String({ minLength: 1, maxLength: 255 });
const Obj = Type.Record(Type.String(), Type.Unknown());

/** The fields that make a version. */
const VersionFields = {
  string: Type.Optional(Type.String({ maxLength: 1_000_000 })),
  messages: Type.Optional(Type.Array(Obj, { minItems: 1, maxItems: 1000 })),
  parameters: Type.Optional(Obj),
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  virtual_key: Type.Optional(Ref),
  provider: Type.Optional(Ref),
  config: Type.Optional(Ref),
  metadata: Type.Optional(Obj),
  template_metadata: Type.Optional(Obj),
  tools: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 128 })),
  functions: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 128 })),
  tool_choice: Type.Optional(Type.Unknown()),
  version_description: Type.Optional(Type.String({ maxLength: 10_000 })),
};
export const VERSION_FIELDS = Object.keys(VersionFields) as (keyof typeof VersionFields)[];

export const checkCreate = validator(
  Type.Object(
    {
      name: Name,
      slug: Type.Optional(Slug),
      workspace_id: Type.Optional(Ref),
      collection_id: Type.Optional(Type.Union([Ref, Type.Null()])),
      ...VersionFields,
    },
    { additionalProperties: false },
  ),
);

export const checkUpdate = validator(
  Type.Object(
    {
      name: Type.Optional(Name),
      slug: Type.Optional(Slug),
      collection_id: Type.Optional(Type.Union([Ref, Type.Null()])),
      patch: Type.Optional(Type.Boolean()),
      ...VersionFields,
    },
    { additionalProperties: false },
  ),
);

export const checkMakeDefault = validator(Type.Object({ version: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }));

type VersionBody = { [K in keyof typeof VersionFields]?: Static<(typeof VersionFields)[K]> };

/** The body gives any field of a version (a PUT that does not only renames). */
export function givesVersion(body: VersionBody): boolean {
  return VERSION_FIELDS.some((key) => body[key] !== undefined);
}

function targetOf(body: VersionBody, problems: string[]): PromptTarget | undefined {
  const given = (['virtual_key', 'provider', 'config'] as const).filter((key) => body[key] !== undefined);
  if (given.length > 1) problems.push(`${given[1]}: give one of virtual_key, provider, config (not ${given.join(' and ')})`);
  const key = given[0];
  if (key === 'provider' && !(body.provider as string).startsWith('@'))
    problems.push('provider: a prompt calls a provider or integration stored for its workspace, named @<slug>');
  if (key === 'virtual_key') return { virtual_key: body.virtual_key as string };
  if (key === 'provider') return { provider: body.provider as string };
  if (key === 'config') return { config: body.config as string };
  return undefined;
}

/**
 * The version a body makes. Without `latest` (create, or a PUT without patch) the template and the target are
 * required and what the body leaves out is empty; with it (patch) they, the parameters, the model, the metadata,
 * tools, functions and tool_choice come from the latest version unless given. 400 listing every problem.
 */
export function definitionOf(body: VersionBody, latest: PromptDefinition | undefined): PromptDefinition {
  const problems: string[] = [];
  let template: PromptTemplate | undefined;
  let string: string | null = null;
  if (body.string !== undefined && body.messages !== undefined) problems.push('messages: give string or messages, not both');
  else if (body.messages !== undefined) template = { kind: 'chat', messages: body.messages as JsonObject[] };
  else if (body.string !== undefined) {
    template = templateOfString(body.string);
    string = body.string;
  } else if (latest) {
    template = latest.template;
    string = latest.string;
  } else problems.push('string: a template is required (string, or messages)');
  if (template) problems.push(...templateProblems(template, (name) => SLUG_PATTERN.test(name)));

  const target = targetOf(body, problems) ?? latest?.target;
  if (!target) problems.push('virtual_key: the prompt needs a target: virtual_key, provider (@slug) or config (a saved config id or slug)');

  const parameters: JsonObject = { ...((body.parameters as JsonObject | undefined) ?? latest?.parameters ?? {}) };
  const model = body.model ?? (body.parameters?.model as Json | undefined) ?? latest?.parameters.model;
  if (model !== undefined) parameters.model = model;
  for (const field of ['messages', 'prompt'] as const) if (parameters[field] !== undefined) problems.push(`parameters.${field}: the template makes it`);

  if (problems.length > 0) throw invalidBody(problems);
  const keep = <T>(given: T | undefined, old: T | null | undefined): T | null => (given !== undefined ? given : (old ?? null));
  return {
    template: template as PromptTemplate,
    string,
    parameters,
    target: target as PromptTarget,
    metadata: keep((body.metadata ?? body.template_metadata) as JsonObject | undefined, latest?.metadata),
    tools: keep(body.tools as Json | undefined, latest?.tools),
    functions: keep(body.functions as Json | undefined, latest?.functions),
    tool_choice: keep(body.tool_choice as Json | undefined, latest?.tool_choice),
  };
}
