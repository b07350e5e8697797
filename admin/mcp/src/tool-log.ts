/**
 * Every tool call through the proxy becomes a request-log row (through the request log's public queue service,
 * `RequestLogServices.queue`): endpoint `mcp.tools/call`, provider `mcp`, provider_slug the server's slug, model the
 * tool's name, the latency from the request to its result, and in metadata the argument size and how it ended.
 * Nothing is written when the request-log plugin is not loaded.
 */
import type { LogEntry } from '@gateway/plugin-request-log';
import type { Caller } from '@gateway/sdk';

/** `refused`: a stage of the tool-call phase refused the call or its result (a rate limit, a guardrail). */
export type ToolCallOutcome = 'ok' | 'tool_error' | 'rpc_error' | 'denied' | 'refused' | 'failed';

export interface ToolCallRecord {
  caller: Caller;
  serverId: string;
  serverSlug: string;
  tool: string;
  argumentsBytes: number;
  /** The JSON-RPC request, for the log's request body. */
  request: string;
  /** The result or error as sent to the client (the request log caps it). */
  response: string | null;
  outcome: ToolCallOutcome;
  /** The HTTP status the exchange had (403 for a denied tool, 502 when the upstream failed). */
  status: number;
  /** The JSON-RPC error's message, or why the call failed. */
  error: string | null;
  latencyMs: number;
  traceId: string;
  /** The code of the refusing error (`rate_limit_exceeded`, `guardrail_denied`) of a refused call. */
  refusedBy?: string;
}

/** What this plugin needs of the request log's queue. */
export interface LogSink {
  enqueue(entry: LogEntry): void;
}

export class ToolCallLog {
  constructor(private readonly sink: () => LogSink | undefined) {}

  record(call: ToolCallRecord): void {
    const sink = this.sink();
    if (!sink) return;
    sink.enqueue({
      traceId: call.traceId,
      spanName: `tools/call ${call.tool}`.slice(0, 255),
      organisationId: call.caller.organisationId,
      workspaceId: call.caller.workspaceId,
      apiKeyId: call.caller.apiKeyId,
      userId: call.caller.userId,
      provider: 'mcp',
      providerSlug: call.serverSlug,
      model: call.tool.slice(0, 255),
      endpoint: 'mcp.tools/call',
      method: 'POST',
      path: `/mcp/${call.serverSlug}`,
      status: call.status,
      latencyMs: Math.round(call.latencyMs),
      metadata: {
        mcp_server_id: call.serverId,
        mcp_tool: call.tool,
        mcp_arguments_bytes: String(call.argumentsBytes),
        mcp_outcome: call.outcome,
        ...(call.refusedBy ? { mcp_refused_by: call.refusedBy } : {}),
      },
      requestBody: call.request,
      requestContentType: 'application/json',
      responseBody: call.response,
      errorCode: call.outcome === 'ok' ? null : `mcp_${call.outcome}`,
      errorMessage: call.error,
      createdAt: Date.now(),
    });
  }
}
