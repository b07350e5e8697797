/**
 * Runs gateway batches: each line of the input file goes through the gateway's own pipeline (service
 * `gatewayCalls`: the creator's key, config, hooks, limits and request log) with bounded concurrency, and its result
 * is stored once (gateway_batch_results, unique by batch and line) before it counts.
 *
 * One process runs a batch: it claims the batch's lease with one conditional UPDATE (free or expired), renews it
 * every third of BATCH_LEASE_MS while it works, and gives it back when it stops. A process that shuts down finishes
 * the lines in flight, records them and releases the lease, so the next process (or this one restarted) resumes with
 * the lines not yet recorded and none runs twice. A process killed outright loses its in-flight lines' results: those
 * few lines run again once its lease expires (docs/batches.md).
 */
import { hostname } from 'node:os';
import type { SecretBox } from '@gateway/admin-kit';
import { and, asc, type Caller, type DatabaseHelpers, eq, type GatewayCalls, type GatewayConfig, inArray, isNull, type JsonObject, type Logger, lt, or } from '@gateway/sdk';
import { parseBatchInput, type BatchLine } from './batch-input.ts';
import { BATCH_ENDPOINTS, type BatchEndpoint } from './batch-body.ts';
import type { BatchRow } from './batch-object.ts';
import type { GatewayFiles } from './files.ts';
import { newId, nowSeconds } from './respond.ts';
import { ACTIVE_STATES, gatewayBatches, gatewayBatchResults } from './tables.ts';

export interface RunnerOptions {
  /** Lines in flight per batch (BATCH_CONCURRENCY, default 16). */
  concurrency: number;
  /** How long a claim holds without renewal (BATCH_LEASE_MS, default 30 s). */
  leaseMs: number;
  /** How often a process looks for batches to take up (BATCH_POLL_INTERVAL_MS, default 5 s). */
  pollMs: number;
}

export interface RunnerDeps {
  database: DatabaseHelpers;
  files: GatewayFiles;
  calls: () => GatewayCalls;
  box: SecretBox;
  logger: Logger;
}

type Stop = 'cancel' | 'close' | 'lost';

interface Run {
  stop: Stop | undefined;
  done: Promise<void>;
}

/** Where a batch's config is sealed (bound to its row). */
export const configPlace = (id: string) => ({ table: 'gateway_batches', id, field: 'config' });

const FLUSH_EVERY = 20;

