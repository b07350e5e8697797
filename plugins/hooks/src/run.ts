/**
 * Running checks and hooks. A check's answer is a verdict and optionally a transformed body; a check that throws,
 * answers nonsense or outlives its time limit is a failed verdict with its error recorded, never a crash.
 *
 * One phase (input or output) runs like this: every check of every awaited hook starts at once, all judging the body
 * as it entered the phase. Then the transforms are applied in config order (hook order, then check order): the
 * first check that returned a `transformed` body sets the body; a later one, which judged the old body, runs again
 * on the current one and its new answer counts (verdict included). So transforms chain as if run one after another,
 * while the common case (no transform, or one) costs one parallel round.
 */
import type { GuardrailCheck, GuardrailCheckContext, JsonObject } from '@gateway/sdk';
import type { CheckLookup, CheckResult, CheckSpec, HookResult, HookSpec } from './types.ts';

export interface CheckRun {
  result: CheckResult;
  /** A new body, when the check returned one (and it is a JSON object). */
  transformed: JsonObject | undefined;
}

const ms = (since: number) => Math.round((performance.now() - since) * 1000) / 1000;
const isObj = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

function failed(id: string, error: string, started: number): CheckRun {
  return { result: { id, verdict: false, data: null, error, execution_time: ms(started) }, transformed: undefined };
}

/** What a check resolved with, checked: a boolean verdict, JSON data, an object as transformed body. */
function accept(id: string, out: unknown, started: number): CheckRun {
  if (!isObj(out) || typeof out.verdict !== 'boolean') return failed(id, 'the check returned no boolean verdict', started);
  let data = out.data === undefined ? null : out.data;
  let error: string | null = null;
  if (data !== null && typeof data === 'object') {
    // Results travel as JSON (answer, log): data that cannot is dropped here, not when the answer is written.
    try {
      JSON.stringify(data);
    } catch (e) {
      data = null;
      error = `the check's data is not JSON (${message(e)})`;
    }
  } else if (typeof data === 'bigint' || typeof data === 'function' || typeof data === 'symbol') {
    data = null;
    error = "the check's data is not JSON";
  }
  let transformed: JsonObject | undefined;
  if (out.transformed !== undefined && out.transformed !== null) {
    if (!isObj(out.transformed)) return failed(id, 'the check returned a transformed body that is not a JSON object', started);
    transformed = out.transformed as JsonObject;
  }
  const verdict = out.verdict && error === null;
  return { result: { id, verdict, data, error, execution_time: ms(started) }, transformed };
}

/** Runs one check with its time limit. Never rejects. */
export function runCheck(check: GuardrailCheck | undefined, spec: CheckSpec, ctx: GuardrailCheckContext): Promise<CheckRun> {
  const started = performance.now();
  if (spec.problem) return Promise.resolve(failed(spec.id, spec.problem, started));
  if (!check) return Promise.resolve(failed(spec.id, `unknown guardrail check "${spec.id}"`, started));
  let pending: unknown;
  try {
    pending = check.run(ctx, spec.parameters);
  } catch (error) {
    return Promise.resolve(failed(spec.id, message(error), started));
  }
  if (!isThenable(pending)) return Promise.resolve(accept(spec.id, pending, started));
  return new Promise<CheckRun>((resolve) => {
    // The check is not stopped (the contract gives it no signal); its late answer is ignored.
    const timer = setTimeout(() => resolve(failed(spec.id, `timed out after ${spec.timeoutMs} ms`, started)), spec.timeoutMs);
    pending.then(
      (out) => {
        clearTimeout(timer);
        resolve(accept(spec.id, out, started));
      },
      (error: unknown) => {
        clearTimeout(timer);
        resolve(failed(spec.id, message(error), started));
      },
    );
  });
}

/** A hook's result from its checks' runs. */
export function hookResult(hook: HookSpec, runs: readonly CheckRun[], executionMs: number): HookResult {
  let verdict = true;
  const checks: CheckResult[] = new Array(runs.length);
  for (let i = 0; i < runs.length; i++) {
    const r = (runs[i] as CheckRun).result;
    checks[i] = r;
    if (!r.verdict) verdict = false;
  }
  let deny = verdict ? hook.denyOnSuccess : hook.denyOnFail;
  // A check may ask for denial (`data.deny: true`) where the config left it open.
  if (!verdict && !deny && hook.denyUnset) deny = checks.some((c) => !c.verdict && isObj(c.data) && c.data.deny === true);
  return {
    id: hook.id,
    verdict,
    deny: !hook.async && deny,
    async: hook.async,
    checks,
    feedback: verdict ? hook.onSuccess : hook.onFail,
    execution_time: Math.round(executionMs * 1000) / 1000,
  };
}

export interface PhaseOutcome {
  results: HookResult[];
  /** The body after the transforms (the same object when none applied). */
  body: JsonObject;
}

/**
 * Runs hooks of one phase on `original`. `contextFor(body)` is the check context for a body (input: a view of the
 * request with that body; output: the answer). With `transform` false (async hooks), transformed bodies are ignored.
 */
export async function runHooks(
  hooks: readonly HookSpec[],
  lookup: CheckLookup,
  original: JsonObject,
  contextFor: (body: JsonObject) => GuardrailCheckContext,
  transform: boolean,
): Promise<PhaseOutcome> {
  const started = performance.now();
  const ctx = contextFor(original);
  const took: number[] = new Array(hooks.length);
  const runs = await Promise.all(
    hooks.map((hook, i) =>
      Promise.all(hook.checks.map((spec) => runCheck(lookup(spec.id), spec, ctx))).then((done) => {
        took[i] = performance.now() - started;
        return done;
      }),
    ),
  );
  let body = original;
  if (transform) {
    for (let i = 0; i < hooks.length; i++) {
      const hook = hooks[i] as HookSpec;
      const hookRuns = runs[i] as CheckRun[];
      for (let k = 0; k < hookRuns.length; k++) {
        let run = hookRuns[k] as CheckRun;
        if (!run.transformed) continue;
        if (body !== original) {
          // It judged the body before an earlier transform: it runs again on the current one.
          const spec = hook.checks[k] as CheckSpec;
          const again = performance.now();
          run = await runCheck(lookup(spec.id), spec, contextFor(body));
          hookRuns[k] = run;
          took[i] = (took[i] as number) + (performance.now() - again);
        }
        if (run.transformed) body = run.transformed;
      }
    }
  }
  const results = new Array<HookResult>(hooks.length);
  for (let i = 0; i < hooks.length; i++) results[i] = hookResult(hooks[i] as HookSpec, runs[i] as CheckRun[], took[i] as number);
  return { results, body };
}
