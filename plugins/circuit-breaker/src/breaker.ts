/**
 * The circuit breaker (SPEC.md "Circuit breaker", config `cb_config`).
 *
 * One circuit per target (see identity.ts). States:
 *
 * | state     | attempt                                   | on failure                       | on success      |
 * |-----------|-------------------------------------------|----------------------------------|-----------------|
 * | closed    | called                                    | count; at the threshold → open   | count reset     |
 * | open      | refused: 503 `circuit_open` (retryable)   | –                                | –               |
 * | half-open | (cooldown over) ONE probe is called, the  | probe failed → open for another  | probe succeeded |
 * |           | others are refused                        | cooldown                         | → closed        |
 *
 * A failure is a status in `failure_status_codes` (default: status > 500), or a network error or timeout
 * (`upstream_unreachable`, `request_timeout`). Anything else counts as a success.
 *
 * Shared state (the StateStore: in the process, or Redis so that every gateway process shares one circuit):
 * - `<prefix><id>:f` failure count, `incr` with a window of one cooldown_interval (deleted by a success or when the
 *   circuit opens);
 * - `<prefix><id>:o` open marker: the epoch ms until which the circuit is open. It lives two cooldowns so that a
 *   process seeing it after the cooldown knows the circuit is half-open (probe first) rather than closed. A probe
 *   that succeeds writes `0` (closed) there.
 * - `<prefix><id>:p` probe claim (`incr`, first claimer probes), so one probe runs across all processes.
 *
 * Strategies plan synchronously, so `isAvailable` answers from a local view of the circuits this process has seen.
 * That view is refreshed from the store every `refreshMs` (250 ms) by an unref'd timer when the store is shared, read
 * once on the first attempt of a circuit, and again right before a half-open probe. Local decisions (a failure
 * reaching the threshold, a probe's outcome) update the view at once.
 *
 * When the store rejects or is slow (Redis down), the breaker degrades to the local view: failures are counted per
 * process and each process trips its own circuits. The breaker never fails a request because of the store.
 */
import type { Attempt, AttemptResult, AttemptStage, GatewayRequest, Logger, StateStore, TargetConfig } from '@gateway/sdk';
import { GatewayError } from '@gateway/sdk';
import { type CbConfig, cachedCircuitId, hasCircuitBreaker, nodeAt } from './identity.ts';

export type CircuitStatus = 'closed' | 'open' | 'half_open';

export interface CircuitView {
  id: string;
  status: CircuitStatus;
  /** Epoch ms until which the circuit is (or was) open; 0 when closed. */
  openUntil: number;
  /** Failures this process counted since the last success or opening. */
  localFailures: number;
}

export interface CircuitBreakerOptions {
  state: StateStore;
  logger?: Logger;
  /** Wall clock in epoch ms; tests inject a controllable one. */
  now?: () => number;
  /** Prefix of the state keys (the Redis store adds its own `gw:` in front). */
  keyPrefix?: string;
  /** How often the open markers of seen circuits are re-read from a shared store. */
  refreshMs?: number;
  /** Longest an attempt waits for the store before deciding from the local view. */
  storeWaitMs?: number;
  /** Plugin name, for errors and logs. */
  name?: string;
}

interface Circuit {
  readonly id: string;
  readonly failuresKey: string;
  readonly openKey: string;
  readonly probeKey: string;
  /** 0: closed; otherwise the end of the cooldown (before it: open; after it: half-open). */
  openUntil: number;
  /** Half-open: no attempt is let through before this (Infinity while this process's probe runs). */
  probeUntil: number;
  /** Opened while the store was unavailable: written to the store once it is back; a stale "closed" marker there must not close it. */
  localOnly: boolean;
  /** The cooldown of the last opening (for the marker's lifetime). */
  cooldownMs: number;
  /** Failures counted by this process (decides when the store is unavailable). */
  failures: number;
  /** Last failure count read from the store. */
  storeFailures: number;
  /** When this process last reset the shared count after a success. */
  lastReset: number;
  /** The store's marker has been read at least once. */
  synced: boolean;
  /** Bumped by every local change, so that a store read started before it is not applied over it. */
  version: number;
  seenAt: number;
}

const FAILED = Symbol('store unavailable');
type Stored<T> = T | typeof FAILED;

/** Marker value of a circuit closed by a successful probe. */
const CLOSED = '0';
const CLOSED_MARKER_TTL_MS = 10 * 60_000;
/** Half-open and another process holds the probe: how long this process stops offering the target. */
const FOREIGN_PROBE_HOLD_MS = 1_000;
/** Circuits not seen for this long (and not open) leave the local view and the refresh. */
const IDLE_MS = 10 * 60_000;
/** A success resets the shared failure count at most this often per circuit unless this process saw failures. */
const RESET_EVERY_MS = 1_000;

