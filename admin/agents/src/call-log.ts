/**
 * Every A2A call through the gateway becomes a request-log row through the request log's public queue service
 * (`RequestLogServices.queue`), as model calls do: endpoint `a2a.<method>`, provider `a2a`, provider_slug the agent
 * server's slug, the latency to the end of the answer (a stream's last event), the HTTP status, and in metadata the
 * JSON-RPC method, the task id and state last seen, the number of streamed events and how the call ended.
 * Nothing is written when the request-log plugin is not loaded.
 */
import type { LogEntry } from '@gateway/plugin-request-log';
import type { Caller } from '@gateway/sdk';

/** `refused`: a stage of the tool-call phase refused the call or its answer (a rate limit, a guardrail). */
export type AgentCallOutcome = 'ok' | 'rpc_error' | 'refused' | 'failed';

export interface AgentCallRecord {
  caller: Caller;
  serverId: string;
  serverSlug: string;
  method: string;
  request: string;
  /** The answer (a stream's events joined), capped by the request log. */
  response: string | null;
  status: number;
  outcome: AgentCallOutcome;
  error: string | null;
  taskId: string | null;
  taskState: string | null;
  events: number | null;
  latencyMs: number;
  upstreamLatencyMs: number | null;
  traceId: string;
  /** The client's `x-gateway-span-id`, `x-gateway-parent-span-id` and `x-gateway-span-name`, as for model calls. */
  spanId: string | null;
  parentSpanId: string | null;
  spanName: string | null;
  /** The code of the refusing error (`rate_limit_exceeded`, `guardrail_denied`) of a refused call. */
  refusedBy?: string;
}

export interface LogSink {
  enqueue(entry: LogEntry): void;
}

export class AgentCallLog {
  constructor(private readonly sink: () => LogSink | undefined) {}

  record(call: AgentCallRecord): void {
    const sink = this.sink();
    if (!sink) return;
    const metadata: Record<string, string> = { a2a_server_id: call.serverId, a2a_method: call.method, a2a_outcome: call.outcome };
    if (call.taskId) metadata.a2a_task_id = call.taskId;
    if (call.taskState) metadata.a2a_task_state = call.taskState;
    if (call.events !== null) metadata.a2a_events = String(call.events);
    if (call.refusedBy) metadata.a2a_refused_by = call.refusedBy;
    sink.enqueue({
      traceId: call.traceId,
      spanId: call.spanId,
      parentSpanId: call.parentSpanId,
      spanName: (call.spanName ?? `a2a ${call.method}`).slice(0, 255),
      organisationId: call.caller.organisationId,
      workspaceId: call.caller.workspaceId,
      apiKeyId: call.caller.apiKeyId,
      userId: call.caller.userId,
      provider: 'a2a',
      providerSlug: call.serverSlug,
      model: call.serverSlug,
      endpoint: `a2a.${call.method}`.slice(0, 255),
      method: 'POST',
      path: `/agent-servers/${call.serverId}/a2a`,
      status: call.status,
      latencyMs: Math.round(call.latencyMs),
      upstreamLatencyMs: call.upstreamLatencyMs === null ? null : Math.round(call.upstreamLatencyMs),
      metadata,
      requestBody: call.request,
      requestContentType: 'application/json',
      responseBody: call.response,
      errorCode: call.outcome === 'ok' ? null : `a2a_${call.outcome}`,
      errorMessage: call.error,
      createdAt: Date.now(),
    });
  }
}
