/**
 * Replaces a parent's child rows (workspace access, skills, user access) by a new set: only the rows that go are
 * deleted, by primary key, and only the new ones inserted. Deleting by the parent's index range instead takes gap
 * locks in InnoDB, and concurrent replacements of different parents' sets then deadlock each other.
 */
import type { Database, TransactionHelpers } from '@gateway/sdk';

export async function replaceChildren<R extends { id: string }, W>(
  database: Database,
  current: readonly R[],
  wanted: readonly W[],
  same: (row: R, want: W) => boolean,
  remove: (tx: TransactionHelpers, ids: string[]) => Promise<unknown>,
  insert: (tx: TransactionHelpers, want: W) => Promise<unknown>,
): Promise<void> {
  const gone = current.filter((r) => !wanted.some((w) => same(r, w))).map((r) => r.id);
  const added = wanted.filter((w) => !current.some((r) => same(r, w)));
  if (gone.length === 0 && added.length === 0) return;
  await database.transaction(async (tx) => {
    if (gone.length > 0) await remove(tx, gone);
    for (const want of added) await insert(tx, want);
  });
}
