/** What every route of this plugin shares: the database, the secret box, the in-memory set, other plugins' services. */
import type { SecretBox, SecretResolver, SecuritySettingsService, StoredSnapshot } from '@gateway/admin-kit';
import type { Database, Logger, PluginApi } from '@gateway/sdk';
import type { StoredSet } from './stored-set.ts';

/** The loaded providers' ids. */
export type ProviderIds = { has(id: string): boolean };

export interface Ctx {
  database: Database;
  box: SecretBox;
  snapshot: StoredSnapshot<StoredSet>;
  logger: Logger;
  /** Service `secretReferences`, when its plugin is loaded. */
  secrets(): SecretResolver | undefined;
  /** Service `securitySettings`, when its plugin is loaded. */
  security(): SecuritySettingsService | undefined;
  /** Ids of the loaded providers (service `providerAdapters`); undefined when the server does not offer them. */
  providerIds(): ProviderIds | undefined;
}

/** A service looked up when first needed (plugins load in order; a later one may provide it). */
export function lazyService<T>(api: PluginApi, name: string): () => T | undefined {
  let found: T | undefined;
  return () => {
    if (found !== undefined) return found;
    try {
      found = api.service<T>(name);
    } catch {
      return undefined;
    }
    return found;
  };
}