export class BatchRunner {
  /** This process's lease owner name. */
  readonly owner = `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  private readonly runs = new Map<string, Run>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(
    private readonly deps: RunnerDeps,
    readonly options: RunnerOptions,
  ) {}

  /** Takes up the batches nobody runs (left by a stopped or dead process), now and every pollMs. */
  start(): void {
    this.timer = setInterval(() => void this.poll(), this.options.pollMs);
    this.timer.unref?.();
    void this.poll();
  }

  async poll(): Promise<void> {
    if (this.closed) return;
    try {
      const now = Date.now();
      const rows = await this.deps.database.select(gatewayBatches, {
        where: (c) => and(inArray(c.status, [...ACTIVE_STATES]), or(isNull(c.lease_owner), lt(c.lease_expires_at, now))),
        orderBy: (c) => asc(c.created_at),
        limit: 20,
        fresh: true,
      });
      for (const row of rows) void this.run(row.id);
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'batches: could not look for batches to run');
    }
  }

  /** Runs the batch here if this process can claim it; resolves when it stops. */
  run(id: string): Promise<void> {
    if (this.closed || this.runs.has(id)) return Promise.resolve();
    const run: Run = { stop: undefined, done: Promise.resolve() };
    this.runs.set(id, run);
    run.done = (async () => {
      let claimed = false;
      try {
        claimed = await this.claim(id);
        if (claimed) await this.execute(id, run);
      } catch (error) {
        this.deps.logger.error({ err: error, batchId: id }, 'batches: a batch run failed; another attempt follows when its lease is free');
      } finally {
        this.runs.delete(id);
        if (claimed && run.stop !== 'lost') await this.release(id).catch(() => {});
      }
    })();
    return run.done;
  }

  /** A cancel call reached this process: the run here (if any) stops sending lines. */
  cancel(id: string): void {
    const run = this.runs.get(id);
    if (run && !run.stop) run.stop = 'cancel';
  }

  /** Stops sending lines, lets the lines in flight finish and be recorded, and gives the leases back. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    for (const run of this.runs.values()) run.stop ??= 'close';
    await Promise.all([...this.runs.values()].map((r) => r.done));
  }

  /** Resolves when no batch runs in this process (tests). */
  async idle(): Promise<void> {
    while (this.runs.size) await Promise.all([...this.runs.values()].map((r) => r.done));
  }

  private async claim(id: string): Promise<boolean> {
    const now = Date.now();
    const claimed = await this.deps.database.update(
      gatewayBatches,
      { lease_owner: this.owner, lease_expires_at: now + this.options.leaseMs },
      (c) => and(eq(c.id, id), inArray(c.status, [...ACTIVE_STATES]), or(isNull(c.lease_owner), lt(c.lease_expires_at, now), eq(c.lease_owner, this.owner))),
    );
    return claimed === 1;
  }

  private release(id: string): Promise<number> {
    return this.deps.database.update(gatewayBatches, { lease_owner: null, lease_expires_at: null }, (c) => and(eq(c.id, id), eq(c.lease_owner, this.owner)));
  }

  /** Updates the batch only while this process holds its lease. */
  private mine(id: string, values: Partial<BatchRow>): Promise<number> {
    return this.deps.database.update(gatewayBatches, values, (c) => and(eq(c.id, id), eq(c.lease_owner, this.owner)));
  }

  private async read(id: string): Promise<BatchRow> {
    const row = await this.deps.database.findOne(gatewayBatches, 'id', id, { fresh: true });
    if (!row) throw new Error(`batch ${id} disappeared`);
    return row;
  }

  private async execute(id: string, run: Run): Promise<void> {
    // Renews the lease and notices a cancel made through another process.
    const heartbeat = setInterval(async () => {
      try {
        const renewed = await this.mine(id, { lease_expires_at: Date.now() + this.options.leaseMs });
        if (renewed === 0) run.stop = 'lost';
        else if (!run.stop && (await this.read(id)).status === 'cancelling') run.stop = 'cancel';
      } catch (error) {
        this.deps.logger.warn({ err: error, batchId: id }, 'batches: could not renew a lease');
      }
    }, Math.max(50, Math.floor(this.options.leaseMs / 3)));
    try {
      await this.advance(id, run);
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async advance(id: string, run: Run): Promise<void> {
    let row = await this.read(id);
    if (row.status === 'cancelling') return this.finish(row, 'cancelled');
    let lines: BatchLine[] | undefined;
    if (row.status === 'validating' || row.status === 'in_progress') {
      const parsed = await this.input(row);
      if (parsed.errors.length) {
        await this.mine(id, { status: 'failed', failed_at: nowSeconds(), errors: { object: 'list', data: parsed.errors } as unknown as JsonObject });
        return;
      }
      lines = parsed.lines;
      if (row.status === 'validating') {
        await this.deps.database.update(
          gatewayBatches,
          { status: 'in_progress', in_progress_at: nowSeconds(), total: lines.length },
          (c) => and(eq(c.id, id), eq(c.lease_owner, this.owner), eq(c.status, 'validating')),
        );
        row = await this.read(id);
        if (row.status === 'cancelling') return this.finish(row, 'cancelled');
      }
    }
    if (row.status === 'in_progress' && lines) {
      const expired = await this.send(row, lines, run);
      if (run.stop === 'close' || run.stop === 'lost') return;
      if (run.stop === 'cancel') return this.finish(await this.read(id), 'cancelled');
      if (expired) return this.finish(row, 'expired');
      await this.mine(id, { status: 'finalizing', finalizing_at: nowSeconds() });
      row = await this.read(id);
    }
    if (row.status === 'finalizing') return this.finish(row, 'completed');
  }

  private async input(row: BatchRow): Promise<ReturnType<typeof parseBatchInput>> {
    let text: string;
    try {
      text = new TextDecoder().decode(await this.deps.files.content(row.workspace_id, row.input_file_id));
    } catch {
      return { lines: [], errors: [{ code: 'invalid_file', message: `The input file ${row.input_file_id} cannot be read.`, param: 'input_file_id', line: 0 }] };
    }
    return parseBatchInput(text, row.endpoint);
  }

  /** Sends the lines not yet recorded; true when the completion window ran out first. */
  private async send(row: BatchRow, lines: BatchLine[], run: Run): Promise<boolean> {
    const done = new Set(
      (await this.deps.database.select(gatewayBatchResults, { where: (c) => eq(c.batch_id, row.id), fresh: true })).map((r) => Number(r.line)),
    );
    const pending = lines.filter((l) => !done.has(l.line));
    const caller = row.caller as unknown as Caller;
    const config = this.deps.box.openJson<GatewayConfig>(row.config, configPlace(row.id));
    const endpoint = BATCH_ENDPOINTS[row.endpoint as BatchEndpoint];
    const calls = this.deps.calls();
    let expired = false;
    let next = 0;
    let unflushed = 0;
    const flush = async () => {
      unflushed = 0;
      const [completed, failed] = await Promise.all([
        this.deps.database.count(gatewayBatchResults, (c) => and(eq(c.batch_id, row.id), eq(c.ok, true)), { fresh: true }),
        this.deps.database.count(gatewayBatchResults, (c) => and(eq(c.batch_id, row.id), eq(c.ok, false)), { fresh: true }),
      ]);
      await this.mine(row.id, { completed, failed });
    };
    let broken = false;
    const worker = async () => {
      while (!run.stop && !broken && next < pending.length) {
        if (nowSeconds() >= Number(row.expires_at)) {
          expired = true;
          return;
        }
        const line = pending[next++]!;
        const body: JsonObject = { ...line.body };
        // A batch answers whole: a streamed answer would land in the output file as events.
        delete body.stream;
        delete body.stream_options;
        const response = await calls.call({ endpoint, body, config, caller, traceId: row.trace_id, spanName: `batch ${row.id} line ${line.line}` });
        const text = await response.text();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // Kept as text.
        }
        const result = {
          id: newId('batch_req_'),
          custom_id: line.customId,
          response: { status_code: response.status, request_id: response.headers.get('x-request-id') ?? response.headers.get('x-gateway-trace-id') ?? row.trace_id, body: parsed },
          error: null,
        };
        await this.deps.database.insert(
          gatewayBatchResults,
          { batch_id: row.id, line: line.line, ok: response.status < 300, result: JSON.stringify(result) },
          { ignoreDuplicates: true },
        );
        if (++unflushed >= FLUSH_EVERY) await flush();
      }
    };
    // Every worker is waited for, even when one fails (a database error): the lease is given back only once no line
    // of this process is in flight, so that the next owner cannot send one of them again.
    const settled = await Promise.allSettled(
      Array.from({ length: Math.min(this.options.concurrency, pending.length) }, () =>
        worker().catch((error: unknown) => {
          broken = true;
          throw error;
        }),
      ),
    );
    const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;
    if (run.stop !== 'lost') await flush();
    return expired;
  }

  /** Writes the output and error files of the recorded lines and ends the batch in `state`. */
  private async finish(row: BatchRow, state: 'completed' | 'cancelled' | 'expired'): Promise<void> {
    const results = await this.deps.database.select(gatewayBatchResults, { where: (c) => eq(c.batch_id, row.id), orderBy: (c) => asc(c.line), fresh: true });
    const ok = results.filter((r) => r.ok);
    const bad = results.filter((r) => !r.ok);
    const owner = { caller: row.caller as unknown as Caller };
    const write = async (rows: typeof results, kind: string) =>
      rows.length ? (await this.deps.files.create(owner, `${row.id}_${kind}.jsonl`, `batch_${kind}`, `${rows.map((r) => r.result).join('\n')}\n`)).id : null;
    const output_file_id = await write(ok, 'output');
    const error_file_id = await write(bad, 'error');
    const at = nowSeconds();
    await this.mine(row.id, {
      status: state,
      output_file_id,
      error_file_id,
      completed: ok.length,
      failed: bad.length,
      ...(state === 'completed' ? { completed_at: at } : state === 'cancelled' ? { cancelled_at: at } : { expired_at: at }),
    });
  }
}
