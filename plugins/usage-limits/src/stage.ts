/**
 * Enforcement, around every provider attempt (inside the response cache: a cache hit spends nothing; outside the
 * circuit breaker: a refusal never counts against a circuit). The limits a call meets (the policies it matches, the
 * usage_limits of its API key, of the virtual key and of the integration's workspace access its target uses) are
 * checked in one atomic step (`state.consume` with a cost of 0: one Redis round trip for all of them): a call is
 * admitted while every counter is below its credit limit. Exhausted: 429 `usage_limit_exceeded`, no provider called.
 *
 * Consumption is added when the call is complete (the finally stage, after the pricing): its cost (COST_FIGURE, US
 * cents) or its total tokens. So calls in flight when a limit is reached all finish and are counted: the overshoot
 * is bounded by what those calls consume (docs/admin/policies.md).
 */
import { type CallFacts, type FailMode, factsOf, limitsClock } from '@gateway/policy-kit';
import {
  type Attempt,
  type AttemptResult,
  type AttemptStage,
  COST_FIGURE,
  type CounterCharge,
  Errors,
  type FinallyStage,
  type GatewayRequest,
  type Logger,
  type Outcome,
  type StateStore,
} from '@gateway/sdk';
import type { Alerts } from './alerts.ts';
import type { Groups } from './groups.ts';
import { type Period, periodAt } from './period.ts';
import type { Resets } from './resets.ts';
import { amountOf, type LimitEntry, type LimitIndex } from './store.ts';

/** `req.locals` key: the counters of the last admitted attempt, added to when the call is complete. */
const USAGE_COUNTERS = 'usageLimitCounters';
/** A counter outlives its period by this much (clocks of processes differ a little). */
const TTL_MARGIN_MS = 60_000;
/** A counter of a limit that never resets: kept for ten years. */
const NO_END_TTL_MS = 10 * 366 * 86_400_000;
/** The limit of the charges that only add (at completion): never refused. */
const UNLIMITED = Number.MAX_SAFE_INTEGER;

export interface EnforcementDeps {
  index(): LimitIndex;
  state: StateStore;
  failMode: FailMode;
  logger: Logger;
  resets: Resets;
  alerts: Alerts;
  groups: Groups;
  /** Calls whose cost was unknown (a model without a price): nothing was added to their cost limits. */
  unpriced: { count: number };
}

/** One limit as a call meets it. */
export interface Charged {
  readonly entry: LimitEntry;
  readonly group: string;
  readonly period: Period;
  readonly key: string;
  readonly ttlMs: number;
}

export const counterKeyOf = (limitId: string, periodStart: number, group: string) => `ul:${limitId}:${periodStart}:${group}`;

export function ttlOf(period: Period, now: number): number {
  return period.end === null ? NO_END_TTL_MS : period.end - now + TTL_MARGIN_MS;
}

/** The limits a call meets, each once: its policies, then its API key's, its virtual key's, its integration workspace's. */
export function limitsOf(index: LimitIndex, facts: CallFacts, attempt: Attempt): LimitEntry[] {
  return [...index.policies.match(facts), ...index.subjects.of(facts, attempt)];
}

function charge(entries: readonly LimitEntry[], facts: CallFacts, now: number, resets: Resets): Charged[] {
  return entries.map((entry) => {
    const { policy } = entry;
    const period = periodAt(policy.rule, policy.stored, now);
    if (period.start !== policy.stored.start) resets.due(policy.id);
    const group = entry.matcher.groupOf(facts);
    return { entry, group, period, key: counterKeyOf(policy.id, period.start, group), ttlMs: ttlOf(period, now) };
  });
}

