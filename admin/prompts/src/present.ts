/** Prompts and partials as the API answers them: times in ISO 8601, the version's fields as a client sent them. */
import { iso } from '@gateway/admin-kit';
import type { JsonObject, Row } from '@gateway/sdk';
import type { PromptDefinition } from './definition.ts';
import type { promptPartials, promptPartialVersions, prompts, promptVersions } from './tables.ts';

export type PromptRow = Row<typeof prompts>;
export type PromptVersionRow = Row<typeof promptVersions>;
export type PartialRow = Row<typeof promptPartials>;
export type PartialVersionRow = Row<typeof promptPartialVersions>;

/** A version's fields in the request's terms: `string` or `messages`, the model, the target's own field. */
export function versionFields(definition: PromptDefinition): JsonObject {
  const t = definition.template;
  return {
    template_format: 'mustache',
    kind: t.kind,
    ...(definition.string !== null ? { string: definition.string } : {}),
    ...(t.kind === 'chat' ? { messages: t.messages } : definition.string === null ? { string: t.text } : {}),
    model: definition.parameters.model ?? null,
    parameters: definition.parameters,
    virtual_key: null,
    provider: null,
    config: null,
    ...definition.target,
    template_metadata: definition.metadata,
    tools: definition.tools,
    functions: definition.functions,
    tool_choice: definition.tool_choice,
  };
}

function createdBy(row: { created_by_key: string | null; created_by_user: string | null }) {
  return { api_key_id: row.created_by_key, user_id: row.created_by_user };
}

export function presentPrompt(row: PromptRow, version: PromptVersionRow) {
  return {
    object: 'prompt' as const,
    id: row.id,
    slug: row.slug,
    name: row.name,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    collection_id: row.collection_id,
    latest_version: row.version,
    published_version: row.published_version,
    version: version.version,
    version_id: version.id,
    version_description: version.description,
    ...versionFields(version.definition as PromptDefinition),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** A list row: the prompt without its template. */
export function presentPromptSummary(row: PromptRow) {
  return {
    object: 'prompt' as const,
    id: row.id,
    slug: row.slug,
    name: row.name,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    collection_id: row.collection_id,
    latest_version: row.version,
    published_version: row.published_version,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function presentPromptVersion(row: PromptVersionRow, published: number) {
  return {
    object: 'prompt_version' as const,
    id: row.id,
    prompt_id: row.prompt_id,
    version: row.version,
    is_published: row.version === published,
    version_description: row.description,
    ...versionFields(row.definition as PromptDefinition),
    created_at: iso(row.created_at),
    created_by: createdBy(row),
  };
}

export function presentPartial(row: PartialRow, version: PartialVersionRow) {
  return {
    object: 'prompt_partial' as const,
    id: row.id,
    slug: row.slug,
    name: row.name,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    latest_version: row.version,
    published_version: row.published_version,
    version: version.version,
    version_id: version.id,
    version_description: version.description,
    string: version.content,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function presentPartialSummary(row: PartialRow) {
  return {
    object: 'prompt_partial' as const,
    id: row.id,
    slug: row.slug,
    name: row.name,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    latest_version: row.version,
    published_version: row.published_version,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function presentPartialVersion(row: PartialVersionRow, published: number) {
  return {
    object: 'prompt_partial_version' as const,
    id: row.id,
    partial_id: row.partial_id,
    version: row.version,
    is_published: row.version === published,
    version_description: row.description,
    string: row.content,
    created_at: iso(row.created_at),
    created_by: createdBy(row),
  };
}
