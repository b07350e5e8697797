/**
 * POST /v1/agent-servers/:agentServerId/a2a — the A2A proxy (docs/admin/agents.md, "Invoke"). The client speaks A2A
 * JSON-RPC to the gateway with a workspace key holding `agents.invoke`; the gateway forwards the request to the agent
 * server's upstream with the integration's credentials (through the OutboundGuard), and answers with the upstream's
 * answer: JSON as it came, or a server-sent-event stream relayed chunk by chunk as the upstream sends it. Each call
 * is one request-log row (call-log.ts).
 */
import { jsonRpcError, readCappedText } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, eq, Errors, GatewayError, newTraceId } from '@gateway/sdk';
import { FORWARDED_METHODS, isObject, STREAMING_METHODS, type TaskSeen, taskOf } from './a2a-messages.ts';
import type { AgentsContext } from './context.ts';
import type { ServerRow } from './present.ts';
import { serverUserIds, usableIntegration } from './routes/servers.ts';
import { agentServers } from './tables.ts';
import { credentialHeaders, requiredUserCredential } from './credentials.ts';
import { answerJudge, beforeAgentCall, type Judge, type Withheld } from './tool-phase.ts';
import { guardedFetch } from './upstream.ts';

export const INVOKE_SCOPE = 'agents.invoke';

/** Client headers passed on (A2A's version and extension negotiation); credentials are the gateway's, never the client's. */
const FORWARDED_HEADERS = ['a2a-version', 'a2a-extensions', 'x-a2a-extensions'] as const;
/** The most of a stream kept for the log's response body. */
const LOGGED_STREAM_BYTES = 65_536;
const EVENT_END = /\r\n\r\n|\n\n|\r\r/;
const encoder = new TextEncoder();

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
      const traceId = header('x-gateway-trace-id', 128) ?? newTraceId();
      const span = { spanId: header('x-gateway-span-id', 128), parentSpanId: header('x-gateway-parent-span-id', 128), spanName: header('x-gateway-span-name', 255) };
      let upstreamLatencyMs: number | null = null;
      const log = (status: number, response: string | null, seen: TaskSeen, events: number | null, error: string | null, rpcFailed: boolean, refusal?: GatewayError) =>
        ctx.callLog.record({
          refusedBy: refusal?.code,
          caller: req.caller,
          serverId: server.id,
          serverSlug: server.slug,
          method,
          request,
          response,
          status,
          outcome: refusal ? 'refused' : error !== null && !rpcFailed ? 'failed' : rpcFailed ? 'rpc_error' : 'ok',
          error,
          taskId: seen.taskId,
          taskState: seen.state,
          events,
          latencyMs: performance.now() - started,
          upstreamLatencyMs,
          traceId,
          ...span,
        });

      // Calls of the agent go through the tool-call phase (rate limits, guardrails on the message) before the upstream.
      const { call, withheld: refused } = await beforeAgentCall(req, ctx, server, body, traceId);
      if (refused) {
        log(refused.refusal.status, JSON.stringify(refused.reply), { taskId: null, state: null }, null, refused.refusal.message, false, refused.refusal);
        const answer = jsonRpcError(refused.refusal, body.id);
        answer.headers.set('x-gateway-trace-id', traceId);
        return answer;
      }
      const judge = answerJudge(ctx, call, body.id);

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
        return new Response(relay(upstream.body, upstream.status, log, judge), { status: upstream.status, headers: out });
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
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
        if (isObject(parsed) && isObject(parsed.error)) {
          rpcFailed = true;
          error = String(parsed.error.message ?? 'JSON-RPC error');
        } else if (isObject(parsed)) seen = taskOf(parsed.result);
      } catch {
        error ??= 'the upstream answer is not JSON';
      }
      // The answer judged before the client gets it; withheld, the JSON-RPC error takes its place (status kept).
      const withheld = judge && isObject(parsed) && ('result' in parsed || 'error' in parsed) ? await judge(parsed) : undefined;
      if (withheld) {
        const reply = JSON.stringify(withheld.reply);
        log(withheld.refusal.status, reply, seen, null, withheld.refusal.message, false, withheld.refusal);
        out.set('content-type', 'application/json');
        return new Response(reply, { status: upstream.status, headers: out });
      }
      log(upstream.status, text, seen, null, error, rpcFailed);
      return new Response(text || null, { status: upstream.status, headers: out });
    },
  };

  return [invoke];
}

