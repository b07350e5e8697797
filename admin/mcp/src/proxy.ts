/**
 * /v1/mcp/:slug — the MCP proxy (docs/admin/mcp.md, "Proxy"). It speaks MCP streamable HTTP to the client,
 * authenticated by gateway API key (scope `mcp_servers.invoke`), and forwards to the server of the caller's workspace
 * with that slug: POST (requests, notifications, responses), GET (the server's own event stream) and DELETE (end
 * of session). The gateway adds the upstream credentials, maps its own session ids to the upstream's, filters
 * tools/list by the server's allow and deny lists, refuses a call of a tool they exclude, and logs every tool call.
 */
import { asGatewayError, describeToolCall, jsonRpcError, jsonRpcErrorMessage, readCappedText, stringsIn } from '@gateway/admin-kit';
import { type AdminRequest, type AdminRoute, and, eq, Errors, GatewayError, type Json } from '@gateway/sdk';
import { requireReader } from './access.ts';
import type { McpContext } from './context.ts';
import type { ServerRow } from './present.ts';
import type { McpSessions } from './sessions.ts';
import { passEvents } from './sse.ts';
import { SseBridge, type SseBridges } from './sse-bridge.ts';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { connectionSecretAt, mcpConnections, mcpIntegrations, mcpServers } from './tables.ts';
import { Exchange, isObject, type Message, type PendingCall, toolAllowed } from './exchange.ts';
import { type Upstream, upstreamOf } from './upstream.ts';

export const INVOKE_SCOPE = 'mcp_servers.invoke';
export { toolAllowed } from './exchange.ts';

const SESSION = 'mcp-session-id';
/** Headers of the client's request passed on to the upstream (credentials are the gateway's, never the client's). */
const FORWARDED = ['accept', 'mcp-protocol-version', 'last-event-id'] as const;

