/**
 * The active usage limits in memory, compiled and indexed once per change so the stage finds a call's limits with
 * Map lookups and no I/O: the policies by workspace and organisation (policy-kit's PolicyIndex), the others by the
 * API key, virtual key or integration workspace they are set on. Reloaded here after a write and in every other
 * process through the state store's change channel (admin-kit's StoredSnapshot), as saved configs are.
 */
import { StoredSnapshot } from '@gateway/admin-kit';
import { virtualKeys } from '@gateway/admin-integrations';
import { compileMatcher, type Indexed, type PolicyGroupBy, PolicyIndex } from '@gateway/policy-kit';
import { type Database, eq, inArray, type Logger, type StateStore } from '@gateway/sdk';
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
  readonly apiKeys: ReadonlyMap<string, LimitEntry>;
  /** By virtual key id, and by `<workspace>:<slug>` (a request names a virtual key either way). */
  readonly virtualKeys: ReadonlyMap<string, LimitEntry>;
  /** By `<integration>:<workspace>`. */
  readonly integrationWorkspaces: ReadonlyMap<string, LimitEntry>;
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

export function indexLimits(rows: readonly UsageLimitRow[], slugs: ReadonlyMap<string, { workspaceId: string; slug: string }>): LimitIndex {
  const policies: LimitEntry[] = [];
  const all: LimitEntry[] = [];
  const apiKeys = new Map<string, LimitEntry>();
  const vks = new Map<string, LimitEntry>();
  const integrationWorkspaces = new Map<string, LimitEntry>();
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
    const id = row.subject_id ?? '';
    if (row.kind === 'api_key') apiKeys.set(id, entry);
    else if (row.kind === 'integration_workspace') integrationWorkspaces.set(`${id}:${row.workspace_id}`, entry);
    else {
      vks.set(id, entry);
      const vk = slugs.get(id);
      if (vk) vks.set(`${vk.workspaceId}:${vk.slug}`, entry);
    }
  }
  return { size: rows.length, all, policies: new PolicyIndex(policies), apiKeys, virtualKeys: vks, integrationWorkspaces };
}

/** The slugs of the virtual keys that carry a limit; none when the integrations' tables are not there. */
async function virtualKeySlugs(database: Database, rows: readonly UsageLimitRow[], logger: Logger) {
  const ids = rows.filter((r) => r.kind === 'virtual_key' && r.subject_id).map((r) => r.subject_id as string);
  const out = new Map<string, { workspaceId: string; slug: string }>();
  if (ids.length === 0) return out;
  try {
    for (const vk of await database.select(virtualKeys, { where: (c) => inArray(c.id, ids), fresh: true })) out.set(vk.id, { workspaceId: vk.workspace_id, slug: vk.slug });
  } catch (error) {
    logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'usage limits: virtual keys cannot be read; their limits apply when named by id only');
  }
  return out;
}

export class LimitStore {
  private readonly snapshot: StoredSnapshot<LimitIndex>;

  constructor(database: Database, state: StateStore, logger: Logger) {
    this.snapshot = new StoredSnapshot({
      name: 'usage-limits',
      state,
      logger,
      load: async () => {
        const rows = await database.select(usageLimits, { where: (c) => eq(c.status, 'active'), fresh: true });
        return indexLimits(rows, await virtualKeySlugs(database, rows, logger));
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
