/**
 * /v1/batches run by the gateway (for a target without a native batch API): create, list (`after`, `limit` 1..100
 * default 20), retrieve and cancel, per workspace. The work itself is the runner's (batch-runner.ts).
 */
import type { SecretBox } from '@gateway/admin-kit';
import { ALL_SCOPES, and, type DatabaseHelpers, desc, eq, Errors, GATEWAY_CALL_SCOPES, inArray, type JobCall, type JsonObject, lt, or } from '@gateway/sdk';
import { BATCH_ENDPOINTS, checkBatchBody } from './batch-body.ts';
import { batchObject, type BatchRow } from './batch-object.ts';
import type { BatchRunner } from './batch-runner.ts';
import type { GatewayFiles } from './files.ts';
import { newBatchRow } from './new-batch-row.ts';
import { json, listPage, nowSeconds, parseBody, queryInt, segments } from './respond.ts';
import { gatewayBatches } from './tables.ts';
import { isTranslated, type TranslatedBatches } from './translated-batches.ts';

export interface BatchesDeps {
  database: DatabaseHelpers;
  files: GatewayFiles;
  runner: BatchRunner;
  box: SecretBox;
  /** Batches run by the provider's own batch API (translated-batches.ts). */
  translated: TranslatedBatches;
}

export class GatewayBatches {
  constructor(private readonly deps: BatchesDeps) {}

  async handle(call: JobCall): Promise<Response> {
    const [id, sub, ...extra] = segments(call.path, '/batches');
    if (extra.length) throw Errors.notFound('No such route');
    if (!id) {
      if (call.method === 'POST') return json(batchObject(await this.create(call)));
      if (call.method === 'GET') return json(await this.list(call.caller.workspaceId, new URLSearchParams(call.search)));
    } else if (!sub && call.method === 'GET') return json(batchObject(await this.retrieve(call, id)));
    else if (sub === 'cancel' && call.method === 'POST') return json(batchObject(await this.cancel(call, id)));
    throw Errors.notFound('No such route');
  }

  private async find(workspaceId: string, id: string): Promise<BatchRow> {
    const [row] = await this.deps.database.select(gatewayBatches, { where: (c) => and(eq(c.id, id), eq(c.workspace_id, workspaceId)), fresh: true });
    if (!row) throw Errors.notFound(`No such Batch object: ${id}`);
    return row;
  }

  /** A translated batch that is still open is asked of its provider (there is no background poller). */
  private async retrieve(call: JobCall, id: string): Promise<BatchRow> {
    const row = await this.find(call.caller.workspaceId, id);
    return isTranslated(row) ? this.deps.translated.refresh(call, row) : row;
  }

  private async create(call: JobCall): Promise<BatchRow> {
    const request = checkBatchBody(parseBody(call.body));
    // The lines are calls of the endpoint's kind, made as this caller: its key needs that kind's scope too.
    const needed = GATEWAY_CALL_SCOPES[BATCH_ENDPOINTS[request.endpoint]];
    if (!call.caller.scopes.includes(ALL_SCOPES) && !needed.some((scope) => call.caller.scopes.includes(scope)))
      throw Errors.forbidden(`This API key may not run ${request.endpoint} lines: it needs the ${needed.join(' or ')} scope`);
    const file = await this.deps.files.find(call.caller.workspaceId, request.inputFileId).catch(() => undefined);
    if (!file) throw Errors.badRequest(`No such File object: ${request.inputFileId}`, 'input_file_id');
    if (file.purpose !== 'batch') throw Errors.badRequest(`The input file's purpose must be batch, not ${file.purpose}`, 'input_file_id');
    // One target whose provider has a batch API the gateway translates, for this endpoint: the provider runs it.
    const native = await call.nativeBatches();
    if (native?.translator.endpoints.includes(request.endpoint)) return this.deps.translated.create(call, request, native);
    const row = newBatchRow(call, request, this.deps.box, { owner: null, expiresAt: null });
    const { id } = row;
    await this.deps.database.insert(gatewayBatches, row);
    // Started here at once; another process takes it up only if this one stops holding it.
    void this.deps.runner.run(id);
    return row;
  }

  private async list(workspaceId: string, query: URLSearchParams): Promise<JsonObject> {
    const limit = queryInt(query, 'limit', 20, 1, 100);
    const after = query.get('after');
    const cursor = after ? await this.find(workspaceId, after) : undefined;
    const rows = await this.deps.database.select(gatewayBatches, {
      where: (c) =>
        and(
          eq(c.workspace_id, workspaceId),
          cursor ? or(lt(c.created_at, cursor.created_at), and(eq(c.created_at, cursor.created_at), lt(c.id, cursor.id))) : undefined,
        ),
      orderBy: (c) => [desc(c.created_at), desc(c.id)],
      limit: limit + 1,
      fresh: true,
    });
    return listPage(rows.map(batchObject) as (JsonObject & { id: string })[], limit);
  }

  private async cancel(call: JobCall, id: string): Promise<BatchRow> {
    const workspaceId = call.caller.workspaceId;
    const row = await this.find(workspaceId, id);
    if (row.status === 'cancelling' || row.status === 'cancelled') return isTranslated(row) ? this.deps.translated.refresh(call, row) : row;
    if (isTranslated(row)) {
      if (row.status !== 'validating' && row.status !== 'in_progress') throw Errors.conflict(`A batch that is ${row.status} cannot be cancelled`, 'batch_id');
      return this.deps.translated.cancel(call, row);
    }
    const changed = await this.deps.database.update(gatewayBatches, { status: 'cancelling', cancelling_at: nowSeconds() }, (c) =>
      and(eq(c.id, id), inArray(c.status, ['validating', 'in_progress'])),
    );
    if (changed === 0) throw Errors.conflict(`A batch that is ${(await this.find(workspaceId, id)).status} cannot be cancelled`, 'batch_id');
    // The run in this process stops at once; one in another process at its next lease renewal; none: taken up here.
    this.deps.runner.cancel(id);
    void this.deps.runner.run(id);
    return this.find(workspaceId, id);
  }
}
