/**
 * POST /v1/agent-servers/:agentServerId/a2a — the A2A proxy (docs/admin/agents.md, "Invoke"). The client speaks A2A
 * JSON-RPC to the gateway with a workspace key holding `agents.invoke`; the gateway forwards the request to the agent
 * server's upstream with the integration's credentials (through the OutboundGuard), and answers with the upstream's
 * answer: JSON as it came, or a server-sent-event stream relayed chunk by chunk as the upstream sends it. Each call
 * is one request-log row (call-log.ts).
 */
import { jsonRpcError, readCappedText } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, eq, Errors, GatewayError } from '@gateway/sdk';
import { FORWARDED_METHODS, isObject, STREAMING_METHODS, type TaskSeen, taskOf } from './a2a-messages.ts';
import type { AgentsContext } from './context.ts';
import type { ServerRow } from './present.ts';
import { serverUserIds, usableIntegration } from './routes/servers.ts';
import { agentServers } from './tables.ts';
import { credentialHeaders, requiredUserCredential } from './credentials.ts';
import { guardedFetch } from './upstream.ts';

export const INVOKE_SCOPE = 'agents.invoke';

/** Client headers passed on (A2A's version and extension negotiation); credentials are the gateway's, never the client's. */
const FORWARDED_HEADERS = ['a2a-version', 'a2a-extensions', 'x-a2a-extensions'] as const;
/** The most of a stream kept for the log's response body. */
const LOGGED_STREAM_BYTES = 65_536;
const EVENT_END = /\r\n\r\n|\n\n|\r\r/;

const rpcError = (id: unknown, code: number, message: string) => Response.json({ jsonrpc: '2.0', id: id ?? null, error: { code, message } });

