/** Services between the saved-guardrail and saved-config plugins (tokens and shapes). */
import { defineService } from '@gateway/sdk';
import type { SavedGuardrailStore } from './store.ts';

/**
 * The resolver the server reads is `Services.savedGuardrails` (SDK). Each plugin works without the other: look these
 * up with `api.optional(...)` in `onReady`.
 */
export const GuardrailServices = {
  /** Lookups by id or slug for a workspace (saved configs). */
  store: defineService<SavedGuardrailStore>('savedGuardrailStore'),
  /** Which saved configs use a guardrail: provided by the saved-config plugin. */
  references: defineService<GuardrailReferences>('guardrailReferences'),
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
