import {
  type Attempt,
  type AttemptContinuation,
  type AttemptRecord,
  type AttemptResult,
  type AttemptStage,
  Errors,
  GatewayError,
  type GatewayConfig,
  type GatewayRequest,
  type ProviderAdapter,
  ROUTING_LIMITS,
  type Strategy,
  type StrategyContext,
  type TargetConfig,
} from '@gateway/sdk';
import { type CallOptions, ClientGoneError, callProvider } from './call.ts';
import { FailedAttempt } from './failed-attempt.ts';
import { GENERIC_INHERITANCE, type Inheritance } from './inherit.ts';
import { applyParamRules } from './params.ts';
import { brokenResult, type Continuing, continuingAttempt, refusesPrefill, regenerating } from './resume.ts';
import { backoffMs, RETRY_AFTER_CAP_MS, retryPolicy, sleep } from './retry.ts';

export interface ResolvedTarget {
  provider: ProviderAdapter;
  target: TargetConfig;
  /** The integration behind a `@slug` provider, recorded on the attempts (its prices apply to the answer). */
  integrationId?: string;
  /** The stored provider's name as the config gave it (`@slug`, without the `@`), recorded on the attempts. */
  providerSlug?: string;
}

export interface EngineDeps {
  strategies: ReadonlyMap<string, Strategy>;
  attemptStages: readonly AttemptStage[];
  call: CallOptions;
  /** The adapter for a leaf (and the leaf itself, rewritten for passthrough `@slug/model`). */
  /** A promise only when a stored object needs an outside lookup (a secret reference not cached). */
  resolveProvider(target: TargetConfig, req: GatewayRequest): ResolvedTarget | Promise<ResolvedTarget>;
  /** Whether a target may be tried now (circuit breaker); defaults to always. */
  isAvailable?(req: GatewayRequest, index: string, target: TargetConfig): boolean;
  /** What a target takes from its parent (the loaded plugins' inherited fields); default: the generic settings. */
  inheritance?: Inheritance;
}

export interface RoutedResult extends AttemptResult {
  /** Path of the target that answered, e.g. `config.targets[1]`. */
  index: string;
  /** Retries made on the answering target; -1 when they ran out. */
  retries: number;
  /** How this attempt continues a stream that broke (set on the results of a stream's resumption only). */
  continuation?: AttemptContinuation;
}

/** 400s that no retry can fix, whatever `on_status_codes` says. */
/** An open circuit is not retried either: it stays open for its whole cooldown. */
/** Nor is a refusal by a rate or usage limit: the window it waits for is longer than any retry. */
/** A provider's answers that another try would only repeat. */
const NEVER_RETRIED = new Set(['context_length_exceeded', 'content_policy_violation', 'content_filter']);
/**
 * The gateway's own refusals: an open circuit, an exhausted limit. A provider may use the same code for its own 429
 * (OpenAI's `rate_limit_exceeded`), which is retried as configured: these count only without a provider.
 */
const GATEWAY_REFUSALS = new Set(['circuit_open', 'rate_limit_exceeded', 'usage_limit_exceeded', 'limits_unavailable']);
/**
 * Failures worth another try whatever `on_status_codes` says: a connection that failed before any answer, a stream
 * with no content within `first_token_timeout`, a stream that broke (issue #15: it is continued).
 */
const ALWAYS_RETRIED = new Set(['upstream_unreachable', 'first_token_timeout', 'stream_interrupted']);

/**
 * The attempt's result as the routed one. Extended in place, not copied: a copy would read `response`, which a
 * whole answer builds only when somebody needs it.
 */
function routed(result: AttemptResult, index: string, retries: number): RoutedResult {
  const out = result as RoutedResult;
  out.index = index;
  out.retries = retries;
  return out;
}

/** Discards an answer that will not be sent (its body would otherwise hold a connection). */
function discard(result: AttemptResult): void {
  if (result.answer) return; // a whole answer holds no connection
  if (result instanceof FailedAttempt && !result.responseBuilt) return; // nor does a failure never serialised
  result.response.body?.cancel().catch(() => {});
}

