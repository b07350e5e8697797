/** A saved guardrail as the API answers it: secrets masked (they are stored masked), times in ISO 8601. */
import { iso } from '@gateway/admin-kit';
import type { Json, Row } from '@gateway/sdk';
import type { savedGuardrails } from './tables.ts';

export type GuardrailRow = Row<typeof savedGuardrails>;

export interface GuardrailView {
  object: 'guardrail';
  id: string;
  name: string;
  slug: string;
  organisation_id: string;
  workspace_id: string | null;
  entry: Json;
  version: number;
  created_at: string | null;
  updated_at: string | null;
}

export function presentGuardrail(row: GuardrailRow): GuardrailView {
  return {
    object: 'guardrail',
    id: row.id,
    name: row.name,
    slug: row.slug,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    entry: row.entry,
    version: row.version,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