export function proxyRoutes(ctx: McpContext, sessions: McpSessions, bridges: SseBridges): AdminRoute[] {
  const { database } = ctx;

  async function target(req: AdminRequest): Promise<{ server: ServerRow; upstream: Upstream }> {
    const slug = req.params.slug ?? '';
    const workspaceId = req.caller.workspaceId;
    // Kept for a few seconds, cleared by any MCP administration write (target-cache.ts).
    const found = await ctx.targets.target(workspaceId, slug, async () => {
      const [server] = await database.select(mcpServers, { where: (c) => and(eq(c.workspace_id, workspaceId), eq(c.slug, slug)), limit: 1 });
      if (!server) return undefined;
      const [integration] = await database.select(mcpIntegrations, { where: (c) => eq(c.id, server.mcp_integration_id), limit: 1 });
      return { server, integration };
    });
    if (!found) throw Errors.notFound(`No MCP server ${JSON.stringify(slug)} in this workspace`);
    const { server, integration } = found;
    const reader = `${req.caller.apiKeyId}\n${server.workspace_id}`;
    if (!ctx.targets.readerKnown(reader)) {
      const generation = ctx.targets.currentGeneration;
      await requireReader(req.principal, server.workspace_id, 'No such MCP server');
      ctx.targets.rememberReader(reader, generation);
    }
    if (!integration) throw Errors.notFound('The MCP server has no integration');
    let userValue: string | undefined;
    if (integration.auth_type === 'user_token' || integration.auth_type === 'oauth') {
      const userId = req.caller.userId;
      if (!userId) throw Errors.forbidden('This MCP server takes each user\'s own credential: call it with a workspace-user key');
      const [connection] = await database.select(mcpConnections, { where: (c) => and(eq(c.mcp_server_id, server.id), eq(c.user_id, userId)), limit: 1 });
      if (!connection)
        throw Errors.forbidden(`This MCP server takes each user's own credential, and you have none: POST /v1/mcp-servers/${server.id}/connections first`);
      userValue =
        connection.kind === 'oauth'
          ? await ctx.oauth.accessToken(integration, connection.id, connection.secret)
          : ctx.box().open(connection.secret, connectionSecretAt(connection.id));
    }
    return { server, upstream: await upstreamOf(integration, workspaceId, ctx, userValue) };
  }

  /** The client's session, or a 404 (as MCP says: the client then starts a new one). */
  async function sessionOf(req: AdminRequest, server: ServerRow) {
    const id = req.headers.get(SESSION);
    if (!id) return undefined;
    const session = await sessions.find(id, server.id, req.caller.apiKeyId);
    if (!session) throw Errors.notFound('No such MCP session: start a new one with initialize');
    return { id, ...session };
  }

  async function send(upstream: Upstream, slug: string, init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal }): Promise<Response> {
    try {
      return await ctx.guard.fetch(upstream.url, { ...init, headers: { ...init.headers, ...upstream.headers } });
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      throw Errors.upstreamUnreachable(`mcp ${slug}`, error instanceof Error ? error.message : String(error));
    }
  }

  function headersFor(req: AdminRequest, upstreamSession: string | null | undefined): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const name of FORWARDED) {
      const value = req.headers.get(name);
      if (value) headers[name] = value;
    }
    if (upstreamSession) headers[SESSION] = upstreamSession;
    return headers;
  }

  /**
   * The upstream's answer as the client gets it: the gateway's session id, events and JSON passed through the
   * exchange. A whole answer is read up to `maxAnswerBytes` (TOOL_MAX_ANSWER_BYTES); past it the rest is not read and
   * the client gets a 502 JSON-RPC error for `requestId`.
   */
  async function answer(upstreamResponse: Response, exchange: Exchange | undefined, sessionId: string | undefined, requestId: unknown = null): Promise<Response> {
    const headers = new Headers();
    const type = upstreamResponse.headers.get('content-type') ?? '';
    if (type) headers.set('content-type', type);
    if (sessionId) headers.set(SESSION, sessionId);
    if (type.startsWith('text/event-stream') && upstreamResponse.body) {
      headers.set('cache-control', 'no-cache');
      const body = passEvents(upstreamResponse.body, exchange?.onMessage ?? (() => undefined), (error) =>
        exchange?.failRemaining(502, error ? `the stream ended: ${error instanceof Error ? error.message : String(error)}` : 'the stream ended without a result'),
      );
      return new Response(body, { status: upstreamResponse.status, headers });
    }
    const text = await readCappedText(upstreamResponse, ctx.maxAnswerBytes);
    if (text === undefined) {
      const why = `the answer is larger than ${ctx.maxAnswerBytes} bytes (TOOL_MAX_ANSWER_BYTES)`;
      exchange?.failRemaining(502, why);
      return jsonRpcError(Errors.upstreamInvalid(`mcp ${exchange?.slug ?? ''}`.trim(), why), requestId);
    }
    if (type.startsWith('application/json') && exchange && text) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      const replaced = parsed === undefined ? undefined : await exchange.onMessage(parsed);
      exchange.failRemaining(upstreamResponse.ok ? 502 : upstreamResponse.status, `the upstream answered ${upstreamResponse.status} without a result`);
      return new Response(replaced === undefined ? text : JSON.stringify(replaced), { status: upstreamResponse.status, headers });
    }
    exchange?.failRemaining(upstreamResponse.ok ? 502 : upstreamResponse.status, `the upstream answered ${upstreamResponse.status} without a result`);
    return new Response(text || null, { status: upstreamResponse.status, headers });
  }

  /** The bridge of a session this process holds; 404 otherwise (the client starts a new session). */
  function bridgeOf(sessionId: string): SseBridge {
    const bridge = bridges.get(sessionId);
    if (!bridge) throw Errors.notFound('No such MCP session: start a new one with initialize');
    return bridge;
  }

  /** A POST to a server on an SSE-transport upstream, through the session's bridge (sse-bridge.ts). */
  async function bridgedPost(
    req: AdminRequest,
    server: ServerRow,
    upstream: Upstream,
    messages: JSONRPCMessage[],
    initializing: boolean,
    session: { id: string } | undefined,
    exchange: Exchange,
  ): Promise<Response> {
    let sessionId = session?.id;
    let bridge: SseBridge;
    if (initializing) {
      try {
        bridge = await SseBridge.open(upstream, ctx.guard);
      } catch (error) {
        exchange.failRemaining(502, error instanceof Error ? error.message : String(error));
        if (error instanceof GatewayError) throw error;
        throw Errors.upstreamUnreachable(`mcp ${server.slug}`, error instanceof Error ? error.message : String(error));
      }
      sessionId = await sessions.open({ serverId: server.id, apiKeyId: req.caller.apiKeyId, upstream: null });
      bridges.set(sessionId, bridge);
    } else {
      if (!sessionId) throw Errors.badRequest('An MCP server on the SSE transport needs a session: send initialize first', SESSION);
      bridge = bridgeOf(sessionId);
    }
    const headers: Record<string, string> = sessionId ? { [SESSION]: sessionId } : {};
    let stream: ReadableStream<Uint8Array> | undefined;
    try {
      stream = await bridge.post(messages, exchange.onMessage, (error) =>
        exchange.failRemaining(502, error instanceof Error ? error.message : 'the upstream session closed before a result'),
      );
    } catch (error) {
      throw Errors.upstreamUnreachable(`mcp ${server.slug}`, error instanceof Error ? error.message : String(error));
    }
    if (!stream) return new Response(null, { status: 202, headers });
    return new Response(stream, { headers: { ...headers, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } });
  }

  /**
   * The tool calls of a POST through the tool-call phase's before stages (rate limits, guardrails on the arguments),
   * in order. A refusal answers the request with the refusing error as a JSON-RPC error (its status: 429, 400); in a
   * batch it refuses the whole batch, and the batch's other calls are logged as not sent.
   */
  async function toolCallPhase(req: AdminRequest, server: ServerRow, messages: Message[], exchange: Exchange): Promise<Response | undefined> {
    const phase = ctx.toolCalls.phase;
    if (!phase?.active || exchange.calls.size === 0) return undefined;
    for (const m of messages) {
      const pending = 'id' in m ? exchange.calls.get(JSON.stringify(m.id)) : undefined;
      if (!pending) continue;
      try {
        const params = isObject(m.params) ? m.params : {};
        const args = (params.arguments ?? {}) as Json;
        pending.call = describeToolCall(req, ctx.toolCalls, {
          kind: 'mcp',
          method: 'tools/call',
          server: { id: server.id, slug: server.slug },
          tool: pending.tool,
          arguments: args,
          text: stringsIn(args),
          traceId: exchange.traceId,
        });
        await phase.before(pending.call);
      } catch (error) {
        const refusal = asGatewayError(error);
        const id = messages.length === 1 ? m.id : null;
        exchange.calls.delete(JSON.stringify(m.id));
        exchange.refused(pending, refusal, jsonRpcErrorMessage(refusal, id));
        exchange.failRemaining(refusal.status, `not sent: another call of the batch was refused (${refusal.message})`);
        return jsonRpcError(refusal, id);
      }
    }
    return undefined;
  }

  const post: AdminRoute = {
    method: 'POST',
    path: '/mcp/:slug',
    scope: INVOKE_SCOPE,
    audit: false,
    async handle(req) {
      const { server, upstream } = await target(req);
      const body = req.body;
      const messages = Array.isArray(body) ? body : [body];
      if (messages.length === 0 || !messages.every((m) => isObject(m) && m.jsonrpc === '2.0'))
        throw Errors.badRequest('The body must be a JSON-RPC 2.0 message (or a batch of them)', 'body');
      const initializing = messages.some((m) => isObject(m) && m.method === 'initialize');
      const session = initializing ? undefined : await sessionOf(req, server);
      const exchange = new Exchange(ctx, server, req.caller);
      const denied: Message[] = [];
      for (const m of messages as Message[]) {
        if (!('id' in m) || typeof m.method !== 'string') continue;
        const id = JSON.stringify(m.id);
        if (m.method === 'tools/list') exchange.lists.add(id);
        if (m.method !== 'tools/call') continue;
        const params = isObject(m.params) ? m.params : {};
        const tool = typeof params.name === 'string' ? params.name : '';
        const call: PendingCall = { tool, argumentsBytes: JSON.stringify(params.arguments ?? {}).length, request: JSON.stringify(m) };
        if (toolAllowed(server, tool)) exchange.calls.set(id, call);
        else {
          exchange.log(call, 'denied', 403, null, `the tool ${tool} is not allowed on this server`);
          denied.push({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `Tool ${tool} is not allowed on this MCP server` } });
        }
      }
      if (denied.length > 0) {
        if (messages.length > 1) throw Errors.forbidden('A batch that calls a tool this MCP server does not allow is refused whole');
        return Response.json(denied[0], { headers: session ? { [SESSION]: session.id } : {} });
      }
      const refused = await toolCallPhase(req, server, messages as Message[], exchange);
      if (refused) {
        if (session) refused.headers.set(SESSION, session.id);
        return refused;
      }
      if (upstream.transport === 'sse') return bridgedPost(req, server, upstream, messages as JSONRPCMessage[], initializing, session, exchange);
      const upstreamResponse = await send(upstream, server.slug, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headersFor(req, session?.upstream) },
        body: JSON.stringify(body),
        signal: req.signal,
      }).catch((error: unknown) => {
        exchange.failRemaining(502, error instanceof Error ? error.message : String(error));
        throw error;
      });
      let sessionId = session?.id;
      if (initializing && upstreamResponse.ok)
        sessionId = await sessions.open({ serverId: server.id, apiKeyId: req.caller.apiKeyId, upstream: upstreamResponse.headers.get(SESSION) });
      if (session && upstreamResponse.status === 404) await sessions.close(session.id);
      return answer(upstreamResponse, exchange, sessionId, messages.length === 1 && isObject(messages[0]) ? (messages[0].id ?? null) : null);
    },
  };

  const get: AdminRoute = {
    method: 'GET',
    path: '/mcp/:slug',
    scope: INVOKE_SCOPE,
    audit: false,
    async handle(req) {
      const { server, upstream } = await target(req);
      const session = await sessionOf(req, server);
      if (upstream.transport === 'sse') {
        if (!session) throw Errors.badRequest('The event stream of an MCP session needs its Mcp-Session-Id', SESSION);
        const stream = bridgeOf(session.id).listen(new Exchange(ctx, server, req.caller).onMessage);
        return new Response(stream, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', [SESSION]: session.id } });
      }
      const upstreamResponse = await send(upstream, server.slug, {
        method: 'GET',
        headers: { accept: 'text/event-stream', ...headersFor(req, session?.upstream) },
        signal: req.signal,
      });
      return answer(upstreamResponse, new Exchange(ctx, server, req.caller), session?.id);
    },
  };

  const remove: AdminRoute = {
    method: 'DELETE',
    path: '/mcp/:slug',
    scope: INVOKE_SCOPE,
    audit: false,
    async handle(req) {
      const { server, upstream } = await target(req);
      const session = await sessionOf(req, server);
      // DELETE ends the session it names: without one there is none to end.
      if (!session) throw Errors.notFound('No such MCP session: DELETE needs the Mcp-Session-Id of the session to end');
      await sessions.close(session.id);
      if (upstream.transport === 'sse') {
        await bridges.drop(session.id);
        return new Response(null, { status: 204 });
      }
      const upstreamResponse = await send(upstream, server.slug, { method: 'DELETE', headers: headersFor(req, session.upstream), signal: req.signal });
      await upstreamResponse.body?.cancel().catch(() => undefined);
      return new Response(null, { status: upstreamResponse.ok || upstreamResponse.status === 405 ? 204 : upstreamResponse.status });
    },
  };

  return [post, get, remove];
}