function runAttempt(req: GatewayRequest, attempt: Attempt, deps: EngineDeps, i: number): Promise<AttemptResult> {
  const stages = deps.attemptStages;
  while (i < stages.length && stages[i]?.applies?.(req) === false) i++;
  const stage = stages[i];
  if (!stage) return callProvider(req, attempt, deps.call);
  return stage.run(req, attempt, () => runAttempt(req, attempt, deps, i + 1)).catch((error: unknown) => {
    if (error instanceof ClientGoneError) throw error;
    const err = GatewayError.from(error, { plugin: stage.name, phase: 'attempt' });
    return { response: err.toResponse(), status: err.status, providerId: attempt.provider.id, error: err, settled: Promise.resolve({ body: undefined, error: err }) };
  });
}

function shouldRetry(result: AttemptResult, codes: readonly number[]): boolean {
  const error = result.error;
  if (error && (NEVER_RETRIED.has(error.code) || (GATEWAY_REFUSALS.has(error.code) && error.extra?.provider === undefined))) return false;
  if (error && ALWAYS_RETRIED.has(error.code)) return true;
  return codes.includes(result.status);
}

async function runLeaf(req: GatewayRequest, leaf: TargetConfig, index: string, deps: EngineDeps, log: AttemptRecord[], sent?: string): Promise<RoutedResult> {
  let resolved: ResolvedTarget;
  try {
    const r = deps.resolveProvider(leaf, req);
    resolved = r instanceof Promise ? await r : r;
  } catch (error) {
    const err = GatewayError.from(error, { phase: 'resolve-provider' });
    // No provider answered: the name the client gave is not repeated as a provider id (nor in a response header).
    return { response: err.toResponse(), status: err.status, providerId: '', error: err, index, retries: 0, settled: Promise.resolve({ body: undefined, error: err }) };
  }
  // Once per target, not per retry: the same object when no rule applies.
  const body = req.body === undefined ? undefined : applyParamRules(req.body, resolved.target);
  return attemptsFrom(req, resolved, index, deps, log, body, 0, sent);
}

/**
 * A target's attempts from retry `first` on. `sent`: the text a broken stream already gave the client, which these
 * attempts continue (resume.ts). A committed chat stream gets its resumption here: the next retry of this target.
 */
async function attemptsFrom(
  req: GatewayRequest,
  resolved: ResolvedTarget,
  index: string,
  deps: EngineDeps,
  log: AttemptRecord[],
  body: Attempt['body'],
  first: number,
  sent: string | undefined,
): Promise<RoutedResult> {
  const { provider, target } = resolved;
  const policy = retryPolicy(target);
  let continuing: Continuing | undefined = sent === undefined ? undefined : continuingAttempt(provider, target, body, sent);
  for (let retry = first; ; retry++) {
    const started = performance.now();
    // The optional members are set after, not spread in: a spread allocates and copies an object each (per attempt).
    const attempt: { -readonly [K in keyof Attempt]: Attempt[K] } = {
      index,
      target,
      provider,
      retry,
      body: continuing ? continuing.body : body,
      integrationId: resolved.integrationId,
    };
    if (continuing) attempt.continuation = continuing.continuation;
    const result = await runAttempt(req, attempt, deps, 0);
    const record: AttemptRecord = {
      index,
      providerId: result.providerId,
      retry,
      status: result.status,
      latencyMs: performance.now() - started,
      error: result.error?.message,
      integrationId: resolved.integrationId,
    };
    if (resolved.providerSlug !== undefined) record.providerSlug = resolved.providerSlug;
    if (continuing) record.continued = continuing.continuation.mode;
    log.push(record);
    // A target that refuses the prefill regenerates the answer at once (a change of request, not a retry).
    if (continuing?.continuation.mode === 'prefill' && refusesPrefill(result) && log.length < ROUTING_LIMITS.maxAttemptsPerRequest) {
      discard(result);
      continuing = regenerating(body, continuing.continuation.sent, provider);
      retry--;
      continue;
    }
    const retryable = shouldRetry(result, policy.codes);
    if (!retryable || retry >= policy.attempts || req.signal.aborted || log.length >= ROUTING_LIMITS.maxAttemptsPerRequest) {
      const out = routed(result, index, retryable && policy.attempts > 0 ? -1 : retry);
      if (continuing) out.continuation = continuing.continuation;
      const resumption = result.resumption;
      if (resumption && !result.error) {
        const at = retry;
        resumption.resume = async (broken, text) => {
          record.broken = true;
          record.error = broken.message;
          // A break is retried whatever the codes: the same target, after the usual pause, while retries are left.
          if (at >= policy.attempts || req.signal.aborted || log.length >= ROUTING_LIMITS.maxAttemptsPerRequest)
            return routed(brokenResult(broken, provider.id), index, policy.attempts > 0 ? -1 : at);
          await sleep(backoffMs(at), req.signal);
          if (req.signal.aborted) throw new ClientGoneError();
          return attemptsFrom(req, resolved, index, deps, log, body, at + 1, text);
        };
      }
      return out;
    }
    let wait = backoffMs(retry);
    if (policy.useRetryAfter && result.retryAfterMs !== undefined) {
      // A provider that asks for a longer pause than the cap is not retried: its answer goes back as it is.
      if (result.retryAfterMs > RETRY_AFTER_CAP_MS) return routed(result, index, -1);
      wait = result.retryAfterMs;
    }
    discard(result);
    await sleep(wait, req.signal);
    if (req.signal.aborted) throw new ClientGoneError();
  }
}

