/**
 * Service `guardrailReferences`: the saved configs whose current version names a guardrail, read from the database
 * (not the snapshot) so that a config saved a moment ago by another process counts. The guardrail plugin refuses to
 * delete a guardrail in use, or to change a slug that configs use, so a saved config never loses its guardrails.
 */
import type { GuardrailReference, GuardrailReferences, SavedGuardrailStore } from '@gateway/admin-guardrails';
import { and, type Database, eq } from '@gateway/sdk';
import { stringEntries } from './refs.ts';
import { savedConfigs } from './tables.ts';

export function guardrailReferences(database: Database, guardrails: () => SavedGuardrailStore | undefined): GuardrailReferences {
  return {
    async referencing(g) {
      const rows = await database.select(savedConfigs, {
        // A workspace guardrail is visible to its own workspace's configs only.
        where: (c) => (g.workspaceId === null ? eq(c.organisation_id, g.organisationId) : and(eq(c.organisation_id, g.organisationId), eq(c.workspace_id, g.workspaceId))),
        fresh: true,
      });
      const out: GuardrailReference[] = [];
      const store = guardrails();
      for (const row of rows) {
        const seen = new Set<GuardrailReference['by']>();
        for (const { ref } of stringEntries(row.config)) {
          let by: GuardrailReference['by'] | undefined;
          if (ref === g.id) by = 'id';
          // By slug only where the slug finds this guardrail (a workspace's own guardrail shadows the organisation's).
          else if (ref === g.slug && (!store || store.find(row.organisation_id, row.workspace_id, ref)?.id === g.id)) by = 'slug';
          if (by && !seen.has(by)) {
            seen.add(by);
            out.push({ id: row.id, name: row.name, workspace_id: row.workspace_id, by });
          }
        }
      }
      return out;
    },
  };
}
