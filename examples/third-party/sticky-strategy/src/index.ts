/**
 * A routing strategy, `sticky`: requests with the same value of a metadata key (`x-gateway-metadata`) always go to
 * the same target (a user keeps one provider's cache and rate budget), spread over the targets by a hash of the
 * value. A target whose circuit is open is skipped; a failed attempt (5xx, 429, no answer) moves on to the next
 * target in the same sticky order. A config uses it as
 *
 *     { "strategy": { "mode": "sticky", "sticky_by": "user" }, "targets": [ … ] }
 *
 * Without the metadata key the caller's API key is the value, so one key sticks to one target.
 */
import { type AttemptResult, definePlugin, defineStrategyFields, type FieldValues, type Strategy } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';

export const stickyFields = defineStrategyFields({
  fields: { sticky_by: Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' }) },
  check: (strategy) => (strategy.sticky_by === undefined ? [{ path: ['strategy', 'sticky_by'], reason: 'required when mode is sticky' }] : []),
});

declare module '@gateway/sdk' {
  interface PluginStrategyFields extends FieldValues<typeof stickyFields> {}
}

/** FNV-1a: a stable, well-spread 32-bit hash of a short string. */
export function hash(value: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) h = Math.imul(h ^ value.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const failed = (r: AttemptResult) => r.status >= 500 || r.status === 429 || r.error?.retryable === true;

export const sticky: Strategy = {
  mode: 'sticky',
  plan(node, ctx) {
    const count = node.targets?.length ?? 0;
    if (count === 0) return [];
    const key = node.strategy?.sticky_by;
    const value = (key === undefined ? undefined : ctx.request.metadata[key]) ?? ctx.request.caller.apiKeyId;
    const first = hash(value) % count;
    const order = Array.from({ length: count }, (_, k) => (first + k) % count);
    const open = order.filter((i) => ctx.isAvailable(`[${i}]`));
    // When every circuit is open the request still goes somewhere rather than failing unanswered.
    return open.length > 0 ? open : order;
  },
  next: (result) => failed(result),
  strategyFields: stickyFields,
};

export default definePlugin({ setup: (api) => api.strategy(sticky) });
