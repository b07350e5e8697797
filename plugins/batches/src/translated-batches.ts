/**
 * Batches translated to the provider's own batch API (sdk native-batches.ts; docs/batches.md): the config is one
 * target whose adapter has a batch translator and the batch's endpoint is one it translates. The gateway keeps the
 * batch object (its id, states, counts, files) and a gateway_native_batches row naming the provider's batch; the
 * provider runs the requests. There is no background poller: GET /v1/batches/{id} (and cancel) asks the provider,
 * and the call that first sees the upstream batch ended reads its results once and writes the output and error files.
 */
import type { SecretBox } from '@gateway/admin-kit';
import {
  and,
  type BatchStatus,
  type Caller,
  type DatabaseHelpers,
  eq,
  type GatewayConfig,
  inArray,
  isNull,
  type JobCall,
  type JsonObject,
  lt,
  type NativeBatchContext,
  type NativeBatchLine,
  type NativeBatchLineError,
  type NativeBatchState,
  type NativeBatchTarget,
  or,
} from '@gateway/sdk';
import { parseBatchInput } from './batch-input.ts';
import type { BatchRequest } from './batch-body.ts';
import type { BatchRow } from './batch-object.ts';
import { configPlace } from './batch-runner.ts';
import type { GatewayFiles } from './files.ts';
import { newBatchRow } from './new-batch-row.ts';
import { newId, nowSeconds } from './respond.ts';
import { gatewayBatches, gatewayNativeBatches } from './tables.ts';

/** The lease owner of a translated batch: the provider runs it, so no runner of the gateway ever claims it. */
export const PROVIDER_LEASE = 'provider';
/** Year 9999 in epoch ms: the provider's lease never expires. */
const NEVER_EXPIRES = 253_402_300_799_000;
/** How long one process's claim to write a batch's result files holds before another may take over. */
const FINALIZE_CLAIM_MS = 5 * 60_000;

const FINAL: ReadonlySet<BatchStatus> = new Set(['completed', 'failed', 'expired', 'cancelled']);
const OPEN: readonly BatchStatus[] = ['validating', 'in_progress', 'cancelling'];

export interface TranslatedDeps {
  database: DatabaseHelpers;
  files: GatewayFiles;
  box: SecretBox;
  /** This process's name, for the claim on writing a batch's files. */
  owner: string;
}

export function isTranslated(row: BatchRow): boolean {
  return row.lease_owner === PROVIDER_LEASE;
}

/** `stream` is dropped from a line (a batch answers whole), as the gateway-run batches do. */
function withoutStream(body: JsonObject): JsonObject {
  if (!('stream' in body) && !('stream_options' in body)) return body;
  const { stream: _s, stream_options: _o, ...rest } = body;
  return rest;
}

export class TranslatedBatches {
  constructor(private readonly deps: TranslatedDeps) {}

  /** Reads and checks the input, creates the provider's batch and records both sides. */
  async create(call: JobCall, request: BatchRequest, native: NativeBatchTarget): Promise<BatchRow> {
    const row = newBatchRow(call, request, this.deps.box, { owner: PROVIDER_LEASE, expiresAt: NEVER_EXPIRES });
    const { id } = row;
    const text = new TextDecoder().decode(await this.deps.files.content(call.caller.workspaceId, request.inputFileId));
    const parsed = parseBatchInput(text, request.endpoint);
    const lines: NativeBatchLine[] = parsed.lines.map((l) => ({ line: l.line, customId: l.customId, body: native.prepare(withoutStream(l.body)) }));
    const ctx = this.context(call, native, request.endpoint, call.config);
    const errors: NativeBatchLineError[] = parsed.errors.length ? parsed.errors : (native.translator.check?.(lines, ctx) ?? []);
    if (errors.length) {
      // As a malformed input file of a gateway-run batch: failed before anything is sent.
      const failed: BatchRow = { ...row, status: 'failed', failed_at: nowSeconds(), errors: { object: 'list', data: errors } as unknown as JsonObject };
      await this.deps.database.insert(gatewayBatches, failed);
      return failed;
    }
    const upstream = await native.translator.create(lines, ctx, { batchId: id, completionWindow: request.completionWindow, metadata: request.metadata });
    await this.deps.database.insert(gatewayNativeBatches, {
      id,
      provider: native.providerId,
      upstream_id: upstream.id,
      ref: upstream.ref ?? null,
      custom_ids: lines.map((l) => l.customId),
      finalizer: null,
      finalizer_expires_at: null,
    });
    const first: BatchRow = { ...row, total: lines.length };
    await this.deps.database.insert(gatewayBatches, first);
    return this.apply(call, first, upstream);
  }

