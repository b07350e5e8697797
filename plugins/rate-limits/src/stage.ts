/**
 * Enforcement, around every provider attempt (inside the response cache: a cache hit spends nothing; outside the
 * circuit breaker: a refusal never counts against a circuit). The policies a call matches and the `rate_limits` of its
 * API key, virtual key and integration workspace are checked and consumed in one atomic step (`state.consume`: one
 * Redis round trip for all of them): a `requests` policy admits while its
 * window's count is below `value` and counts the call; a `tokens` policy admits while the tokens consumed are below
 * `value`, and the call's real total tokens are added when its answer is complete (the finally stage, from
 * `outcome.usage`). Over a limit: 429 `rate_limit_exceeded` naming the policy (or the object), no provider called.
 */
import { type CallFacts, counterKey, type FailMode, factsOf, type Indexed, limitsClock, windowOf } from '@gateway/policy-kit';
import {
  type AttemptResult,
  type AttemptStage,
  type CounterAddition,
  type CounterCharge,
  Errors,
  type FinallyStage,
  type GatewayRequest,
  type Logger,
  type StateStore,
  type ToolCall,
  type ToolCallStage,
} from '@gateway/sdk';
import type { ActivePolicy, RateLimitIndex } from './store.ts';

/** `req.locals` key: the token counters of the last admitted attempt, added to when the answer is complete. */
const TOKEN_COUNTERS = 'rateLimitTokenCounters';
/** A counter outlives its window by this much (clocks of processes differ a little). */
const TTL_MARGIN_MS = 60_000;

export interface EnforcementDeps {
  index(): RateLimitIndex;
  state: StateStore;
  failMode: FailMode;
  logger: Logger;
}

/** A duration in OpenAI's header style: `1s`, `59.5s`, `6m0s`, `2h3m4s`. */
export function duration(ms: number): string {
  const total = Math.max(0, ms) / 1000;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = Math.round((total % 60) * 1000) / 1000;
  if (h) return `${h}h${m}m${Math.floor(s)}s`;
  if (m) return `${m}m${Math.floor(s)}s`;
  return `${s}s`;
}

interface Charged {
  readonly entry: Indexed<ActivePolicy>;
  readonly charge: CounterCharge;
  readonly resetAt: number;
}

function chargesOf(matched: readonly Indexed<ActivePolicy>[], facts: CallFacts, now: number): Charged[] {
  return matched.map((entry) => {
    const { policy } = entry;
    const window = windowOf(policy.unit, now);
    return {
      entry,
      resetAt: window.end,
      charge: {
        key: counterKey('rl', policy.id, window.start, entry.matcher.groupOf(facts)),
        limit: policy.value,
        cost: policy.type === 'tokens' ? 0 : 1,
        ttlMs: window.end - now + TTL_MARGIN_MS,
      },
    };
  });
}

/**
 * The 429 of the refusing policy, with OpenAI's `x-ratelimit-*` headers for it (`-requests` or `-tokens`; a tool
 * call is a request).
 */
function refusal(refused: Charged, value: number, now: number) {
  const { policy } = refused.entry;
  const kind = policy.type === 'tool_calls' ? 'requests' : policy.type;
  const waitMs = refused.resetAt - now;
  const err = Errors.rateLimitExceeded(`Rate limit exceeded: ${policy.label} allows ${policy.value} ${policy.type === 'tool_calls' ? 'tool calls' : kind} per ${policy.unit.slice(2) === 'm' ? 'minute' : { h: 'hour', d: 'day', w: 'week' }[policy.unit.slice(2)]}; try again in ${duration(waitMs)}`, {
    'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))),
    [`x-ratelimit-limit-${kind}`]: String(policy.value),
    [`x-ratelimit-remaining-${kind}`]: String(Math.max(0, policy.value - value)),
    [`x-ratelimit-reset-${kind}`]: duration(waitMs),
  });
  return err;
}

