/**
 * Config → plan. Hooks (before_request_hooks, after_request_hooks) and guardrail entries (input_guardrails,
 * output_guardrails) become one internal form, HookSpec. Configs are frozen and shared by every request with the
 * same header, so each hook list is normalised once (cached by the list's identity) and each config's plan once
 * (cached by the config's identity); a request whose config has no hooks costs four property reads.
 */
import type { GatewayConfig, JsonObject } from '@gateway/sdk';
import type { CheckSpec, Feedback, HookSpec, Phase, PhasePlan, Plan, SavedGuardrailResolver } from './types.ts';

/** Properties of a guardrail entry that are policy, not checks (INTERFACE.md). */
const POLICY_KEYS: ReadonlySet<string> = new Set(['id', 'deny', 'async', 'on_fail', 'on_success']);

export const DEFAULT_CHECK_TIMEOUT_MS = 10_000;

/** A bare check name is a check of the `default` plugin (`contains` → `default.contains`), as config validation says. */
export const qualifyCheckId = (id: string): string => (id.includes('.') ? id : `default.${id}`);

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj => value !== null && typeof value === 'object' && !Array.isArray(value);

function feedbackOf(outcome: unknown): Feedback | null {
  if (!isObj(outcome) || !isObj(outcome.feedback)) return null;
  return outcome.feedback as Feedback;
}

function checkSpec(id: string, parameters: unknown, defaultTimeoutMs: number): CheckSpec {
  const params = (isObj(parameters) ? parameters : {}) as JsonObject;
  const t = params.timeout;
  const timeoutMs = typeof t === 'number' && Number.isFinite(t) && t > 0 ? t : defaultTimeoutMs;
  return { id: qualifyCheckId(id), parameters: params, timeoutMs };
}

export interface Normaliser {
  /** The plan of a config; `{}` when it has no hooks. */
  planOf(config: GatewayConfig): Plan;
}

const EMPTY_PLAN: Plan = Object.freeze({});
const NONE: readonly HookSpec[] = Object.freeze([]);

export function createNormaliser(opts: { defaultTimeoutMs?: number; savedGuardrail?: () => SavedGuardrailResolver | undefined }): Normaliser {
  const defaultTimeoutMs = opts.defaultTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const lists = new WeakMap<object, readonly HookSpec[]>();
  const plans = new WeakMap<GatewayConfig, Plan>();

  /** before_request_hooks / after_request_hooks items. */
  function hooks(list: unknown, phase: Phase, key: string): readonly HookSpec[] {
    if (!Array.isArray(list) || list.length === 0) return NONE;
    let out = lists.get(list);
    if (out) return out;
    out = list.filter(isObj).map((hook, i): HookSpec => {
      const checks = Array.isArray(hook.checks) ? hook.checks.filter(isObj) : [];
      return {
        id: typeof hook.id === 'string' ? hook.id : `${key}[${i}]`,
        phase,
        checks: checks.map((c) => checkSpec(String(c.id), c.parameters, defaultTimeoutMs)),
        async: hook.async === true,
        denyOnFail: isObj(hook.on_fail) && hook.on_fail.deny === true,
        denyUnset: !(isObj(hook.on_fail) && typeof hook.on_fail.deny === 'boolean'),
        denyOnSuccess: isObj(hook.on_success) && hook.on_success.deny === true,
        onFail: feedbackOf(hook.on_fail),
        onSuccess: feedbackOf(hook.on_success),
      };
    });
    lists.set(list, out);
    return out;
  }

  /** input_guardrails / output_guardrails items: an object whose extra keys are checks, or a saved guardrail's id. */
  function guardrails(list: unknown, phase: Phase, key: string): readonly HookSpec[] {
    if (!Array.isArray(list) || list.length === 0) return NONE;
    let out = lists.get(list);
    if (out) return out;
    out = list.map((entry, i): HookSpec => {
      let object: unknown = entry;
      let problem: string | undefined;
      if (typeof entry === 'string') {
        const resolve = opts.savedGuardrail?.();
        object = resolve ? resolve(entry) : undefined;
        if (!isObj(object)) problem = resolve ? `no saved guardrail with id ${JSON.stringify(entry)}` : `saved guardrail ${JSON.stringify(entry)}: no guardrail store is loaded`;
      }
      const o: Obj = isObj(object) ? object : {};
      const checks: CheckSpec[] = [];
      for (const name of Object.keys(o)) if (!POLICY_KEYS.has(name)) checks.push(checkSpec(name, o[name], defaultTimeoutMs));
      if (problem) checks.push({ id: typeof entry === 'string' ? entry : `${key}[${i}]`, parameters: {}, timeoutMs: defaultTimeoutMs, problem });
      const onFail = o.on_fail;
      const onSuccess = o.on_success;
      // `on_fail.deny` (output guardrails) is more specific than the entry's `deny`.
      const failDenySet = isObj(onFail) && typeof onFail.deny === 'boolean';
      const failDeny = failDenySet ? onFail.deny === true : o.deny === true;
      return {
        id: typeof o.id === 'string' ? o.id : typeof entry === 'string' ? entry : `${key}[${i}]`,
        phase,
        checks,
        async: o.async === true,
        denyOnFail: failDeny,
        denyUnset: !failDenySet && typeof o.deny !== 'boolean',
        denyOnSuccess: isObj(onSuccess) && onSuccess.deny === true,
        onFail: feedbackOf(onFail),
        onSuccess: feedbackOf(onSuccess),
      };
    });
    lists.set(list, out);
    return out;
  }

  function phasePlan(first: readonly HookSpec[], second: readonly HookSpec[]): PhasePlan | undefined {
    if (first.length === 0 && second.length === 0) return undefined;
    const all = first.length === 0 ? second : second.length === 0 ? first : [...first, ...second];
    return { sync: all.filter((h) => !h.async), async: all.filter((h) => h.async) };
  }

  return {
    planOf(config) {
      const c = config as Obj;
      // Hooks count at the root only (validation refuses them on targets), so "has hooks" is four property reads:
      // cheaper than the WeakMap, and nothing is cached for the many configs without hooks (a config built from
      // headers is a new object per request).
      if (c.before_request_hooks === undefined && c.input_guardrails === undefined && c.output_guardrails === undefined && c.after_request_hooks === undefined)
        return EMPTY_PLAN;
      let plan = plans.get(config);
      if (plan) return plan;
      // Order within a phase (ARCHITECTURE.md): before-request hooks, then input guardrails; output guardrails, then
      // after-request hooks. Transforms follow this order.
      const input = phasePlan(hooks(c.before_request_hooks, 'input', 'before_request_hooks'), guardrails(c.input_guardrails, 'input', 'input_guardrails'));
      const output = phasePlan(guardrails(c.output_guardrails, 'output', 'output_guardrails'), hooks(c.after_request_hooks, 'output', 'after_request_hooks'));
      plan = input || output ? { input, output } : EMPTY_PLAN;
      plans.set(config, plan);
      return plan;
    },
  };
}