  /** The batch as the provider sees it now (an open batch asks the provider; a final one is as stored). */
  async refresh(call: JobCall, row: BatchRow): Promise<BatchRow> {
    if (FINAL.has(row.status as BatchStatus)) return row;
    const found = await this.open(call, row);
    if (!found) return row;
    const state = await found.native.translator.retrieve(found.link.upstream_id, found.ctx, (found.link.ref ?? undefined) as JsonObject | undefined);
    return this.apply(call, row, state, found);
  }

  /** Asks the provider to cancel; the batch is `cancelling` until the provider says it ended. */
  async cancel(call: JobCall, row: BatchRow): Promise<BatchRow> {
    const found = await this.open(call, row);
    if (!found) return row;
    const state = await found.native.translator.cancel(found.link.upstream_id, found.ctx, (found.link.ref ?? undefined) as JsonObject | undefined);
    await this.deps.database.update(gatewayBatches, { status: 'cancelling', cancelling_at: nowSeconds() }, (c) =>
      and(eq(c.id, row.id), inArray(c.status, ['validating', 'in_progress'])),
    );
    return this.apply(call, await this.read(row.id), FINAL.has(state.status) ? state : { ...state, status: 'cancelling' });
  }

  private async read(id: string): Promise<BatchRow> {
    const row = await this.deps.database.findOne(gatewayBatches, 'id', id, { fresh: true });
    if (!row) throw new Error(`batch ${id} disappeared`);
    return row;
  }

  private context(call: JobCall, native: NativeBatchTarget, endpoint: string, config: GatewayConfig): NativeBatchContext {
    return {
      target: native.target,
      endpoint,
      strictWireCompliance: native.target.strict_wire_compliance !== false,
      send: (request) => call.send(request, config),
    };
  }

  /** The provider side of a batch: its row, the translator of the batch's own config, and a context. */
  private async open(call: JobCall, row: BatchRow) {
    const link = await this.deps.database.findOne(gatewayNativeBatches, 'id', row.id, { fresh: true });
    if (!link) return undefined;
    const config = this.deps.box.openJson<GatewayConfig>(row.config, configPlace(row.id));
    const native = await call.nativeBatches(config);
    // The provider's plugin is no longer loaded: the batch stays as last seen.
    if (!native || native.providerId !== link.provider) return undefined;
    return { link, native, ctx: this.context(call, native, row.endpoint, config) };
  }

  /** Records a provider state: counts and times while open; once ended, the result files and the final state. */
  private async apply(call: JobCall, row: BatchRow, state: NativeBatchState, found?: Awaited<ReturnType<TranslatedBatches['open']>>): Promise<BatchRow> {
    const now = nowSeconds();
    const at = state.at ?? {};
    if (FINAL.has(state.status)) {
      const opened = found ?? (await this.open(call, row));
      if (opened) await this.finish(row, state, opened);
      return this.read(row.id);
    }
    const values: Partial<BatchRow> = {};
    // A cancel asked through the gateway stays `cancelling` until the provider ends the batch.
    if (row.status !== 'cancelling' || state.status === 'cancelling') values.status = state.status;
    if (state.counts) Object.assign(values, { total: state.counts.total, completed: state.counts.completed, failed: state.counts.failed });
    if ((state.status === 'in_progress' || state.status === 'cancelling') && row.in_progress_at === null) values.in_progress_at = at.in_progress_at ?? now;
    if (state.status === 'cancelling' && row.cancelling_at === null) values.cancelling_at = at.cancelling_at ?? now;
    if (state.ref) await this.deps.database.update(gatewayNativeBatches, { ref: state.ref }, (c) => eq(c.id, row.id));
    if (Object.keys(values).length) await this.deps.database.update(gatewayBatches, values, (c) => and(eq(c.id, row.id), inArray(c.status, [...OPEN])));
    return this.read(row.id);
  }

