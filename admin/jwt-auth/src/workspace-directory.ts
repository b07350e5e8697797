/**
 * The organisation of a token's workspace, from the identity tables, remembered for a minute (an unknown id for five
 * seconds) so that tokens of one workspace cost one query a minute, not one per token.
 */
import { workspaces } from '@gateway/admin-identity';
import { type Database, eq } from '@gateway/sdk';

export interface WorkspaceFacts {
  readonly organisationId: string;
  readonly archived: boolean;
}

export interface WorkspaceDirectory {
  find(workspaceId: string): Promise<WorkspaceFacts | undefined>;
}

const FOUND_MS = 60_000;
const UNKNOWN_MS = 5_000;
const MAX_ENTRIES = 10_000;

export class DatabaseWorkspaceDirectory implements WorkspaceDirectory {
  private readonly cache = new Map<string, { facts: WorkspaceFacts | undefined; until: number }>();
  private readonly inFlight = new Map<string, Promise<WorkspaceFacts | undefined>>();

  constructor(
    private readonly database: Database,
    private readonly now: () => number = Date.now,
  ) {}

  async find(workspaceId: string): Promise<WorkspaceFacts | undefined> {
    if (workspaceId.length > 255) return undefined;
    const hit = this.cache.get(workspaceId);
    if (hit && hit.until > this.now()) return hit.facts;
    let pending = this.inFlight.get(workspaceId);
    if (!pending) {
      pending = this.load(workspaceId).finally(() => this.inFlight.delete(workspaceId));
      this.inFlight.set(workspaceId, pending);
    }
    return pending;
  }

  private async load(workspaceId: string): Promise<WorkspaceFacts | undefined> {
    const [row] = await this.database.select(workspaces, { where: (c) => eq(c.id, workspaceId), limit: 1 });
    const facts = row ? Object.freeze({ organisationId: row.organisation_id, archived: row.status === 'archived' }) : undefined;
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(workspaceId, { facts, until: this.now() + (facts ? FOUND_MS : UNKNOWN_MS) });
    return facts;
  }
}
