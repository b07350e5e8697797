/**
 * How much work a config may ask for: targets per level and in all, and the provider calls one request may lead to
 * in the worst case. Without these a config of a few kilobytes (fallbacks nested in fallbacks, each retried) makes
 * one request call providers thousands of times. The limits are `ROUTING_LIMITS` (SDK); the engine stops at the
 * same attempt count at run time, for configs that never came through here.
 */
import { ROUTING_LIMITS } from '@gateway/sdk';
import { formatPath, type PathSegment } from './path.ts';

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Strategies that call one chosen child; any other mode (fallback) may call each child in turn. */
const ONE_CHILD = new Set(['single', 'loadbalance', 'conditional']);

/** Violations of the work limits in `config`. Depth and size were bounded by `scan`. */
export function budgetViolations(config: unknown): string[] {
  if (!isObj(config)) return [];
  const out: string[] = [];
  let targets = 0;

  /** Worst-case provider calls under `node`, whose inherited retry is `retry` (a target inherits its parent's). */
  const calls = (node: Obj, at: PathSegment[], inherited: unknown): number => {
    const retry = node.retry === undefined ? inherited : node.retry;
    const children = node.targets;
    if (!Array.isArray(children) || children.length === 0 || !isObj(node.strategy)) {
      const attempts = isObj(retry) && typeof retry.attempts === 'number' && retry.attempts > 0 ? Math.floor(retry.attempts) : 0;
      return 1 + Math.min(attempts, ROUTING_LIMITS.maxRetryAttempts);
    }
    if (children.length > ROUTING_LIMITS.maxTargetsPerLevel)
      out.push(`${formatPath([...at, 'targets'])}: at most ${ROUTING_LIMITS.maxTargetsPerLevel} targets (${children.length} given)`);
    targets += children.length;
    const each = children.map((child, i) => (isObj(child) ? calls(child, [...at, 'targets', i], retry) : 0));
    return ONE_CHILD.has(node.strategy.mode as string) ? Math.max(...each) : each.reduce((a, b) => a + b, 0);
  };

  const worst = calls(config, [], undefined);
  if (targets > ROUTING_LIMITS.maxTargets) out.push(`targets: at most ${ROUTING_LIMITS.maxTargets} targets in all, nesting included (${targets} given)`);
  if (worst > ROUTING_LIMITS.maxAttemptsPerRequest)
    out.push(
      `config: one request could call providers ${worst} times (retries and fallbacks included); at most ${ROUTING_LIMITS.maxAttemptsPerRequest}`,
    );
  return out;
}
