/**
 * Values sealed before they were bound to their row (`v1:`, see crypto.ts) are rewritten bound at start, by the
 * plugin that owns the table, so that none stays movable between rows. Idempotent: only `v1:` values are read, and
 * each is replaced only if it is still the value read (a concurrent write wins). A process still running older code
 * may write `v1:` values again during a rolling upgrade; they open as before and are bound at the next start.
 */
import { and, type ColumnMap, type Database, eq, type Logger, sql, type TableDefBase } from '@gateway/sdk';
import { type SealedAt, type SecretBox, UNBOUND_PREFIX } from './crypto.ts';

/** A table whose rows have an `id`, and the columns of it that hold sealed values (text, nullable or not). */
export interface SealedColumns<C extends ColumnMap> {
  table: TableDefBase<C>;
  fields: readonly (keyof C & string)[];
}

/**
 * Rebinds every unbound value of `fields` in one transaction; resolves to how many were rewritten (0 when the
 * transaction failed: logged, and tried again at the next start). A value that does
 * not open (another GATEWAY_ENCRYPTION_KEY) is left as it is and logged without its content. The box is asked for
 * only when some value needs it (a MySQL deployment with no secrets needs no key).
 */
export async function rebindSealed<C extends ColumnMap>(
  database: Database,
  sealed: SealedColumns<C>,
  box: () => SecretBox,
  logger?: Logger,
): Promise<number> {
  const { table, fields } = sealed;
  let rewritten = 0;
  const rebind = database.transaction(async (tx) => {
    for (const field of fields) {
      const rows = await tx.select(table, { where: (c) => sql`${c[field]} LIKE ${`${UNBOUND_PREFIX}%`}` });
      for (const row of rows as Record<string, unknown>[]) {
        const old = row[field];
        const id = row.id;
        if (typeof old !== 'string' || typeof id !== 'string') continue;
        const at: SealedAt = { table: table.name, id, field };
        let bound: string;
        try {
          bound = box().seal(box().open(old, at), at);
        } catch {
          logger?.error({ table: table.name, id, field }, 'a stored secret cannot be decrypted to bind it to its row: was GATEWAY_ENCRYPTION_KEY changed?');
          continue;
        }
        const values = { [field]: bound } as Parameters<typeof tx.update<C>>[1];
        const columns = table as TableDefBase<C>;
        rewritten += await tx.update(columns, values, (c) => and(eq(c.id as never, id), eq(c[field], old)));
      }
    }
  });
  try {
    await rebind;
  } catch (error) {
    // Not a reason to refuse to start: the values still open, and the next start tries again.
    logger?.warn({ err: error, table: table.name }, 'stored secrets could not be bound to their rows now; they still open, and the next start tries again');
    return 0;
  }
  if (rewritten > 0) logger?.info({ table: table.name, rewritten }, 'stored secrets bound to their rows');
  return rewritten;
}
