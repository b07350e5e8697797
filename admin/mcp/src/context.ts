/** What the routes and the proxy share. */
import type { SecretBox, SecretResolver, SecuritySettingsService } from '@gateway/admin-kit';
import type { Database, Logger, OutboundGuard, StateStore } from '@gateway/sdk';
import type { McpOAuth } from './oauth.ts';
import type { McpSync } from './sync.ts';
import type { ToolCallLog } from './tool-log.ts';

export interface McpContext {
  database: Database;
  box: () => SecretBox;
  guard: OutboundGuard;
  state: StateStore;
  logger: Logger;
  sync: McpSync;
  secrets: () => SecretResolver | undefined;
  security: () => SecuritySettingsService | undefined;
  toolLog: ToolCallLog;
  oauth: McpOAuth;
  /** TOOL_MAX_ANSWER_BYTES: the most of a whole (non-streamed) upstream answer the proxy reads. */
  maxAnswerBytes: number;
}

/** A workspace named by `workspace_id` (body or query), read from the writer; 404 naming the field. */
export const BY_FIELD = { fresh: true, param: 'workspace_id' } as const;
