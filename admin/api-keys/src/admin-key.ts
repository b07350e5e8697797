/**
 * A lost admin key replaced, on the database directly (no running gateway or key needed): `npm run admin --
 * create-key`, and GATEWAY_ADMIN_API_KEY set on a database that already has an organisation. Either way the new key
 * is an organisation-service key with every scope, stored hashed; the secret is shown once, by the caller.
 */
import { organisations } from '@gateway/admin-identity';
import { ALL_SCOPES, asc, type Database, eq, or } from '@gateway/sdk';
import { generateSecret, hashSecret, prefixHint } from './secrets.ts';
import { apiKeys } from './tables.ts';

export interface AdminKeyTarget {
  id: string;
  slug: string;
}

/** The organisation named by slug, or the first one (the one the first start made). */
export async function findOrganisation(database: Database, slug?: string): Promise<AdminKeyTarget | undefined> {
  if (slug) return database.findOne(organisations, 'slug', slug, { fresh: true });
  const [first] = await database.select(organisations, { orderBy: (c) => asc(c.created_at), limit: 1 });
  return first;
}

export interface CreatedAdminKey {
  apiKeyId: string;
  secret: string;
  organisation: AdminKeyTarget;
}

/** Stores a new organisation-service key with every scope; a generated secret (with `keyPrefix`) unless one is given. */
export async function createAdminKey(
  database: Database,
  organisation: AdminKeyTarget,
  options: { secret?: string; keyPrefix?: string; name?: string } = {},
): Promise<CreatedAdminKey> {
  const prefix = options.secret ? '' : (options.keyPrefix ?? '');
  const secret = options.secret ?? generateSecret(prefix);
  const apiKeyId = crypto.randomUUID();
  await database.insert(
    apiKeys,
    {
      id: apiKeyId,
      organisation_id: organisation.id,
      workspace_id: null,
      name: options.name ?? 'Admin key (created by npm run admin -- create-key)',
      type: 'organisation-service',
      hash: hashSecret(secret),
      prefix_hint: prefixHint(secret, prefix),
      scopes: [ALL_SCOPES],
    },
    // Processes starting together with the same GATEWAY_ADMIN_API_KEY: the first insert wins, the others find it.
    { ignoreDuplicates: options.secret !== undefined },
  );
  return { apiKeyId, secret, organisation };
}

export type AdminKeyFromEnv =
  | { applied: 'already'; apiKeyId: string }
  | { applied: 'added'; apiKeyId: string; organisation: AdminKeyTarget }
  | { applied: false; reason: string };

/**
 * GATEWAY_ADMIN_API_KEY on a database that already has an organisation. An active key with that secret: nothing to
 * do. A secret the database does not know: added as a new admin key of the first organisation, so that setting the
 * variable and restarting recovers a lost key. A secret that was revoked, expired or rotated away is not brought
 * back: that would undo a deliberate decision, so the caller says why, loudly.
 */
export async function applyAdminKeyFromEnv(database: Database, secret: string, now = Date.now()): Promise<AdminKeyFromEnv> {
  const hash = hashSecret(secret);
  const rows = await database.select(apiKeys, { where: (c) => or(eq(c.hash, hash), eq(c.previous_hash, hash)), limit: 2, fresh: true });
  const current = rows.find((r) => r.hash === hash);
  if (current) {
    if (current.status !== 'active') return { applied: false, reason: `it is the secret of API key ${current.id}, which was revoked` };
    if (current.expires_at !== null && Number(current.expires_at) <= now)
      return { applied: false, reason: `it is the secret of API key ${current.id}, which expired` };
    return { applied: 'already', apiKeyId: current.id };
  }
  const rotated = rows.find((r) => r.previous_hash === hash);
  if (rotated) return { applied: false, reason: `it is a former secret of API key ${rotated.id}, which was rotated` };
  const organisation = await findOrganisation(database);
  if (!organisation) return { applied: false, reason: 'the database has no organisation to add it to' };
  const created = await createAdminKey(database, organisation, { secret, name: 'Admin key (from GATEWAY_ADMIN_API_KEY)' });
  return { applied: 'added', apiKeyId: created.apiKeyId, organisation };
}