type StreamLog = (status: number, response: string | null, seen: TaskSeen, events: number | null, error: string | null, rpcFailed: boolean, refusal?: GatewayError) => void;

/**
 * The upstream's event stream, each chunk passed on as soon as it arrives (never buffered to an event boundary);
 * the events are parsed on the side for the log, which is written once when the stream ends, fails or the client
 * leaves. With `judge` (a stage of the tool-call phase wants the answer: output guardrails) each event is passed on
 * whole once judged instead; a refused one is replaced by the JSON-RPC error, which ends the stream (the upstream's
 * is cancelled).
 */
function relay(body: ReadableStream<Uint8Array>, status: number, log: StreamLog, judge?: Judge): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let kept = '';
  let events = 0;
  let seen: TaskSeen = { taskId: null, state: null };
  let rpcError: string | null = null;
  let ended = false;

  /** The event's JSON-RPC message, counted and read for the log; undefined when it carries none. */
  const scan = (block: string): Record<string, unknown> | undefined => {
    const data = block
      .split(/\r\n|\n|\r/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (!data) return undefined;
    events++;
    try {
      const parsed: unknown = JSON.parse(data);
      if (!isObject(parsed)) return undefined;
      if (isObject(parsed.error)) rpcError = String(parsed.error.message ?? 'JSON-RPC error');
      const next = taskOf(parsed.result);
      seen = { taskId: next.taskId ?? seen.taskId, state: next.state ?? seen.state };
      return parsed;
    } catch {
      // Not JSON: relayed all the same, not read.
      return undefined;
    }
  };
  const end = (failure: string | null) => {
    if (ended) return;
    ended = true;
    if (buffer.trim()) scan(buffer);
    log(status, kept, seen, events, failure ?? rpcError, failure === null && rpcError !== null);
  };
  /** Judged mode: the complete events of the buffer, each judged; the text to send, and the refusal if one was. */
  const judged = async (judgeEvent: Judge, final: boolean): Promise<{ text: string; withheld?: Withheld }> => {
    let text = '';
    const blocks: string[] = [];
    for (let match = EVENT_END.exec(buffer); match; match = EVENT_END.exec(buffer)) {
      blocks.push(buffer.slice(0, match.index));
      buffer = buffer.slice(match.index + match[0].length);
    }
    if (final && buffer.trim()) blocks.push(buffer);
    if (final) buffer = '';
    for (const block of blocks) {
      const message = scan(block);
      const withheld = message && ('result' in message || 'error' in message) ? await judgeEvent(message) : undefined;
      if (withheld) return { text: `${text}data: ${JSON.stringify(withheld.reply)}\n\n`, withheld };
      text += `${block}\n\n`;
    }
    return { text };
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done && !judge) {
            controller.close();
            end(null);
            return;
          }
          const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
          if (kept.length < LOGGED_STREAM_BYTES) kept += text.slice(0, LOGGED_STREAM_BYTES - kept.length);
          buffer += text;
          if (!judge) {
            controller.enqueue(value as Uint8Array);
            for (let match = EVENT_END.exec(buffer); match; match = EVENT_END.exec(buffer)) {
              scan(buffer.slice(0, match.index));
              buffer = buffer.slice(match.index + match[0].length);
            }
            return;
          }
          const out = await judged(judge, done);
          if (out.text) controller.enqueue(encoder.encode(out.text));
          if (out.withheld) {
            const { refusal, reply } = out.withheld;
            ended = true;
            log(refusal.status, JSON.stringify(reply), seen, events, refusal.message, false, refusal);
            controller.close();
            await reader.cancel().catch(() => undefined);
            return;
          }
          if (done) {
            controller.close();
            end(null);
            return;
          }
          if (out.text) return;
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
