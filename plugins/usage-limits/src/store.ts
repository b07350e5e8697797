/**
 * The active usage limits in memory, compiled and indexed once per change so the stage finds a call's limits with
 * Map lookups and no I/O: the policies by workspace and organisation (policy-kit's PolicyIndex), the others by the
 * API key, virtual key or integration workspace they are set on. Reloaded here after a write and in every other
 * process through the state store's change channel (admin-kit's StoredSnapshot), as saved configs are.
 */
import { StoredSnapshot } from '@gateway/admin-kit';
import { virtualKeySlugs } from '@gateway/admin-integrations';
import { compileMatcher, type Indexed, type PolicyGroupBy, PolicyIndex, SubjectIndex, type VirtualKeySlugs } from '@gateway/policy-kit';
import { type Database, eq, type Logger, type StateStore } from '@gateway/sdk';
import type { LimitType } from './input.ts';
import type { Period, ResetRule } from './period.ts';
import { type SubjectKind, type UsageLimitRow, usageLimits } from './table.ts';

/** Cost limits are set in US dollars; their counters hold US cents, as COST_FIGURE does. */
export const CENTS_PER_DOLLAR = 100;

/** What the stage and the alerts need of a limit. Amounts in counter units (cents for cost, tokens). */
export interface ActiveLimit {
  readonly id: string;
  readonly kind: SubjectKind;
  readonly name: string;
  /** How a refusal names it: `policy <id>`, `api_key <id>`, `virtual_key <id>`, `integration <id> in workspace <id>`. */
  readonly label: string;
  readonly type: LimitType;
  readonly limit: number;
  readonly threshold: number | null;
  readonly rule: ResetRule;
  readonly stored: Period;
  readonly alertEpoch: number;
  readonly thresholdEpoch: number;
  readonly organisationId: string;
  readonly workspaceId: string | null;
  readonly subjectId: string | null;
  readonly groupBy: readonly PolicyGroupBy[];
}

export type LimitEntry = Indexed<ActiveLimit>;

export interface LimitIndex {
  readonly size: number;
  /** Every active limit once. */
  readonly all: readonly LimitEntry[];
  readonly policies: PolicyIndex<ActiveLimit>;
  /** The limits of API keys, virtual keys and integration workspaces. */
  readonly subjects: SubjectIndex<LimitEntry>;
}

/** The amount of a limit in its counter's units. */
export const unitsOf = (type: LimitType, amount: number): number => (type === 'cost' ? amount * CENTS_PER_DOLLAR : amount);
/** A counter's value in the limit's own unit (US dollars for cost). */
export const amountOf = (type: LimitType, units: number): number => (type === 'cost' ? Math.round((units / CENTS_PER_DOLLAR) * 1e6) / 1e6 : units);

export function labelOf(row: UsageLimitRow): string {
  if (row.kind === 'policy') return `policy ${row.id}`;
  if (row.kind === 'integration_workspace') return `integration ${row.subject_id} in workspace ${row.workspace_id}`;
  return `${row.kind} ${row.subject_id}`;
}

export function activeLimit(row: UsageLimitRow): ActiveLimit {
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    label: labelOf(row),
    type: row.type,
    limit: unitsOf(row.type, row.credit_limit),
    threshold: row.alert_threshold === null ? null : unitsOf(row.type, row.alert_threshold),
    rule: { periodic_reset: row.periodic_reset, periodic_reset_days: row.periodic_reset_days },
    stored: { start: row.period_start, end: row.next_usage_reset_at },
    alertEpoch: row.alert_epoch,
    thresholdEpoch: row.threshold_epoch,
    organisationId: row.organisation_id,
    workspaceId: row.workspace_id,
    subjectId: row.subject_id,
    groupBy: row.group_by,
  };
}

const NO_GROUPS = compileMatcher([], []);

export function indexLimits(rows: readonly UsageLimitRow[], slugs: VirtualKeySlugs): LimitIndex {
  const policies: LimitEntry[] = [];
  const all: LimitEntry[] = [];
  const subjects = new SubjectIndex<LimitEntry>();
  for (const row of rows) {
    const policy = activeLimit(row);
    if (row.kind === 'policy') {
      const entry: LimitEntry = { policy, organisationId: row.organisation_id, workspaceId: row.workspace_id, matcher: compileMatcher(row.conditions, row.group_by) };
      policies.push(entry);
      all.push(entry);
      continue;
    }
    const entry: LimitEntry = { policy, organisationId: row.organisation_id, workspaceId: row.workspace_id, matcher: NO_GROUPS };
    all.push(entry);
    subjects.add({ kind: row.kind, organisationId: row.organisation_id, subjectId: row.subject_id ?? '', workspaceId: row.workspace_id }, entry, slugs);
  }
  return { size: rows.length, all, policies: new PolicyIndex(policies), subjects };
}

/** The ids of the virtual keys that carry a limit. */
const virtualKeyIds = (rows: readonly UsageLimitRow[]) => rows.filter((r) => r.kind === 'virtual_key' && r.subject_id).map((r) => r.subject_id as string);

export class LimitStore {
  private readonly snapshot: StoredSnapshot<LimitIndex>;

  constructor(database: Database, state: StateStore, logger: Logger) {
    this.snapshot = new StoredSnapshot({
      name: 'usage-limits',
      state,
      logger,
      load: async () => {
        const rows = await database.select(usageLimits, { where: (c) => eq(c.status, 'active'), fresh: true });
        return indexLimits(rows, await virtualKeySlugs(database, virtualKeyIds(rows), logger));
      },
    });
  }

  get index(): LimitIndex {
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
