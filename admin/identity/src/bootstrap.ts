/**
 * First start on an empty database (INTERFACE.md, GATEWAY_ADMIN_API_KEY): the first organisation, a default
 * workspace, and an organisation-service key with every scope. Several processes may start at once: the one whose
 * insert of the organisation (unique slug) succeeds creates the rest; the others find it and stop.
 */
import type { Database } from '@gateway/sdk';
import { generateSecret, hashSecret, prefixHint } from './secrets.ts';
import { ALL_SCOPES, apiKeys, organisations, workspaces } from './tables.ts';

export interface BootstrapOptions {
  /** GATEWAY_ADMIN_API_KEY: the bootstrap key's secret. Without it one is generated and printed once. */
  adminApiKey?: string;
  /** API_KEY_PREFIX, for a generated secret. */
  keyPrefix?: string;
  /** Where a generated secret is printed; stdout, the only place a secret may appear. */
  print?: (line: string) => void;
}

export type BootstrapResult =
  | { created: false }
  | { created: true; organisationId: string; workspaceId: string; apiKeyId: string; generated: boolean };

export const BOOTSTRAP_SLUG = 'default';

export async function bootstrap(database: Database, options: BootstrapOptions = {}): Promise<BootstrapResult> {
  if ((await database.count(organisations, undefined, { fresh: true })) > 0) return { created: false };

  const organisationId = crypto.randomUUID();
  const won = await database.insert(
    organisations,
    { id: organisationId, name: 'Default organisation', slug: BOOTSTRAP_SLUG },
    { ignoreDuplicates: true },
  );
  if (won === 0) return { created: false };

  const workspaceId = crypto.randomUUID();
  await database.insert(workspaces, { id: workspaceId, organisation_id: organisationId, name: 'Default workspace', slug: BOOTSTRAP_SLUG });

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
  return { created: true, organisationId, workspaceId, apiKeyId, generated };
}
