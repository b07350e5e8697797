import { col, defineTable, type JsonObject, type Migration } from '@gateway/sdk';
import type { PromptDefinition } from './definition.ts';

/**
 * A prompt: its name and slug, and which of its versions is published. The hot path loads this table whole (a
 * reference names a prompt by id or slug); versions never change once written, so they are read once and cached.
 */
export const prompts = defineTable(
  'prompts',
  {
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    name: col.string(255),
    /** Unique per workspace; a reference may use it (looked up in the caller's workspace). */
    slug: col.string(64),
    collection_id: col.string(255).nullable(),
    /** The newest version's number. */
    version: col.int().default(1),
    /** The version used when a reference names no version. */
    published_version: col.int().default(1),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['workspace_id', 'slug'], unique: true }, { columns: ['organisation_id'] }] },
);

/** Every version of every prompt; never updated. */
export const promptVersions = defineTable(
  'prompt_versions',
  {
    id: col.id(),
    prompt_id: col.ref(),
    organisation_id: col.ref(),
    version: col.int(),
    definition: col.json<PromptDefinition & JsonObject>(),
    description: col.text().nullable(),
    created_by_key: col.ref().nullable(),
    created_by_user: col.ref().nullable(),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['prompt_id', 'version'], unique: true }] },
);

/** A partial: a template included by `{{> slug}}` in the prompts of its workspace. */
export const promptPartials = defineTable(
  'prompt_partials',
  {
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    name: col.string(255),
    /** What `{{> …}}` names; unique per workspace. */
    slug: col.string(64),
    version: col.int().default(1),
    published_version: col.int().default(1),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['workspace_id', 'slug'], unique: true }, { columns: ['organisation_id'] }] },
);

export const promptPartialVersions = defineTable(
  'prompt_partial_versions',
  {
    id: col.id(),
    partial_id: col.ref(),
    organisation_id: col.ref(),
    version: col.int(),
    content: col.text(),
    description: col.text().nullable(),
    created_by_key: col.ref().nullable(),
    created_by_user: col.ref().nullable(),
    created_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['partial_id', 'version'], unique: true }] },
);

export const promptMigrations: Migration[] = [{ id: 'prompts/0001-prompts', tables: [prompts, promptVersions, promptPartials, promptPartialVersions] }];