  /**
   * Once the provider's batch ended: one process claims the batch (finalizing), reads the provider's results, writes
   * the output and error files in input order, and records the final state. Another caller meanwhile sees it
   * finalizing; a claim left by a process that died is taken over once it expires.
   */
  private async finish(row: BatchRow, state: NativeBatchState, found: NonNullable<Awaited<ReturnType<TranslatedBatches['open']>>>): Promise<void> {
    const { database } = this.deps;
    const now = Date.now();
    const claimed = await database.update(gatewayNativeBatches, { finalizer: this.deps.owner, finalizer_expires_at: now + FINALIZE_CLAIM_MS }, (c) =>
      and(eq(c.id, row.id), or(isNull(c.finalizer), lt(c.finalizer_expires_at, now))),
    );
    if (claimed !== 1) return;
    await database.update(gatewayBatches, { status: 'finalizing', finalizing_at: nowSeconds(), in_progress_at: row.in_progress_at ?? nowSeconds() }, (c) =>
      and(eq(c.id, row.id), inArray(c.status, [...OPEN, 'finalizing'])),
    );
    const order = new Map(found.link.custom_ids.map((id, i) => [id, i]));
    const ok: (string | undefined)[] = [];
    const bad: (string | undefined)[] = [];
    for await (const result of found.native.translator.results(found.link.upstream_id, found.ctx, (found.link.ref ?? undefined) as JsonObject | undefined, found.link.custom_ids)) {
      const index = order.get(result.customId);
      if (index === undefined) continue;
      const line = {
        id: newId('batch_req_'),
        custom_id: result.customId,
        response: result.response ? { status_code: result.response.statusCode, request_id: row.trace_id, body: result.response.body } : null,
        error: result.response ? null : (result.error ?? { code: 'batch_failed', message: 'The provider gave no answer for this request.' }),
      };
      const good = result.response !== undefined && result.response.statusCode < 300;
      (good ? ok : bad)[index] = JSON.stringify(line);
    }
    const owner = { caller: row.caller as unknown as Caller };
    const write = async (lines: (string | undefined)[], kind: string) => {
      const kept = lines.filter((l): l is string => l !== undefined);
      return kept.length ? (await this.deps.files.create(owner, `${row.id}_${kind}.jsonl`, `batch_${kind}`, `${kept.join('\n')}\n`)).id : null;
    };
    const output_file_id = await write(ok, 'output');
    const error_file_id = await write(bad, 'error');
    const completed = ok.filter((l) => l !== undefined).length;
    const failed = bad.filter((l) => l !== undefined).length;
    const at = nowSeconds();
    const stamp = { completed: 'completed_at', cancelled: 'cancelled_at', expired: 'expired_at', failed: 'failed_at' }[state.status as 'completed'] as
      | 'completed_at'
      | 'cancelled_at'
      | 'expired_at'
      | 'failed_at';
    await database.update(
      gatewayBatches,
      {
        status: state.status,
        output_file_id,
        error_file_id,
        total: Math.max(found.link.custom_ids.length, state.counts?.total ?? 0),
        completed,
        failed,
        [stamp]: state.at?.[stamp] ?? at,
        ...(state.status === 'failed' && state.errors?.length ? { errors: { object: 'list', data: state.errors } as unknown as JsonObject } : {}),
      },
      (c) => eq(c.id, row.id),
    );
  }
}
