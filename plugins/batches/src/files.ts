/**
 * /v1/files kept by the gateway (when the target does not keep files itself): upload (multipart: `file`, `purpose`),
 * list (`purpose`, `limit` 1..10000 default 10000, `after`, `order`), retrieve, content and delete, per workspace.
 */
import { and, asc, desc, Errors, eq, gt, lt, or, type DatabaseHelpers, type JobCall, type JsonObject } from '@gateway/sdk';
import type { FileStore } from './file-store.ts';
import { json, listPage, newId, nowSeconds, queryInt, segments } from './respond.ts';
import { gatewayFiles } from './tables.ts';

/** OpenAI's purposes, plus the ones the gateway writes (batch output and errors). */
const PURPOSES = new Set(['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals']);


export function fileObject(row: { id: string; bytes: number; created_at: number; filename: string; purpose: string }): JsonObject {
  return {
    id: row.id,
    object: 'file',
    bytes: Number(row.bytes),
    created_at: Number(row.created_at),
    filename: row.filename,
    purpose: row.purpose,
    status: 'processed',
    status_details: null,
    expires_at: null,
  };
}

export interface FilesDeps {
  database: DatabaseHelpers;
  store: FileStore;
}

export class GatewayFiles {
  constructor(private readonly deps: FilesDeps) {}

  /** A workspace's file row, or 404. */
  async find(workspaceId: string, id: string) {
    const [row] = await this.deps.database.select(gatewayFiles, { where: (c) => and(eq(c.id, id), eq(c.workspace_id, workspaceId)), fresh: true });
    if (!row) throw Errors.notFound(`No such File object: ${id}`);
    return row;
  }

  /** Stores bytes as a new file of the workspace (uploads and a batch's output and error files). */
  async create(call: Pick<JobCall, 'caller'>, filename: string, purpose: string, bytes: Uint8Array | string) {
    const id = newId('file-');
    const size = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.byteLength;
    await this.deps.store.put(call.caller.workspaceId, id, bytes);
    const row = { id, organisation_id: call.caller.organisationId, workspace_id: call.caller.workspaceId, filename, purpose, bytes: size, created_at: nowSeconds() };
    await this.deps.database.insert(gatewayFiles, row);
    return row;
  }

  async content(workspaceId: string, id: string): Promise<Uint8Array> {
    await this.find(workspaceId, id);
    return this.deps.store.get(workspaceId, id);
  }

  async handle(call: JobCall): Promise<Response> {
    const [id, sub, ...extra] = segments(call.path, '/files');
    const ws = call.caller.workspaceId;
    if (extra.length) throw Errors.notFound('No such route');
    if (!id) {
      if (call.method === 'POST') return json(fileObject(await this.upload(call)));
      if (call.method === 'GET') return json(await this.list(ws, new URLSearchParams(call.search)));
    } else if (!sub) {
      if (call.method === 'GET') return json(fileObject(await this.find(ws, id)));
      if (call.method === 'DELETE') {
        await this.find(ws, id);
        await this.deps.database.delete(gatewayFiles, (c) => and(eq(c.id, id), eq(c.workspace_id, ws)));
        await this.deps.store.delete(ws, id);
        return json({ id, object: 'file', deleted: true });
      }
    } else if (sub === 'content' && call.method === 'GET') {
      const bytes = await this.content(ws, id);
      return new Response(bytes, { headers: { 'content-type': 'application/octet-stream' } });
    }
    throw Errors.notFound('No such route');
  }

  private async upload(call: JobCall) {
    const type = call.headers.get('content-type') ?? '';
    if (!type.toLowerCase().startsWith('multipart/form-data')) throw Errors.badRequest('Upload a file as multipart/form-data with the fields file and purpose', 'file');
    let form: Awaited<ReturnType<Response['formData']>>;
    try {
      form = await new Response(call.body ?? new Uint8Array(), { headers: { 'content-type': type } }).formData();
    } catch {
      throw Errors.badRequest('The multipart body could not be read', 'file');
    }
    const file = form.get('file');
    const purpose = form.get('purpose');
    if (!(file instanceof Blob)) throw Errors.badRequest("Missing required parameter: 'file'", 'file');
    if (typeof purpose !== 'string' || !PURPOSES.has(purpose))
      throw Errors.badRequest(`purpose must be one of ${[...PURPOSES].join(', ')}`, 'purpose');
    const name = file instanceof File && file.name ? file.name.slice(0, 255) : 'upload';
    return this.create(call, name, purpose, new Uint8Array(await file.arrayBuffer()));
  }

  private async list(workspaceId: string, query: URLSearchParams): Promise<JsonObject> {
    const limit = queryInt(query, 'limit', 10_000, 1, 10_000);
    const order = query.get('order') ?? 'desc';
    if (order !== 'asc' && order !== 'desc') throw Errors.badRequest('order must be asc or desc', 'order');
    const purpose = query.get('purpose');
    const after = query.get('after');
    const cursor = after ? await this.find(workspaceId, after) : undefined;
    const rows = await this.deps.database.select(gatewayFiles, {
      where: (c) =>
        and(
          eq(c.workspace_id, workspaceId),
          purpose ? eq(c.purpose, purpose) : undefined,
          cursor
            ? order === 'desc'
              ? or(lt(c.created_at, cursor.created_at), and(eq(c.created_at, cursor.created_at), lt(c.id, cursor.id)))
              : or(gt(c.created_at, cursor.created_at), and(eq(c.created_at, cursor.created_at), gt(c.id, cursor.id)))
            : undefined,
        ),
      orderBy: (c) => (order === 'desc' ? [desc(c.created_at), desc(c.id)] : [asc(c.created_at), asc(c.id)]),
      limit: limit + 1,
      fresh: true,
    });
    return listPage(rows.map(fileObject) as (JsonObject & { id: string })[], limit);
  }
}