function refusal(refused: Charged, now: number) {
  const { policy } = refused.entry;
  const unit = policy.type === 'cost' ? `USD ${amountOf('cost', policy.limit)}` : `${policy.limit} tokens`;
  const until = refused.period.end === null ? 'until its credit limit is raised' : `until ${new Date(refused.period.end).toISOString()} or until its credit limit is raised`;
  return Errors.usageLimitExceeded(
    `Usage limit exceeded: ${policy.label} allows ${unit}${policy.kind === 'policy' && refused.group ? ' per group' : ''}${refused.period.end === null ? '' : ' per period'}, all used; calls are refused ${until}`,
    refused.period.end === null ? null : (refused.period.end - now) / 1000,
  );
}

/** What a finished call adds to a limit: its cost in cents (0 when unknown) or its total tokens. */
function consumed(outcome: Outcome, type: 'cost' | 'tokens'): number | null {
  if (type === 'tokens') return outcome.usage?.totalTokens ?? 0;
  const cost = outcome.figures.get(COST_FIGURE);
  if (cost === undefined) return outcome.usage ? null : 0; // usage but no cost: unpriced (or no pricing loaded)
  return cost === null ? null : cost.total;
}

export function usageLimitStages(deps: EnforcementDeps): [AttemptStage, FinallyStage] {
  const attempt: AttemptStage = {
    name: 'usage-limits',
    phase: 'attempt',
    rule: 'sequential',
    after: ['response-cache', 'rate-limits'],
    before: 'circuit-breaker',
    applies: () => deps.index().size > 0,
    async run(req, attempt, next): Promise<AttemptResult> {
      const facts = factsOf(req, attempt);
      const entries = limitsOf(deps.index(), facts, attempt);
      if (entries.length === 0) return next();
      const now = limitsClock.now();
      const charged = charge(entries, facts, now, deps.resets);
      let decision: Awaited<ReturnType<StateStore['consume']>>;
      try {
        decision = await deps.state.consume(charged.map((c): CounterCharge => ({ key: c.key, limit: c.entry.policy.limit, cost: 0, ttlMs: c.ttlMs })));
      } catch (error) {
        deps.logger.warn({ err: error instanceof Error ? error.message : String(error), failMode: deps.failMode }, 'usage limits: the counters cannot be reached');
        if (deps.failMode === 'closed') throw Errors.limitsUnavailable('usage limits');
        return next();
      }
      if (!decision.admitted) {
        const refused = charged[decision.refusedAt]!;
        deps.alerts.exhausted(refused, req);
        const err = refusal(refused, now);
        return { response: err.toResponse(), status: err.status, providerId: attempt.provider.id, error: err, settled: Promise.resolve({ body: undefined, error: err }) };
      }
      // The last admitted attempt's limits: its answer is the one whose consumption is added.
      req.locals[USAGE_COUNTERS] = { charged, facts };
      return next();
    },
  };
  const completion: FinallyStage = {
    name: 'usage-limits:consumption',
    phase: 'finally',
    rule: 'fire-and-forget',
    // The cost is attached by the pricing's finally stage.
    after: 'pricing',
    applies: (req: GatewayRequest) => req.locals[USAGE_COUNTERS] !== undefined,
    async run(req, outcome) {
      const { charged, facts } = req.locals[USAGE_COUNTERS] as { charged: Charged[]; facts: CallFacts };
      const amounts = charged.map((c) => consumed(outcome, c.entry.policy.type));
      if (amounts.includes(null)) deps.unpriced.count++;
      const adding = charged.map((c, i) => ({ c, by: amounts[i] ?? 0 })).filter((a) => a.by > 0);
      if (adding.length === 0) return;
      for (const { c } of adding) deps.groups.note(c, facts);
      try {
        // Adds and reads back in one round trip (a limit never refuses here): the values decide the alerts.
        const result = await deps.state.consume(adding.map(({ c, by }) => ({ key: c.key, limit: UNLIMITED, cost: by, ttlMs: c.ttlMs })));
        adding.forEach(({ c, by }, i) => deps.alerts.consumed(c, (result.values[i] ?? 0) - by, result.values[i] ?? 0, req));
      } catch (error) {
        deps.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'usage limits: consumption not counted (the counters cannot be reached)');
      }
    },
  };
  return [attempt, completion];
}
