/**
 * HADR mode (MYSQL_WRITER_HADR_MODE=ON): whether the MySQL writer is reachable. A connection failure on any writer
 * call, or a failed heartbeat, marks it down; while it is down every writer call fails at once with
 * `database_writer_unavailable` (503) instead of waiting on a dead host, and a probe tries to reconnect in the
 * background until the writer answers again. No restart is needed on either side.
 */
import { type DatabaseHealth, Errors, GatewayError, type Logger } from '@gateway/sdk';

export interface WriterHealthOptions {
  /** Pause between two heartbeats of a writer that is up (ms); a heartbeat notices a writer gone while idle. */
  heartbeatMs?: number;
  /** Pause between two reconnect attempts while the writer is down (ms). */
  probeMs?: number;
  logger?: Pick<Logger, 'warn' | 'info'>;
}

export const WRITER_UNAVAILABLE = 'database_writer_unavailable';

/** mysql2 and socket codes that mean "the server is not there", as opposed to a bad statement. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_NORMAL_SHUTDOWN',
]);

/** Each error in a `cause` chain (drizzle wraps the driver's error), at most a few deep. */
function* chain(err: unknown): Generator<unknown> {
  let current = err;
  for (let depth = 0; depth < 5 && current != null; depth++) {
    yield current;
    current = current instanceof Error ? current.cause : undefined;
  }
}

/** True when the error (or its cause) says the connection to the server failed or was lost. */
export function isConnectionError(err: unknown): boolean {
  for (const e of chain(err)) {
    if (typeof e !== 'object' || e === null) continue;
    const { code, fatal } = e as { code?: unknown; fatal?: unknown };
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
    // mysql2 flags errors that end the connection (handshake, socket, protocol) as fatal.
    if (fatal === true) return true;
  }
  return false;
}

/** The `database_writer_unavailable` error in a cause chain, if there is one. */
export function writerUnavailableIn(err: unknown): GatewayError | undefined {
  for (const e of chain(err)) if (e instanceof GatewayError && e.code === WRITER_UNAVAILABLE) return e;
  return undefined;
}

/** Short and free of statement text: the driver's code and message (no parameters, no bodies). */
function describe(err: unknown): string {
  for (const e of chain(err)) {
    const code = (e as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && e instanceof Error) return `${code}: ${e.message}`.slice(0, 200);
  }
  return (err instanceof Error ? err.message : String(err)).slice(0, 200);
}

function unavailable(cause: unknown): GatewayError {
  const error = Errors.writerUnavailable();
  error.cause = cause;
  return error;
}

export class WriterHealth {
  private reason: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private checking = false;
  private readonly heartbeatMs: number;
  private readonly probeMs: number;

  constructor(
    /** One round trip to the writer (`SELECT 1`); rejects when it is not reachable. */
    private readonly check: () => Promise<unknown>,
    private readonly o: WriterHealthOptions = {},
  ) {
    this.heartbeatMs = o.heartbeatMs ?? 2_000;
    this.probeMs = o.probeMs ?? 1_000;
    this.schedule(this.heartbeatMs);
  }

  get isDown(): boolean {
    return this.reason !== undefined;
  }

  health(): DatabaseHealth {
    return this.reason === undefined ? { status: 'ok' } : { status: 'degraded', reason: `writer database unavailable (${this.reason})` };
  }

  /** Before a writer call: throws 503 at once while the writer is down. */
  gate(): void {
    if (this.reason !== undefined) throw unavailable(new Error(this.reason));
  }

  /** After a writer call failed: a connection failure marks the writer down and becomes the 503; others pass. */
  observe(err: unknown): unknown {
    if (writerUnavailableIn(err)) return err;
    if (!isConnectionError(err)) return err;
    this.markDown(err);
    return unavailable(err);
  }

  /** Runs a writer call under the gate and `observe`. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    this.gate();
    try {
      return await fn();
    } catch (err) {
      throw this.observe(err);
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private markDown(err: unknown): void {
    if (this.reason !== undefined) return;
    this.reason = describe(err);
    this.o.logger?.warn({ reason: this.reason }, 'writer database down: reads go on from the reader, writes answer 503 until it is back');
    // Probe soon rather than at the next heartbeat (a check under way schedules the next one when it ends).
    if (!this.checking) this.schedule(this.probeMs);
  }

  private markUp(): void {
    if (this.reason === undefined) return;
    this.o.logger?.info({ was: this.reason }, 'writer database reachable again: writes resumed');
    this.reason = undefined;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    // Never what keeps a process alive.
    this.timer.unref?.();
  }

  /** One check at a time; the next is scheduled when it ends. */
  private async tick(): Promise<void> {
    this.timer = undefined;
    if (this.checking || this.stopped) return;
    this.checking = true;
    try {
      await this.check();
      this.markUp();
    } catch (err) {
      // A writer that cannot answer SELECT 1 is not usable, whatever the reason.
      this.markDown(err);
    } finally {
      this.checking = false;
    }
    this.schedule(this.isDown ? this.probeMs : this.heartbeatMs);
  }
}
