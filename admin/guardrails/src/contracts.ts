/** Services between the saved-guardrail and saved-config plugins (names and shapes). */

export const SERVICES = {
  /** SavedGuardrailResolver: an entry by id (the hook engine, config validation). Read by the server. */
  resolver: 'savedGuardrails',
  /** SavedGuardrailStore: lookups by id or slug for a workspace (saved configs). */
  store: 'savedGuardrailStore',
  /** GuardrailReferences: provided by the saved-config plugin. */
  references: 'guardrailReferences',
} as const;

/** A saved config whose current version names a guardrail. */
export interface GuardrailReference {
  id: string;
  name: string;
  workspace_id: string;
  /** How the config names it: by the guardrail's id, or by its slug. */
  by: 'id' | 'slug';
}

/** Service `guardrailReferences`: which saved configs use a guardrail (a delete or a slug change would break them). */
export interface GuardrailReferences {
  referencing(guardrail: { id: string; organisationId: string; workspaceId: string | null; slug: string }): Promise<GuardrailReference[]>;
}