/** Whether an attempt's result is a failure for the circuit. */
export function isFailure(result: AttemptResult, cb: CbConfig): boolean {
  const code = result.error?.code;
  if (code === 'upstream_unreachable' || code === 'request_timeout') return true;
  if (code === 'circuit_open') return false;
  return cb.failure_status_codes ? cb.failure_status_codes.includes(result.status) : result.status > 500;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`state store did not answer within ${ms} ms`)), ms);
    timer.unref?.();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The attempt stage's name (the `before`/`after` of other stages name it). */
export const CIRCUIT_BREAKER_STAGE = 'circuit-breaker';

export class CircuitBreaker {
  /** Replaceable clock (epoch ms): tests move time past a cooldown without waiting. */
  now: () => number;
  readonly stage: AttemptStage;
  private readonly state: StateStore;
  private readonly logger: Logger | undefined;
  private readonly prefix: string;
  private readonly refreshMs: number;
  private readonly storeWaitMs: number;
  private readonly name: string;
  private readonly circuits = new Map<string, Circuit>();
  private timer: Timer | undefined;
  private refreshing: Promise<void> | undefined;
  private degraded = false;

  constructor(opts: CircuitBreakerOptions) {
    this.state = opts.state;
    this.logger = opts.logger;
    this.now = opts.now ?? Date.now;
    this.prefix = opts.keyPrefix ?? 'cb:';
    this.refreshMs = opts.refreshMs ?? 250;
    this.storeWaitMs = opts.storeWaitMs ?? 250;
    this.name = opts.name ?? 'circuit-breaker';
    this.stage = {
      // The name other attempt stages order themselves against: a stage that answers by itself (the response cache,
      // a rate limit) says `before: 'circuit-breaker'`, so that its hits and refusals never count against a circuit.
      name: CIRCUIT_BREAKER_STAGE,
      phase: 'attempt',
      rule: 'sequential',
      applies: (req) => hasCircuitBreaker(req.config),
      run: (req, attempt, next) => this.run(req, attempt, next),
    };
  }

