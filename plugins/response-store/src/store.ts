/** The stored responses (docs/responses.md, "Stored responses"): saved per workspace, read until they expire. */
import { and, type Database, eq, gt, lt, type ResponseStore, type StoredResponse } from '@gateway/sdk';
import { storedResponses } from './tables.ts';

export const DAY_MS = 86_400_000;

export class SqlResponseStore implements ResponseStore {
  constructor(
    private readonly database: Database,
    private readonly retentionMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async save(record: Omit<StoredResponse, 'createdAt'>): Promise<void> {
    const now = this.now();
    const row = {
      id: record.id,
      workspace_id: record.workspaceId,
      provider: record.provider.slice(0, 64),
      translated: record.translated,
      response: record.response,
      input_items: [...record.inputItems],
      context: [...record.context],
      created_at: now,
      expires_at: now + this.retentionMs,
    };
    // A provider that answers the same id twice (a replayed cache hit) keeps the first copy.
    await this.database.insert(storedResponses, row, { ignoreDuplicates: true });
  }

  async get(workspaceId: string, id: string): Promise<StoredResponse | undefined> {
    const now = this.now();
    const [row] = await this.database.select(storedResponses, {
      where: (c) => and(eq(c.workspace_id, workspaceId), eq(c.id, id), gt(c.expires_at, now)),
      limit: 1,
      fresh: true,
    });
    if (!row) return undefined;
    return {
      id: row.id,
      workspaceId: row.workspace_id,
      response: row.response,
      inputItems: row.input_items,
      context: row.context,
      provider: row.provider,
      translated: row.translated,
      createdAt: row.created_at,
    };
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    const now = this.now();
    const deleted = await this.database.delete(storedResponses, (c) => and(eq(c.workspace_id, workspaceId), eq(c.id, id), gt(c.expires_at, now)));
    return deleted > 0;
  }

  /** Removes expired rows; resolves to how many. */
  async sweep(): Promise<number> {
    const now = this.now();
    return this.database.delete(storedResponses, (c) => lt(c.expires_at, now));
  }
}
