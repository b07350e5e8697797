/**
 * First start on an empty database (INTERFACE.md, GATEWAY_ADMIN_API_KEY): the first organisation and a default
 * workspace; the api-keys plugin adds the organisation-service key. Several processes may start at once: the one
 * whose insert of the organisation (unique slug) succeeds creates the rest; the others find it and stop.
 */
import type { Database } from '@gateway/sdk';
import { organisations, workspaces } from './tables.ts';

export type BootstrapResult = { created: false } | { created: true; organisationId: string; workspaceId: string };

export const BOOTSTRAP_SLUG = 'default';

export async function bootstrapOrganisation(database: Database): Promise<BootstrapResult> {
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
  return { created: true, organisationId, workspaceId };
}
