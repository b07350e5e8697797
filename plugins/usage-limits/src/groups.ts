/**
 * The groups a policy with group_by has counted in a period, kept so GET and LIST can show each group's usage (the
 * state store cannot list its counters). Noted after a call completes (never on the request's path), once per group,
 * period and process; a second process noting the same group meets the unique index and lets it be.
 */
import { isUniqueViolation } from '@gateway/admin-kit';
import type { CallFacts, PolicyGroupBy } from '@gateway/policy-kit';
import { and, asc, type Database, eq, type Logger } from '@gateway/sdk';
import type { Charged } from './stage.ts';
import { type UsageLimitGroupRow, usageLimitGroups } from './table.ts';

const MEMO_MAX = 100_000;

/** A group's values by group_by key, as the call had them (null: none, e.g. a service key's user). */
export function groupValues(groupBy: readonly PolicyGroupBy[], facts: CallFacts): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const { key } of groupBy) {
    if (key === 'api_key') out[key] = facts.apiKeyId;
    else if (key === 'workspace_id') out[key] = facts.workspaceId;
    else if (key === 'user') out[key] = facts.userId;
    else out[key] = facts.metadata[key.slice('metadata.'.length)] ?? null;
  }
  return out;
}

export class Groups {
  private readonly noted = new Set<string>();

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
  ) {}

  note(c: Charged, facts: CallFacts): void {
    const { policy } = c.entry;
    if (policy.groupBy.length === 0) return;
    const memo = `${policy.id}:${c.period.start}:${c.group}`;
    if (this.noted.has(memo)) return;
    if (this.noted.size >= MEMO_MAX) this.noted.clear();
    this.noted.add(memo);
    const hash = new Bun.CryptoHasher('sha256').update(c.group).digest('hex');
    this.database
      .insert(usageLimitGroups, { limit_id: policy.id, period_start: c.period.start, group_hash: hash, group_key: c.group, group_values: groupValues(policy.groupBy, facts), created_at: Date.now() })
      .catch((error: unknown) => {
        if (isUniqueViolation(error)) return;
        this.noted.delete(memo);
        this.logger.warn({ err: error instanceof Error ? error.message.slice(0, 300) : String(error) }, 'usage limits: a group could not be noted');
      });
  }

  /** The groups of a period, oldest first (at most `limit`). */
  of(limitId: string, periodStart: number, limit: number): Promise<UsageLimitGroupRow[]> {
    return this.database.select(usageLimitGroups, {
      where: (c) => and(eq(c.limit_id, limitId), eq(c.period_start, periodStart)),
      orderBy: (c) => [asc(c.created_at), asc(c.id)],
      limit,
      fresh: true,
    });
  }
}
