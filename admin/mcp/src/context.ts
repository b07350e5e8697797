/** What the routes and the proxy share. */
import type { SecretBox, SecretResolver, SecuritySettingsService, ToolCallServices } from '@gateway/admin-kit';
import type { Database, Logger, OutboundGuard, Row, StateStore } from '@gateway/sdk';
import type { McpOAuth } from './oauth.ts';
import type { McpSync } from './sync.ts';
import type { TargetCache } from './target-cache.ts';
import type { mcpIntegrations, mcpServers } from './tables.ts';
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
  /** The proxy's reads of servers, integrations and reader checks, kept a few seconds. */
  targets: TargetCache<ProxyTarget>;
  /** The tool-call phase and what describing a call needs (looked up when ready). */
  toolCalls: ToolCallServices;
}

/** What the proxy reads per call: the server and its integration (gone: undefined). */
export interface ProxyTarget {
  server: Row<typeof mcpServers>;
  integration: Row<typeof mcpIntegrations> | undefined;
}

/** A workspace named by `workspace_id` (body or query), read from the writer; 404 naming the field. */
export const BY_FIELD = { fresh: true, param: 'workspace_id' } as const;
