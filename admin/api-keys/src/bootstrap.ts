/**
 * The first key (INTERFACE.md, GATEWAY_ADMIN_API_KEY): an organisation-service key with every scope, made once, by
 * the process whose identity bootstrap created the organisation. Without GATEWAY_ADMIN_API_KEY the secret is
 * generated and printed once, with the next steps (first-run.ts).
 */
import { ALL_SCOPES, type Database } from '@gateway/sdk';
import { firstRunBanner } from './first-run.ts';
import { generateSecret, hashSecret, prefixHint } from './secrets.ts';
import { apiKeys } from './tables.ts';

export interface BootstrapKeyOptions {
  /** GATEWAY_ADMIN_API_KEY: the bootstrap key's secret. Without it one is generated and printed once. */
  adminApiKey?: string;
  /** API_KEY_PREFIX, for a generated secret. */
  keyPrefix?: string;
  /** Where the first-run text is printed; stdout, the only place a secret may appear. */
  print?: (text: string) => void;
  /** The gateway's address for the first call the first-run text shows. */
  baseUrl?: string;
  /** Print nothing unless the secret was generated (LOG_LEVEL=silent: test gateways, scripted starts). */
  quiet?: boolean;
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
  // Plain text, apart from the log lines: the key and the next steps must be readable on the first start.
  const print = options.print ?? ((text: string) => void process.stdout.write(`${text}\n`));
  if (!generated && options.quiet) return { apiKeyId, generated };
  print(firstRunBanner({ secret: generated ? secret : undefined, baseUrl: options.baseUrl ?? 'http://localhost:8787' }));
  return { apiKeyId, generated };
}
