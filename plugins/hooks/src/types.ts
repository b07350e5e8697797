/** The hook engine's shapes: the one internal form of hooks and guardrail entries, and the results it reports. */
import type { GuardrailCheck, JsonObject } from '@gateway/sdk';

export type Phase = 'input' | 'output';

/** `on_fail` / `on_success` feedback, as the config gives it. */
export interface Feedback {
  value?: number;
  weight?: number;
  metadata?: Record<string, unknown>;
}

/** One check of a hook: its registry id (`<plugin>.<check>`) and parameters. */
export interface CheckSpec {
  id: string;
  parameters: JsonObject;
  /** The check's time limit: its `timeout` parameter when it has one, else the engine's default. */
  timeoutMs: number;
  /** Set when the entry could not be turned into a runnable check (a saved guardrail that is gone): it fails with this. */
  problem?: string;
}

/**
 * A hook or a guardrail entry, normalised. Guardrail entries (`{deny, async, "<check>": params}` or a saved
 * guardrail's id) and hooks (`{id, checks: [{id, parameters}], on_fail: {deny}}`) both become this.
 */
export interface HookSpec {
  id: string;
  phase: Phase;
  checks: readonly CheckSpec[];
  /** Fire and forget: never delays the answer, cannot deny or transform. */
  async: boolean;
  /** Deny when the hook fails (`deny`, `on_fail.deny`). */
  denyOnFail: boolean;
  /**
   * The config said nothing about denying a failure (no `deny`, no `on_fail.deny`): a failed check that asks for it
   * (`data.deny === true`, e.g. a security scanner that defaults to deny) then denies.
   */
  denyUnset: boolean;
  /** Deny when the hook succeeds (`on_success.deny`). */
  denyOnSuccess: boolean;
  onFail: Feedback | null;
  onSuccess: Feedback | null;
}

/** The hooks of one phase of a config: those that are awaited, in order, and the fire-and-forget ones. */
export interface PhasePlan {
  sync: readonly HookSpec[];
  async: readonly HookSpec[];
}

export interface Plan {
  input?: PhasePlan;
  output?: PhasePlan;
}

// ---- results (hook_results in answers, error bodies and the request log) ----------------------------------------

export interface CheckResult {
  id: string;
  verdict: boolean;
  data: unknown;
  error: string | null;
  /** Milliseconds. */
  execution_time: number;
}

export interface HookResult {
  id: string;
  verdict: boolean;
  /** This hook's outcome stopped the request (never for async hooks, which run after the answer is decided). */
  deny: boolean;
  async: boolean;
  checks: CheckResult[];
  /** The `feedback` of `on_success` or `on_fail`, whichever applied; null when none was configured. */
  feedback: Feedback | null;
  /** Milliseconds. */
  execution_time: number;
}

export type CheckLookup = (id: string) => GuardrailCheck | undefined;

/** A saved guardrail: the object form of a guardrail entry. */
export type SavedGuardrail = Readonly<Record<string, unknown>>;
export type SavedGuardrailResolver = (id: string) => SavedGuardrail | undefined;

/** Per-request facts the engine keeps in `req.locals`. */
export interface HookState {
  /** Every result, async ones included once they are in: what the request log stores. */
  all: HookResult[];
  /** Results of the awaited hooks: what the answer (or the denial) carries. */
  answer: HookResult[];
  /** An awaited hook failed: the answer carries `hook_results`. */
  failed: boolean;
}

/** `req.locals` keys: the request log reads the first two (documented in README.md). */
export const LOCALS = {
  /** HookResult[]: every hook result of the request. */
  results: 'hookResults',
  /** Promise<void>: resolves when no hook of the request is still running (async hooks, stream ends). */
  settled: 'hookResultsSettled',
  state: 'hookState',
} as const;
