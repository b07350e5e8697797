/**
 * The `strategy` fields of the conditional mode and their rules (config-fields.ts): `conditions` (a query over the
 * request and the target it chooses) and `default`; both required, and each names a target by its `name`.
 */
import { defineStrategyFields, type FieldValues, type FieldViolation } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';

const isObj = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

export const conditionalFields = defineStrategyFields({
  fields: {
    conditions: Type.Array(Type.Object({ query: Type.Record(Type.String(), Type.Unknown()), then: Type.String() }, { additionalProperties: false })),
    default: Type.String(),
  },
  check(strategy, targets) {
    const out: FieldViolation[] = [];
    if (strategy.conditions === undefined) out.push({ path: ['strategy', 'conditions'], reason: 'required when mode is conditional' });
    if (strategy.default === undefined) out.push({ path: ['strategy', 'default'], reason: 'required when mode is conditional' });
    if (!Array.isArray(targets)) return out;
    const names = new Set(targets.filter(isObj).map((t) => t.name).filter((n) => typeof n === 'string'));
    const check = (name: unknown, path: FieldViolation['path']) => {
      if (typeof name === 'string' && !names.has(name)) out.push({ path, reason: `names no target (${JSON.stringify(name)})` });
    };
    if (Array.isArray(strategy.conditions)) strategy.conditions.forEach((c, i) => isObj(c) && check(c.then, ['strategy', 'conditions', i, 'then']));
    check(strategy.default, ['strategy', 'default']);
    return out;
  },
});

declare module '@gateway/sdk' {
  interface PluginStrategyFields extends FieldValues<typeof conditionalFields> {}
}
