import { col, defineTable } from '@gateway/sdk';

/**
 * A workspace's model aliases (docs/clients.md): a name a client may send as `model`, standing for a saved config
 * (`config_id`) or for a stored provider and model (`provider` `@<slug>`, `model`). Exactly one of the two targets.
 */
export const modelAliases = defineTable(
  'model_aliases',
  {
    id: col.id(),
    organisation_id: col.ref(),
    workspace_id: col.ref(),
    /** What clients send as `model`; unique per workspace; never starts with `@` (that form names a provider). */
    alias: col.string(128),
    config_id: col.ref().nullable(),
    /** `@<provider slug>`. */
    provider: col.string(128).nullable(),
    /** The model sent upstream: required with `provider`; with `config_id`, replaces the client's model when set. */
    model: col.string(255).nullable(),
    created_at: col.timestamp().default(Date.now),
    updated_at: col.timestamp().default(Date.now),
  },
  { indexes: [{ columns: ['workspace_id', 'alias'], unique: true }, { columns: ['config_id'] }] },
);
