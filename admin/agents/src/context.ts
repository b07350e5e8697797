/** What the routes and the proxy share. */
import type { SecretBox, SecretResolver, ToolCallServices } from '@gateway/admin-kit';
import type { Database, Logger, OutboundGuard } from '@gateway/sdk';
import type { AgentCallLog } from './call-log.ts';
import type { AgentCardSync } from './card-sync.ts';

export interface AgentsContext {
  database: Database;
  box: () => SecretBox;
  guard: OutboundGuard;
  logger: Logger;
  callLog: AgentCallLog;
  /** The secret-references plugin, when loaded (secret_mappings). */
  secrets: () => SecretResolver | undefined;
  cardSync: AgentCardSync;
  /** TOOL_MAX_ANSWER_BYTES: the most of a whole (non-streamed) upstream answer the proxy reads. */
  maxAnswerBytes: number;
  /** The tool-call phase (rate limits, guardrails on agent calls) and what describing a call needs. */
  toolCalls: ToolCallServices;
}

/** A workspace named by `workspace_id` (body or query), read from the writer; 404 naming the field. */
export const BY_FIELD = { fresh: true, param: 'workspace_id' } as const;
