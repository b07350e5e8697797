/** What every route of this plugin shares: the database, the secret box, the in-memory set, other plugins' services. */
import type { LimitServices, SecretBox, SecretResolver, SecuritySettingsService, StoredSnapshot } from '@gateway/admin-kit';
import type { Database, Logger } from '@gateway/sdk';
import type { IntegrationFields } from './credentials.ts';
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
  /** Services `usageLimits` and `rateLimits` while their limits are on: the limits of virtual keys and workspace access. */
  limits(): LimitServices;
  /** Ids of the loaded providers (service `providerAdapters`); undefined when the server does not offer them. */
  providerIds(): ProviderIds | undefined;
  /** What the loaded providers declare (their target fields), known once the gateway is ready. */
  fields(): IntegrationFields;
  /** Runs `fn` once the fields are known (before the server accepts requests): where routes compile their bodies. */
  whenReady(fn: (fields: IntegrationFields) => void): void;
}

/** Stands for a body check until the gateway is ready (no route is called before). */
export function notReady(): never {
  throw new Error('integrations: a route was called before the gateway was ready');
}
