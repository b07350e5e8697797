/**
 * The by-id and by-slug index of a stored set of versioned rows (saved configs, saved guardrails), rebuilt at each
 * load. A row unchanged since the last load keeps its entry, so what was built from it keeps its identity; when no
 * row changed the previous index itself comes back, which StoredSnapshot's onReload reads as "nothing changed".
 */

export interface StoredIndex<E> {
  readonly byId: ReadonlyMap<string, E>;
  readonly bySlug: ReadonlyMap<string, E>;
}

/** What tells whether a row changed since its entry was built. */
export interface Stamped {
  readonly stamp: string;
}

export interface VersionedRow {
  id: string;
  slug: string;
  version: number;
  updated_at: number;
}

export function reindex<R extends VersionedRow, E extends Stamped>(
  rows: readonly R[],
  previous: StoredIndex<E> | undefined,
  /** The by-slug key (the slug within its scope), and the entry of a new or changed row. */
  rules: { slugKey: (row: R) => string; build: (row: R, stamp: string) => E },
): StoredIndex<E> {
  const byId = new Map<string, E>();
  const bySlug = new Map<string, E>();
  let changed = previous === undefined || previous.byId.size !== rows.length;
  for (const row of rows) {
    const stamp = `${row.version}\n${row.updated_at}\n${row.slug}`;
    let entry = previous?.byId.get(row.id);
    if (!entry || entry.stamp !== stamp) {
      changed = true;
      entry = rules.build(row, stamp);
    }
    byId.set(row.id, entry);
    bySlug.set(rules.slugKey(row), entry);
  }
  return !changed && previous ? previous : { byId, bySlug };
}
