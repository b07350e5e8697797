/**
 * The workspace and slug of virtual keys, for the limits set on them (a request names a virtual key by its slug or
 * its id). Empty when the table cannot be read (this plugin not loaded): such limits then apply when named by id.
 */
import { type Database, inArray, type Logger } from '@gateway/sdk';
import { virtualKeys } from './tables.ts';

export async function virtualKeySlugs(database: Database, ids: readonly string[], logger: Logger): Promise<Map<string, { workspaceId: string; slug: string }>> {
  const out = new Map<string, { workspaceId: string; slug: string }>();
  if (ids.length === 0) return out;
  try {
    for (const vk of await database.select(virtualKeys, { where: (c) => inArray(c.id, [...ids]), fresh: true })) out.set(vk.id, { workspaceId: vk.workspace_id, slug: vk.slug });
  } catch (error) {
    logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'limits: virtual keys cannot be read; their limits apply when named by id only');
  }
  return out;
}
