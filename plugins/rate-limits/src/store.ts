/**
 * The active policies in memory, compiled and indexed once per change (the stage reads them with no I/O): reloaded
 * here after a write and in every other process through the state store's change channel (admin-kit's
 * StoredSnapshot), as saved configs are.
 */
import { StoredSnapshot } from '@gateway/admin-kit';
import { compileMatcher, type Indexed, type LimitUnit, PolicyIndex } from '@gateway/policy-kit';
import { type Database, eq, type Logger, type Row, type StateStore } from '@gateway/sdk';
import { rateLimitPolicies } from './table.ts';

export type PolicyRow = Row<typeof rateLimitPolicies>;

/** What the stage needs of a policy. */
export interface ActivePolicy {
  readonly id: string;
  readonly type: 'requests' | 'tokens';
  readonly unit: LimitUnit;
  readonly value: number;
}

export function indexPolicies(rows: readonly PolicyRow[]): PolicyIndex<ActivePolicy> {
  return new PolicyIndex(
    rows.map((row): Indexed<ActivePolicy> => ({
      policy: { id: row.id, type: row.type, unit: row.unit, value: row.value },
      organisationId: row.organisation_id,
      workspaceId: row.workspace_id,
      matcher: compileMatcher(row.conditions, row.group_by),
    })),
  );
}

export class PolicyStore {
  private readonly snapshot: StoredSnapshot<PolicyIndex<ActivePolicy>>;

  constructor(database: Database, state: StateStore, logger: Logger) {
    this.snapshot = new StoredSnapshot({
      name: 'rate-limit-policies',
      state,
      logger,
      load: async () => indexPolicies(await database.select(rateLimitPolicies, { where: (c) => eq(c.status, 'active'), fresh: true })),
    });
  }

  get index(): PolicyIndex<ActivePolicy> {
    return this.snapshot.current;
  }

  start(): Promise<void> {
    return this.snapshot.start();
  }

  /** After a write: reload here, then in the other processes. */
  changed(): Promise<void> {
    return this.snapshot.changed();
  }

  stop(): void {
    this.snapshot.stop();
  }
}