export function rateLimitStages(deps: EnforcementDeps): [AttemptStage, FinallyStage] {
  const attempt: AttemptStage = {
    name: 'rate-limits',
    phase: 'attempt',
    rule: 'sequential',
    after: 'response-cache',
    before: 'circuit-breaker',
    applies: () => deps.index().size > 0,
    async run(req, attempt, next): Promise<AttemptResult> {
      const facts = factsOf(req, attempt);
      const index = deps.index();
      const matched = index.policies.match(facts);
      const own = index.subjects.of(facts, attempt);
      // The policies the call matches and the limits of the objects it goes through, checked together.
      const limits = own.length === 0 ? matched : [...matched, ...own.flat()];
      if (limits.length === 0) return next();
      const now = limitsClock.now();
      const charged = chargesOf(limits, facts, now);
      let decision: Awaited<ReturnType<StateStore['consume']>>;
      try {
        decision = await deps.state.consume(charged.map((c) => c.charge));
      } catch (error) {
        deps.logger.warn({ err: error instanceof Error ? error.message : String(error), failMode: deps.failMode }, 'rate limits: the counters cannot be reached');
        if (deps.failMode === 'closed') throw Errors.limitsUnavailable('rate limits');
        return next();
      }
      if (!decision.admitted) {
        const refused = charged[decision.refusedAt]!;
        const err = refusal(refused, decision.values[decision.refusedAt] ?? refused.charge.limit, now);
        return { response: err.toResponse(), status: err.status, providerId: attempt.provider.id, error: err, settled: Promise.resolve({ body: undefined, error: err }) };
      }
      const tokens = charged.filter((c) => c.entry.policy.type === 'tokens');
      // The last admitted attempt's counters: its answer is the one whose tokens are added.
      req.locals[TOKEN_COUNTERS] = tokens.length ? tokens.map((c): CounterAddition => ({ key: c.charge.key, by: 0, ttlMs: c.charge.ttlMs })) : undefined;
      return next();
    },
  };
  const completion: FinallyStage = {
    name: 'rate-limits:tokens',
    phase: 'finally',
    rule: 'fire-and-forget',
    applies: (req: GatewayRequest) => req.locals[TOKEN_COUNTERS] !== undefined,
    run(req, outcome) {
      const total = outcome.usage?.totalTokens;
      if (!total) return;
      const counters = req.locals[TOKEN_COUNTERS] as CounterAddition[];
      return deps.state.add(counters.map((c) => ({ ...c, by: total }))).catch((error: unknown) => {
        deps.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'rate limits: tokens not counted (the counters cannot be reached)');
      });
    },
  };
  return [attempt, completion];
}

/**
 * What a `tool_calls` policy's conditions and group_by read of a tool or agent call, named as the request log names
 * it: `provider` is the protocol (`mcp`, `a2a`) or the server's slug, `model` the tool (an agent: its server's slug),
 * `endpoint_type` the protocol and method (`mcp.tools/call`, `a2a.message/send`).
 */
export function toolCallFacts(call: ToolCall): CallFacts {
  const { caller } = call;
  return {
    organisationId: caller.organisationId,
    workspaceId: caller.workspaceId,
    apiKeyId: caller.apiKeyId,
    userId: caller.userId,
    endpointType: `${call.kind}.${call.method}`,
    provider: call.kind,
    providerAlias: call.server.slug,
    model: call.tool,
    metadata: call.metadata,
  };
}

/**
 * Enforcement of `tool_calls` policies in the tool-call phase: before a tool or agent call goes upstream, the policies
 * it matches are checked and counted in one atomic step, as model calls' `requests` policies are; over one, the call
 * is refused with the same 429 `rate_limit_exceeded` (the proxy answers it as a JSON-RPC error).
 */
export function rateLimitToolCallStage(deps: EnforcementDeps): ToolCallStage {
  return {
    name: 'rate-limits:tool-calls',
    phase: 'toolCall',
    rule: 'sequential',
    // A call the guardrails deny is not counted (as a model call its input guardrails deny never reaches an attempt).
    after: 'hooks:tool-calls',
    applies: () => deps.index().toolCalls.size > 0,
    async beforeToolCall(call) {
      const facts = toolCallFacts(call);
      const matched = deps.index().toolCalls.match(facts);
      if (matched.length === 0) return;
      const now = limitsClock.now();
      const charged = chargesOf(matched, facts, now);
      let decision: Awaited<ReturnType<StateStore['consume']>>;
      try {
        decision = await deps.state.consume(charged.map((c) => c.charge));
      } catch (error) {
        deps.logger.warn({ err: error instanceof Error ? error.message : String(error), failMode: deps.failMode }, 'rate limits: the counters cannot be reached');
        if (deps.failMode === 'closed') throw Errors.limitsUnavailable('rate limits');
        return;
      }
      if (!decision.admitted) {
        const refused = charged[decision.refusedAt]!;
        throw refusal(refused, decision.values[decision.refusedAt] ?? refused.charge.limit, now);
      }
    },
  };
}
