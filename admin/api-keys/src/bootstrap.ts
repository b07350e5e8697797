/**
 * The first key (INTERFACE.md, GATEWAY_ADMIN_API_KEY): an organisation-service key with every scope, made once, by
 * the process whose identity bootstrap created the organisation. Without GATEWAY_ADMIN_API_KEY the secret is
 * generated and printed once.
 */
import { ALL_SCOPES, type Database } from '@gateway/sdk';
import { generateSecret, hashSecret, prefixHint } from './secrets.ts';
import { apiKeys } from './tables.ts';

export interface BootstrapKeyOptions {
  /** GATEWAY_ADMIN_API_KEY: the bootstrap key's secret. Without it one is generated and printed once. */
  adminApiKey?: string;
  /** API_KEY_PREFIX, for a generated secret. */
  keyPrefix?: string;
  /** Where a generated secret is printed; stdout, the only place a secret may appear. */
  print?: (line: string) => void;
}

export async function bootstrapKey(database: Database, organisationId: string, options: BootstrapKeyOptions = {}): Promise<{ apiKeyId: string; generated: boolean }> {
  const generated = !options.adminApiKey;
  const prefix = options.keyPrefix ?? '';
  const secret = options.adminApiKey || generateSecret(prefix);
  const apiKeyId = crypto.randomUUID();
  await database.insert(apiKeys, {
    id: apiKeyId,
    organisation_id: organisationId,
    workspace_id: null,
    name: 'Bootstrap admin key',
    type: 'organisation-service',
    hash: hashSecret(secret),
    prefix_hint: prefixHint(secret, generated ? prefix : ''),
    scopes: [ALL_SCOPES],
  });
  if (generated) {
    const print = options.print ?? ((line: string) => void process.stdout.write(`${line}\n`));
    print(`Gateway admin API key (shown once, store it now): ${secret}`);
  }
  return { apiKeyId, generated };
}