/** The paths of a node's children (`config.targets[1].targets[0]`): a node sits at one place in its (shared) tree. */
const pathCache = new WeakMap<GatewayConfig, string[]>();
function childPaths(node: GatewayConfig, index: string): string[] {
  let paths = pathCache.get(node);
  if (!paths || paths[0]?.startsWith(`${index}.`) === false) {
    paths = (node.targets ?? []).map((_, i) => `${index}.targets[${i}]`);
    pathCache.set(node, paths);
  }
  return paths;
}

/**
 * Routes a request through a config node: a leaf is called (with retries), a strategy node picks children. `sent`:
 * the text of a broken stream these attempts continue.
 */
export async function route(req: GatewayRequest, node: GatewayConfig, index: string, deps: EngineDeps, log: AttemptRecord[], sent?: string): Promise<RoutedResult> {
  if (!node.strategy || !node.targets?.length) return runLeaf(req, node, index, deps, log, sent);
  const strategy = deps.strategies.get(node.strategy.mode);
  if (!strategy) throw Errors.badRequest(`No strategy handles mode "${node.strategy.mode}"`, 'strategy.mode');
  const children = (deps.inheritance ?? GENERIC_INHERITANCE).targets(node);
  const paths = childPaths(node, index);
  const ctx: StrategyContext = {
    request: req,
    isAvailable: (childIndex) => {
      if (!deps.isAvailable) return true;
      // `[i]`, as the strategies name a child: read without a regex.
      const i = Number(childIndex.slice(1, -1));
      const child = children[i];
      return !child || deps.isAvailable(req, paths[i] as string, child);
    },
  };
  const order = strategy.plan(node, ctx);
  if (order.length === 0) throw Errors.badRequest('No target is available for this request', 'config.targets');

  /** The planned children from the `k`th on; `result` is the last one's, `text` what a broken stream already sent. */
  const tryFrom = async (k: number, result: RoutedResult | undefined, text: string | undefined): Promise<RoutedResult> => {
    for (; k < order.length; k++) {
      const i = order[k] as number;
      const child = children[i] as TargetConfig;
      // The request's attempt budget, whatever the config says (one saved before the limits, or never validated):
      // the last answer goes back rather than another provider being called.
      if (result && log.length >= ROUTING_LIMITS.maxAttemptsPerRequest) return result;
      if (result) discard(result);
      result = await route(req, child, paths[i] as string, deps, log, text);
      if (k === order.length - 1 || !strategy.next(result, node, child)) return resumable(result, k);
    }
    return result as RoutedResult;
  };

  /**
   * A committed stream that breaks is continued by what its child still has (retries, nested targets), then by the
   * children after it, as a failed attempt would have been (issue #15). Only such a stream allocates this closure.
   */
  const resumable = (result: RoutedResult, k: number): RoutedResult => {
    const resumption = result.resumption;
    const inner = resumption?.resume;
    if (!resumption || !inner || result.error) return result;
    resumption.resume = async (broken, text) => {
      const next = await inner(broken, text);
      if (!next.error) return resumable(next as RoutedResult, k);
      if (k === order.length - 1 || !strategy.next(next, node, children[order[k] as number] as TargetConfig)) return next;
      return tryFrom(k + 1, next as RoutedResult, text);
    };
    return result;
  };

  return tryFrom(0, undefined, sent);
}
