import { type AttemptResult, definePlugin, Errors, type GatewayConfig, type Strategy } from '@gateway/sdk';
import { conditionalFields } from './conditional-fields.ts';
import { matches, requestGetter } from './query.ts';

const childIndex = (i: number) => `[${i}]`;

function available(node: GatewayConfig, isAvailable: (index: string) => boolean): number[] {
  const all = (node.targets ?? []).map((_, i) => i);
  const open = all.filter((i) => isAvailable(childIndex(i)));
  // When every circuit is open the request still goes somewhere rather than failing unanswered.
  return open.length ? open : all;
}

/** A stream with no content in time, or one that broke after it started (continued on the next target), too. */
const ALWAYS_FALL_BACK = new Set(['upstream_unreachable', 'request_timeout', 'circuit_open', 'first_token_timeout', 'stream_interrupted']);

const isSuccess = (r: AttemptResult) => r.status >= 200 && r.status < 300;

export const single: Strategy = {
  mode: 'single',
  plan: (node, ctx) => available(node, ctx.isAvailable).slice(0, 1),
  next: () => false,
};

/** Cumulative weights of a node's targets (weight 0 never chosen), computed once per (frozen, shared) config. */
const cumulative = new WeakMap<GatewayConfig, { indices: number[]; sums: number[]; total: number }>();

function weightsOf(node: GatewayConfig) {
  let w = cumulative.get(node);
  if (!w) {
    const indices: number[] = [];
    const sums: number[] = [];
    let total = 0;
    (node.targets ?? []).forEach((t, i) => {
      const weight = t.weight ?? 1;
      if (weight > 0) {
        total += weight;
        indices.push(i);
        sums.push(total);
      }
    });
    w = { indices, sums, total };
    cumulative.set(node, w);
  }
  return w;
}

export const loadbalance: Strategy = {
  mode: 'loadbalance',
  plan(node, ctx) {
    const targets = node.targets ?? [];
    const { indices, sums, total } = weightsOf(node);
    // The common case (every target available) picks without allocating.
    if (indices.every((i) => ctx.isAvailable(childIndex(i)))) {
      if (total <= 0) return [];
      const pick = Math.random() * total;
      for (let k = 0; k < sums.length; k++) if (pick < (sums[k] as number)) return [indices[k] as number];
      return indices.slice(-1);
    }
    const candidates = available(node, ctx.isAvailable).filter((i) => (targets[i]?.weight ?? 1) > 0);
    const sum = candidates.reduce((acc, i) => acc + (targets[i]?.weight ?? 1), 0);
    if (sum <= 0) return [];
    let pick = Math.random() * sum;
    for (const i of candidates) {
      pick -= targets[i]?.weight ?? 1;
      if (pick < 0) return [i];
    }
    return candidates.slice(-1);
  },
  next: () => false,
};

export const fallback: Strategy = {
  mode: 'fallback',
  plan: (node, ctx) => available(node, ctx.isAvailable),
  next(result, node, child) {
    if (isSuccess(result)) return false;
    const codes = child.on_status_codes ?? node.strategy?.on_status_codes;
    // Without codes any failure moves on; network failures, timeouts and open circuits always do.
    if (!codes || ALWAYS_FALL_BACK.has(result.error?.code ?? '')) return true;
    return codes.includes(result.status);
  },
};

export const conditional: Strategy = {
  mode: 'conditional',
  strategyFields: conditionalFields,
  plan(node, ctx) {
    const strategy = node.strategy;
    const targets = node.targets ?? [];
    const get = requestGetter(ctx.request);
    const hit = strategy?.conditions?.find((c) => matches(c.query, get));
    const name = hit?.then ?? strategy?.default;
    if (name === undefined) throw Errors.badRequest('No conditional routing rule matched and the strategy has no default', 'strategy.conditions');
    const i = targets.findIndex((t) => t.name === name);
    if (i < 0) throw Errors.badRequest(`Conditional routing names target "${name}", which does not exist`, 'strategy.conditions');
    return [i];
  },
  next: () => false,
};

export default definePlugin({
  setup(api) {
    for (const strategy of [single, loadbalance, fallback, conditional]) api.strategy(strategy);
  },
});
