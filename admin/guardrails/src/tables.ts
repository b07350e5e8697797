import type { SealedAt } from '@gateway/admin-kit';
import { col, defineTable, type JsonObject, type Migration } from '@gateway/sdk';

/** Organisation-wide guardrails have no workspace; `scope` makes their slugs unique among themselves too. */
export const ORGANISATION_SCOPE = 'organisation';

export const savedGuardrails = defineTable(
  'saved_guardrails',
  {
    /** A random UUID: configs sent as headers name guardrails by id (see docs/admin/guardrails.md). */
    id: col.id(),
    organisation_id: col.ref(),
    /** Null: organisation-wide (usable by every workspace of the organisation). */
    workspace_id: col.ref().nullable(),
    /** The workspace id, or `organisation`: the slug is unique per scope. */
    scope: col.string(36),
    name: col.string(255),
    slug: col.string(64),
    /** The guardrail entry (policy and checks), secrets replaced by the mask. */
    entry: col.json<JsonObject>(),
    /** The secrets of the entry, sealed (SecretBox); null when it has none. */
    secrets: col.text().nullable(),
    version: col.int().default(1),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['organisation_id', 'scope', 'slug'], unique: true }, { columns: ['workspace_id'] }] },
);

export const guardrailMigrations: Migration[] = [{ id: 'guardrails/0001-saved-guardrails', tables: [savedGuardrails] }];

/** Where a guardrail's sealed secrets are bound (crypto.ts): they open only in the row and column they were sealed for. */
export const guardrailSecretsAt = (id: string): SealedAt => ({ table: savedGuardrails.name, id, field: 'secrets' });