  /** Starts the background refresh when the store is shared between processes (an in-process store needs none). */
  start(): void {
    if (this.timer || this.state.kind === 'memory') return;
    this.timer = setInterval(() => void this.refresh(), this.refreshMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.refreshing;
  }

  /**
   * Whether a target may be tried now: synchronous, from the local view. A strategy node is available when any
   * target under it is. `target` is the child with inherited settings applied; `index` its full path.
   */
  isAvailable = (req: GatewayRequest, index: string, target: TargetConfig): boolean => {
    if (!hasCircuitBreaker(req.config)) return true;
    return this.nodeAvailable(target, index, target.cb_config, target.custom_host, this.now());
  };

  private nodeAvailable(node: TargetConfig, index: string, cb: CbConfig | undefined, customHost: string | undefined, now: number): boolean {
    if (node.strategy && node.targets?.length) {
      if (cb === undefined && !hasCircuitBreaker(node)) return true;
      return node.targets.some((child, i) =>
        this.nodeAvailable(child, `${index}.targets[${i}]`, child.cb_config ?? cb, child.custom_host ?? customHost, now),
      );
    }
    if (!cb) return true;
    const circuit = this.circuit(cachedCircuitId(node, index, customHost), now);
    if (circuit.openUntil === 0) return true;
    if (now < circuit.openUntil) return false;
    return circuit.probeUntil <= now;
  }

  /** The local view of every circuit this process knows (for tests and diagnostics). */
  view(): CircuitView[] {
    const now = this.now();
    return [...this.circuits.values()].map((c) => ({
      id: c.id,
      status: c.openUntil === 0 ? 'closed' : now < c.openUntil ? 'open' : 'half_open',
      openUntil: c.openUntil,
      localFailures: c.failures,
    }));
  }

  /** Re-reads the open markers of the circuits this process has seen; drops circuits idle for long. */
  refresh(): Promise<void> {
    if (this.refreshing) return this.refreshing;
    const run = async () => {
      const now = this.now();
      const live: Circuit[] = [];
      for (const c of this.circuits.values()) {
        const busy = c.probeUntil === Number.POSITIVE_INFINITY || (c.openUntil !== 0 && now < c.openUntil);
        if (!busy && now - c.seenAt > IDLE_MS) this.circuits.delete(c.id);
        else live.push(c);
      }
      await Promise.all(live.map((c) => this.sync(c, true)));
      // While the store is down, the refresh is what notices it is back (requests no longer ask it).
      if (this.degraded && live.length === 0) await this.store(() => this.state.get(`${this.prefix}ping`), true);
    };
    this.refreshing = run().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  // ---- the attempt stage ------------------------------------------------------------------------------------

  private async run(req: GatewayRequest, attempt: Attempt, next: () => Promise<AttemptResult>): Promise<AttemptResult> {
    const at = nodeAt(req.config, attempt.index);
    const cb = at ? at.cb : attempt.target.cb_config;
    if (!cb) return next();
    const id = at ? cachedCircuitId(at.node, attempt.index, at.customHost) : cachedCircuitId(attempt.target, attempt.index, attempt.target.custom_host);
    const circuit = this.circuit(id, this.now());
    if (!circuit.synced) await this.sync(circuit);

    let probe = false;
    if (circuit.openUntil !== 0) {
      if (!this.mayProbe(circuit)) return this.refuse(circuit, attempt);
      // Half-open: look at the shared state once more (another process may have closed or re-opened it) …
      await this.sync(circuit);
      if (circuit.openUntil !== 0) {
        if (!this.mayProbe(circuit)) return this.refuse(circuit, attempt);
        // … then claim the single probe: here first (synchronously), then across processes.
        circuit.probeUntil = Number.POSITIVE_INFINITY;
        const claim = await this.store(() => this.state.incr(circuit.probeKey, 1, cb.cooldown_interval));
        if (claim !== FAILED && claim > 1) {
          circuit.probeUntil = this.now() + FOREIGN_PROBE_HOLD_MS;
          return this.refuse(circuit, attempt);
        }
        probe = true;
      }
    }

    let result: AttemptResult;
    try {
      result = await next();
    } catch (error) {
      // The client went away: the probe proved nothing; let the next request probe.
      if (probe) this.releaseProbe(circuit);
      throw error;
    }
    const failed = isFailure(result, cb);
    if (probe) {
      if (failed) await this.openCircuit(circuit, cb, 'probe failed');
      else this.closeCircuit(circuit);
    } else if (failed) {
      await this.failure(circuit, cb);
    } else {
      this.success(circuit);
    }
    return result;
  }

  private mayProbe(circuit: Circuit): boolean {
    const now = this.now();
    return now >= circuit.openUntil && circuit.probeUntil <= now;
  }

  private refuse(circuit: Circuit, attempt: Attempt): AttemptResult {
    const now = this.now();
    const waitMs = circuit.openUntil > now ? circuit.openUntil - now : FOREIGN_PROBE_HOLD_MS;
    const error = new GatewayError({
      code: 'circuit_open',
      status: 503,
      message: `Target ${attempt.index} is not called: its circuit breaker is open after repeated failures`,
      retryable: true,
      headers: { 'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))) },
      extra: { provider: attempt.provider.id },
      plugin: this.name,
      phase: 'attempt',
    });
    return {
      response: error.toResponse(),
      status: error.status,
      providerId: attempt.provider.id,
      error,
      settled: Promise.resolve({ body: undefined, error }),
    };
  }

  // ---- transitions ------------------------------------------------------------------------------------------

  private async failure(circuit: Circuit, cb: CbConfig): Promise<void> {
    // Open or half-open: an attempt that started before the circuit opened proves nothing more.
    if (circuit.openUntil !== 0) return;
    circuit.failures++;
    const shared = await this.store(() => this.state.incr(circuit.failuresKey, 1, cb.cooldown_interval));
    if (shared !== FAILED) circuit.storeFailures = shared;
    const count = shared === FAILED ? circuit.failures : shared;
    if (count >= cb.failure_threshold && circuit.openUntil === 0) await this.openCircuit(circuit, cb, `${count} failures`);
  }

  private success(circuit: Circuit): void {
    if (circuit.openUntil !== 0) return;
    circuit.failures = 0;
    const now = this.now();
    if (circuit.storeFailures > 0 || now - circuit.lastReset >= RESET_EVERY_MS) {
      circuit.storeFailures = 0;
      circuit.lastReset = now;
      void this.store(() => this.state.del(circuit.failuresKey));
    }
  }

  private async openCircuit(circuit: Circuit, cb: CbConfig, reason: string): Promise<void> {
    const until = this.now() + cb.cooldown_interval;
    const wasProbe = circuit.probeUntil === Number.POSITIVE_INFINITY;
    circuit.openUntil = until;
    circuit.cooldownMs = cb.cooldown_interval;
    circuit.probeUntil = 0;
    circuit.failures = 0;
    circuit.storeFailures = 0;
    circuit.version++;
    this.logger?.warn({ circuit: circuit.id, until: new Date(until).toISOString(), reason }, 'circuit breaker opened');
    const marked = await this.store(() => this.state.set(circuit.openKey, String(until), 2 * cb.cooldown_interval));
    circuit.localOnly = marked === FAILED;
    void this.store(() => this.state.del(circuit.failuresKey));
    if (wasProbe) void this.store(() => this.state.del(circuit.probeKey));
    if (marked !== FAILED) void this.refresh();
  }

  private closeCircuit(circuit: Circuit): void {
    circuit.openUntil = 0;
    circuit.probeUntil = 0;
    circuit.localOnly = false;
    circuit.failures = 0;
    circuit.storeFailures = 0;
    circuit.lastReset = this.now();
    circuit.version++;
    this.logger?.info({ circuit: circuit.id }, 'circuit breaker closed: the probe succeeded');
    void this.store(() => this.state.set(circuit.openKey, CLOSED, CLOSED_MARKER_TTL_MS));
    void this.store(() => this.state.del(circuit.failuresKey));
    void this.store(() => this.state.del(circuit.probeKey));
  }

  private releaseProbe(circuit: Circuit): void {
    if (circuit.probeUntil === Number.POSITIVE_INFINITY) circuit.probeUntil = 0;
    void this.store(() => this.state.del(circuit.probeKey));
  }

  // ---- the local view and the store -------------------------------------------------------------------------

  private circuit(id: string, now: number): Circuit {
    let circuit = this.circuits.get(id);
    if (!circuit) {
      const base = this.prefix + id;
      circuit = {
        id,
        failuresKey: `${base}:f`,
        openKey: `${base}:o`,
        probeKey: `${base}:p`,
        openUntil: 0,
        probeUntil: 0,
        localOnly: false,
        cooldownMs: 0,
        failures: 0,
        storeFailures: 0,
        lastReset: 0,
        synced: false,
        version: 0,
        seenAt: now,
      };
      this.circuits.set(id, circuit);
    }
    circuit.seenAt = now;
    return circuit;
  }

  /** Reads the circuit's open marker and applies it, unless the local view changed meanwhile. */
  private async sync(circuit: Circuit, background = false): Promise<void> {
    const version = circuit.version;
    const value = await this.store(() => this.state.get(circuit.openKey), background);
    circuit.synced = true;
    if (value === FAILED || circuit.version !== version) return;
    if (circuit.localOnly) {
      // Opened while the store was unavailable: share it now that the store is back, unless the store already
      // holds a later opening.
      const until = circuit.openUntil;
      if (this.now() < until && !(Number(value) >= until)) {
        const marked = await this.store(() => this.state.set(circuit.openKey, String(until), 2 * circuit.cooldownMs));
        if (marked !== FAILED && circuit.openUntil === until) circuit.localOnly = false;
        return;
      }
      circuit.localOnly = false;
    }
    if (value === null) return;
    const until = Number(value);
    if (!Number.isFinite(until)) return;
    if (until === 0) {
      // Closed by a successful probe (here or in another process).
      if (circuit.openUntil === 0) return;
      circuit.openUntil = 0;
      circuit.failures = 0;
      circuit.version++;
      this.logger?.debug({ circuit: circuit.id }, 'circuit breaker closed by another process');
    } else if (until > circuit.openUntil) {
      // Opened (or re-opened after a failed probe) by another process.
      circuit.openUntil = until;
      circuit.localOnly = false;
      circuit.failures = 0;
      circuit.version++;
      this.logger?.debug({ circuit: circuit.id, until: new Date(until).toISOString() }, 'circuit breaker opened by another process');
    }
  }

  /**
   * Runs a store operation; on rejection or slowness answers FAILED and the breaker degrades to its local view.
   * While degraded, operations on the request path are not tried at all (each would wait out the timeout on a
   * hanging store); only the background refresh tries the store, and its first success ends the degradation.
   */
  private async store<T>(op: () => Promise<T>, background = false): Promise<Stored<T>> {
    if (this.degraded && !background) return FAILED;
    try {
      const value = await withTimeout(op(), this.storeWaitMs);
      if (this.degraded) {
        this.degraded = false;
        this.logger?.info('circuit breaker: state store reachable again; circuits are shared again');
      }
      return value;
    } catch (error) {
      if (!this.degraded) {
        this.degraded = true;
        this.logger?.warn(
          { err: error },
          'circuit breaker: state store unavailable; each process now decides from its own view (trips its own circuits)',
        );
      }
      return FAILED;
    }
  }
}
