/**
 * The active rate limits in memory, compiled and indexed once per change (the stage reads them with no I/O): the
 * policies by workspace and organisation, the `rate_limits` of API keys, virtual keys and integration workspaces by
 * the object they are set on. Reloaded here after a write and in every other process through the state store's
 * change channel (admin-kit's StoredSnapshot), as saved configs are.
 */
import { virtualKeySlugs } from '@gateway/admin-integrations';
import { StoredSnapshot } from '@gateway/admin-kit';
import { compileMatcher, type Indexed, type LimitUnit, PolicyIndex, SubjectIndex, type VirtualKeySlugs } from '@gateway/policy-kit';
import { type Database, eq, type Logger, type Row, type StateStore } from '@gateway/sdk';
import { rateLimitPolicies, subjectRateLimits } from './table.ts';

export type PolicyRow = Row<typeof rateLimitPolicies>;
export type SubjectLimitsRow = Row<typeof subjectRateLimits>;

/** What the stage needs of a limit. */
export interface ActivePolicy {
  /** The counters' identity: a policy's id; `<row>.<type>.<unit>` for a limit set on an object. */
  readonly id: string;
  /** How a refusal names it: `policy <id>`, `api_key <id>`, `virtual_key <id>`, `integration <id> in workspace <id>`. */
  readonly label: string;
  readonly type: 'requests' | 'tokens' | 'tool_calls';
  readonly unit: LimitUnit;
  readonly value: number;
}

export interface RateLimitIndex {
  /** Policies and objects with limits on model calls. */
  readonly size: number;
  readonly policies: PolicyIndex<ActivePolicy>;
  /** The `tool_calls` policies: tool and agent calls (the tool-call phase). */
  readonly toolCalls: PolicyIndex<ActivePolicy>;
  /** The limits of each object, in the order given. */
  readonly subjects: SubjectIndex<readonly Indexed<ActivePolicy>[]>;
}

const NO_GROUPS = compileMatcher([], []);

function labelOf(row: SubjectLimitsRow): string {
  return row.kind === 'integration_workspace' ? `integration ${row.subject_id} in workspace ${row.workspace_id}` : `${row.kind} ${row.subject_id}`;
}

export function indexPolicies(rows: readonly PolicyRow[], subjectRows: readonly SubjectLimitsRow[] = [], slugs: VirtualKeySlugs = new Map()): RateLimitIndex {
  const subjects = new SubjectIndex<readonly Indexed<ActivePolicy>[]>();
  for (const row of subjectRows) {
    const label = labelOf(row);
    const entries = row.limits.map(
      (l): Indexed<ActivePolicy> => ({
        policy: { id: `${row.id}.${l.type}.${l.unit}`, label, type: l.type, unit: l.unit, value: l.value },
        organisationId: row.organisation_id,
        workspaceId: row.workspace_id,
        matcher: NO_GROUPS,
      }),
    );
    subjects.add({ kind: row.kind, organisationId: row.organisation_id, subjectId: row.subject_id, workspaceId: row.workspace_id }, entries, slugs);
  }
  const indexed = (row: PolicyRow): Indexed<ActivePolicy> => ({
    policy: { id: row.id, label: `policy ${row.id}`, type: row.type, unit: row.unit, value: row.value },
    organisationId: row.organisation_id,
    workspaceId: row.workspace_id,
    matcher: compileMatcher(row.conditions, row.group_by),
  });
  const policies = new PolicyIndex(rows.filter((row) => row.type !== 'tool_calls').map(indexed));
  const toolCalls = new PolicyIndex(rows.filter((row) => row.type === 'tool_calls').map(indexed));
  return { size: policies.size + subjectRows.length, policies, toolCalls, subjects };
}

export class PolicyStore {
  private readonly snapshot: StoredSnapshot<RateLimitIndex>;

  constructor(database: Database, state: StateStore, logger: Logger) {
    this.snapshot = new StoredSnapshot({
      name: 'rate-limit-policies',
      state,
      logger,
      load: async () => {
        const [policies, subjects] = await Promise.all([
          database.select(rateLimitPolicies, { where: (c) => eq(c.status, 'active'), fresh: true }),
          database.select(subjectRateLimits, { fresh: true }),
        ]);
        const vkIds = subjects.filter((r) => r.kind === 'virtual_key').map((r) => r.subject_id);
        return indexPolicies(policies, subjects, await virtualKeySlugs(database, vkIds, logger));
      },
    });
  }

  get index(): RateLimitIndex {
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