export function invokeRoutes(ctx: AgentsContext): AdminRoute[] {
  const { database } = ctx;

  async function target(req: AdminRequest): Promise<ServerRow> {
    const ref = req.params.agentServerId ?? '';
    const [server] = await database.select(agentServers, {
      where: (c) => and(eq(c.organisation_id, req.caller.organisationId), eq(c.workspace_id, req.caller.workspaceId), eq(c.id, ref)),
      limit: 1,
    });
    if (!server) throw Errors.notFound('No such agent server in this workspace');
    if (req.caller.keyType === 'workspace-user') {
      const users = await serverUserIds(database, server.id);
      if (users.length > 0 && (req.caller.userId === null || !users.includes(req.caller.userId)))
        throw Errors.forbidden('This agent server is open to named users only, and the key\'s user is not one of them');
    }
    return server;
  }

  const invoke: AdminRoute = {
    method: 'POST',
    path: '/agent-servers/:agentServerId/a2a',
    scope: INVOKE_SCOPE,
    keyTypes: ['workspace-service', 'workspace-user'],
    audit: false,
    async handle(req) {
      const started = performance.now();
      const body = req.body;
      if (!isObject(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string' || !('id' in body))
        throw Errors.badRequest('The body must be one JSON-RPC 2.0 request (batches are not forwarded)', 'body');
      const server = await target(req);
      const method = body.method;
      if (!FORWARDED_METHODS.has(method)) return rpcError(body.id, -32601, `The gateway does not forward ${method}`);
      const integration = await usableIntegration(database, server.organisation_id, server.agent_integration_id, server.workspace_id);
      if (!integration) throw Errors.notFound('The agent server\'s integration is gone or no longer open to its workspace');
      const userValue = await requiredUserCredential(database, ctx.box, integration, server, req.caller.userId);
      const request = JSON.stringify(body);
      // The client's trace headers, as model calls take them (capped to the log's columns).
      const header = (name: string, max: number) => req.headers.get(name)?.slice(0, max) || null;
      const traceId = header('x-gateway-trace-id', 128) ?? crypto.randomUUID();
      const span = { spanId: header('x-gateway-span-id', 128), parentSpanId: header('x-gateway-parent-span-id', 128), spanName: header('x-gateway-span-name', 255) };
      let upstreamLatencyMs: number | null = null;
      const log = (status: number, response: string | null, seen: TaskSeen, events: number | null, error: string | null, rpcFailed: boolean) =>
        ctx.callLog.record({
          caller: req.caller,
          serverId: server.id,
          serverSlug: server.slug,
          method,
          request,
          response,
          status,
          outcome: error !== null && !rpcFailed ? 'failed' : rpcFailed ? 'rpc_error' : 'ok',
          error,
          taskId: seen.taskId,
          taskState: seen.state,
          events,
          latencyMs: performance.now() - started,
          upstreamLatencyMs,
          traceId,
          ...span,
        });

      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: STREAMING_METHODS.has(method) ? 'text/event-stream' : 'application/json',
      };
      for (const name of FORWARDED_HEADERS) {
        const value = req.headers.get(name);
        if (value) headers[name] = value;
      }
      let upstream: Response;
      try {
        const credentials = await credentialHeaders(integration, server.workspace_id, ctx, userValue);
        upstream = await guardedFetch(ctx.guard, integration.url, { method: 'POST', headers: { ...headers, ...credentials }, body: request, signal: req.signal }, integration.slug);
      } catch (error) {
        const status = error instanceof GatewayError ? error.status : 502;
        log(status, null, { taskId: null, state: null }, null, error instanceof Error ? error.message : String(error), false);
        throw error;
      }
      upstreamLatencyMs = performance.now() - started;
      const type = upstream.headers.get('content-type') ?? '';
      const out = new Headers({ 'x-gateway-trace-id': traceId });
      if (type) out.set('content-type', type);

      if (type.startsWith('text/event-stream') && upstream.body) {
        out.set('cache-control', 'no-cache');
        return new Response(relay(upstream.body, upstream.status, log), { status: upstream.status, headers: out });
      }
      // A whole answer is read up to TOOL_MAX_ANSWER_BYTES, counted as it arrives; past it the rest is not read.
      const text = await readCappedText(upstream, ctx.maxAnswerBytes);
      if (text === undefined) {
        const why = `the answer is larger than ${ctx.maxAnswerBytes} bytes (TOOL_MAX_ANSWER_BYTES)`;
        log(502, null, { taskId: null, state: null }, null, why, false);
        return jsonRpcError(Errors.upstreamInvalid(`a2a ${server.slug}`, why), body.id);
      }
      let seen: TaskSeen = { taskId: null, state: null };
      let rpcFailed = false;
      let error: string | null = upstream.ok ? null : `the upstream answered ${upstream.status}`;
      try {
        const parsed: unknown = JSON.parse(text);
        if (isObject(parsed) && isObject(parsed.error)) {
          rpcFailed = true;
          error = String(parsed.error.message ?? 'JSON-RPC error');
        } else if (isObject(parsed)) seen = taskOf(parsed.result);
      } catch {
        error ??= 'the upstream answer is not JSON';
      }
      log(upstream.status, text, seen, null, error, rpcFailed);
      return new Response(text || null, { status: upstream.status, headers: out });
    },
  };

  return [invoke];
}

type StreamLog = (status: number, response: string | null, seen: TaskSeen, events: number | null, error: string | null, rpcFailed: boolean) => void;

/**
 * The upstream's event stream, each chunk passed on as soon as it arrives (never buffered to an event boundary);
 * the events are parsed on the side for the log, which is written once when the stream ends, fails or the client
 * leaves.
 */
function relay(body: ReadableStream<Uint8Array>, status: number, log: StreamLog): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let kept = '';
  let events = 0;
  let seen: TaskSeen = { taskId: null, state: null };
  let rpcError: string | null = null;
  let ended = false;

  const scan = (block: string) => {
    const data = block
      .split(/\r\n|\n|\r/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (!data) return;
    events++;
    try {
      const parsed: unknown = JSON.parse(data);
      if (!isObject(parsed)) return;
      if (isObject(parsed.error)) rpcError = String(parsed.error.message ?? 'JSON-RPC error');
      const next = taskOf(parsed.result);
      seen = { taskId: next.taskId ?? seen.taskId, state: next.state ?? seen.state };
    } catch {
      // Not JSON: relayed all the same, not read.
    }
  };
  const end = (failure: string | null) => {
    if (ended) return;
    ended = true;
    if (buffer.trim()) scan(buffer);
    log(status, kept, seen, events, failure ?? rpcError, failure === null && rpcError !== null);
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          end(null);
          return;
        }
        controller.enqueue(value);
        const text = decoder.decode(value, { stream: true });
        if (kept.length < LOGGED_STREAM_BYTES) kept += text.slice(0, LOGGED_STREAM_BYTES - kept.length);
        buffer += text;
        for (let match = EVENT_END.exec(buffer); match; match = EVENT_END.exec(buffer)) {
          scan(buffer.slice(0, match.index));
          buffer = buffer.slice(match.index + match[0].length);
        }
      } catch (error) {
        end(`the stream failed: ${error instanceof Error ? error.message : String(error)}`);
        controller.error(error);
      }
    },
    async cancel(reason) {
      end('the client went away');
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}
