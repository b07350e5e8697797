/**
 * The config fields the loaded plugins declare (config-fields.ts in the SDK), indexed for the administration side:
 * which an integration may hold, which are masked and sealed, which decide where a stored secret is sent and which
 * must be entered again when one of those changes. Built once when the gateway is ready (`declaredFields`), from the
 * `providerAdapters`, `guardrailChecks` and `pluginConfigFields` services; nothing here names a provider, a check or
 * a stage plugin's field.
 *
 * A stored secret is only ever sent where it was entered for, so
 * - an update that changes a destination field must carry the `clearedOnChange` values again (a masked placeholder,
 *   or leaving the value out, does not keep them), and
 * - a request that names a stored target (`@slug`, a virtual key) cannot override a destination field: the stored
 *   value wins (the server pins them, core/server resolve.ts).
 */
import { type ConfigFieldSet, type DeclaredConfigFields, type GuardrailCheck, type PluginApi, type ProviderAdapter, Services } from '@gateway/sdk';
import type { TSchema } from '@sinclair/typebox';

/** Every provider: which adapter builds the call, and the base URL that replaces its own. */
const EVERY_PROVIDER = ['provider', 'custom_host'] as const;

/** Keys whose value is a credential in any stored document, whatever plugin reads it (config targets, check parameters). */
const GENERIC_SECRET_KEYS = ['api_key', 'apiKey', 'Authorization', 'authorization', 'token', 'secret', 'password', 'client_secret', 'access_token'];

/** What stored documents (saved configs, saved guardrails) treat specially, by key wherever it appears. */
export interface DocumentFields {
  /** Keys whose value is a credential: sealed apart, masked in answers. */
  readonly secretKeys: ReadonlySet<string>;
  /** Keys that decide where the secrets of the object holding them (and of what inherits from it) are sent. */
  readonly destinations: ReadonlySet<string>;
  /** Secret keys whose stored value is not kept when a destination changes. */
  readonly clearedOnChange: ReadonlySet<string>;
}

export interface DeclaredFields {
  /** Every provider target field by name, in load order, with the schema its provider declares. */
  readonly providerFields: ReadonlyMap<string, TSchema>;
  /** Provider fields declared secret: masked when read back. */
  readonly secret: ReadonlySet<string>;
  /** Provider fields whose stored value an update must enter again when a destination field changes. */
  readonly clearedOnChange: ReadonlySet<string>;
  /** The fields that decide where a stored target of `provider` sends its credentials (`provider`, `custom_host` and its declared ones). */
  destinationFields(provider: string): readonly string[];
  readonly documents: DocumentFields;
}

/**
 * Indexes the declarations of the loaded providers, guardrail checks and other plugins' config fields (`stageFields`:
 * a stage plugin's fields sit in stored configs, not in integrations); call once (at ready), never per request.
 */
export function declaredFields(
  adapters: Iterable<ProviderAdapter>,
  checks: Iterable<GuardrailCheck> = [],
  stageFields: Iterable<DeclaredConfigFields> = [],
): DeclaredFields {
  const providerFields = new Map<string, TSchema>();
  const secret = new Set<string>();
  const cleared = new Set<string>();
  const byProvider = new Map<string, readonly string[]>();
  const documentDestinations = new Set<string>(EVERY_PROVIDER);
  const seen = new Set<ConfigFieldSet>();
  for (const adapter of adapters) {
    const set = adapter.targetFields;
    byProvider.set(adapter.id, Object.freeze([...EVERY_PROVIDER, ...(set?.destination ?? [])]));
    if (!set || seen.has(set)) continue;
    seen.add(set);
    for (const [name, schema] of Object.entries(set.fields)) if (!providerFields.has(name)) providerFields.set(name, schema);
    for (const name of set.secret ?? []) secret.add(name);
    for (const name of set.clearedOnChange ?? set.secret ?? []) cleared.add(name);
    for (const name of set.destination ?? []) documentDestinations.add(name);
  }
  // A check's parameters go to the service its destination parameters name; `id` names the check that sends them.
  for (const check of checks) for (const name of check.destination ?? []) documentDestinations.add(name);
  documentDestinations.add('id');
  // A stage plugin's secrets are sealed and masked in stored configs as a provider's are; its destinations count there.
  const stageSecret = new Set<string>();
  const stageCleared = new Set<string>();
  for (const { fields: set } of stageFields) {
    for (const name of set.secret ?? []) stageSecret.add(name);
    for (const name of set.clearedOnChange ?? set.secret ?? []) stageCleared.add(name);
    for (const name of set.destination ?? []) documentDestinations.add(name);
  }

  return {
    providerFields,
    secret,
    clearedOnChange: cleared,
    destinationFields: (provider) => byProvider.get(provider) ?? EVERY_PROVIDER,
    documents: {
      secretKeys: new Set([...GENERIC_SECRET_KEYS, ...secret, ...stageSecret]),
      destinations: documentDestinations,
      clearedOnChange: new Set([...GENERIC_SECRET_KEYS, ...cleared, ...stageCleared]),
    },
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The fields among `fields` whose value differs between two objects (a field added or removed counts). */
export function changedDestinations(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>, fields: Iterable<string>): string[] {
  const out: string[] = [];
  for (const field of fields) if (!same(before[field], after[field])) out.push(field);
  return out;
}

/**
 * What saved documents (configs, guardrail entries) need of every loaded plugin's declarations: their secrets and
 * destinations. Call it in a ready hook, once every plugin has declared its fields.
 */
export function loadedDocumentFields(api: Pick<PluginApi, 'service'>): DocumentFields {
  return declaredFields(
    api.service(Services.providerAdapters).values(),
    api.service(Services.guardrailChecks).values(),
    api.service(Services.pluginConfigFields),
  ).documents;
}
