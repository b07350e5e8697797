/**
 * Clients speak streamable HTTP to the gateway; an upstream on the older HTTP+SSE transport (2024-11-05) keeps one
 * event stream open per session and takes messages by POST to the endpoint it announces. A bridge is that upstream
 * session, held by the gateway process that opened it (the official client transport, every request through the
 * outbound guard): a client's POST sends its messages and streams back, as server-sent events, the responses to its
 * requests and whatever the server sends meanwhile, ending once every request is answered; a client's GET receives
 * what the server sends while no POST is waiting. Another process (or one restarted) does not have the bridge: the
 * client gets 404 and starts a new session, as MCP says.
 */
import type { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { OutboundGuard } from '@gateway/sdk';
import { loadMcpClient } from './mcp-sdk.ts';
import type { Upstream } from './upstream.ts';

const encoder = new TextEncoder();
const event = (message: unknown) => encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);

type Sink = { push(message: JSONRPCMessage): void; close(): void };

export class SseBridge {
  private readonly waiting = new Map<string, Sink>();
  private readonly posts = new Set<Sink>();
  private listener: Sink | undefined;
  lastUsed = Date.now();

  private constructor(private readonly transport: SSEClientTransport) {
    transport.onmessage = (message) => this.route(message);
    transport.onclose = () => this.closeSinks();
  }

  static async open(upstream: Upstream, guard: OutboundGuard): Promise<SseBridge> {
    const fetch = (input: string | URL, init?: RequestInit) => guard.fetch(input, init);
    const { SSEClientTransport } = await loadMcpClient();
    const transport = new SSEClientTransport(new URL(upstream.url), { fetch, requestInit: { headers: { ...upstream.headers } } });
    const bridge = new SseBridge(transport);
    await transport.start();
    return bridge;
  }

  private route(message: JSONRPCMessage): void {
    const isResponse = 'id' in message && ('result' in message || 'error' in message);
    if (isResponse) {
      const key = JSON.stringify(message.id);
      const sink = this.waiting.get(key);
      this.waiting.delete(key);
      sink?.push(message);
      return;
    }
    // A notification or a server request: to the newest waiting POST, else to the GET stream, else nowhere.
    const post = [...this.posts].at(-1);
    (post ?? this.listener)?.push(message);
  }

  /**
   * Sends a client's messages. With requests among them: the event stream of their answers (and what the server
   * sends meanwhile), through `onMessage` (tool filtering and logging), closed when each is answered; else undefined.
   */
  async post(messages: JSONRPCMessage[], onMessage: (m: unknown) => unknown, onEnd: (error?: unknown) => void): Promise<ReadableStream<Uint8Array> | undefined> {
    this.lastUsed = Date.now();
    const requests = messages.filter((m) => 'method' in m && 'id' in m).map((m) => JSON.stringify((m as { id: unknown }).id));
    if (requests.length === 0) {
      for (const m of messages) await this.transport.send(m);
      return undefined;
    }
    const open = new Set(requests);
    let sink: Sink | undefined;
    // A tool result the tool-call phase judges is a promise: the messages after it wait, in order.
    let sent: Promise<void> = Promise.resolve();
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        let closed = false;
        const deliver = (message: JSONRPCMessage, out: unknown) => {
          if (closed) return;
          controller.enqueue(event(out ?? message));
          if ('id' in message && ('result' in message || 'error' in message)) open.delete(JSON.stringify(message.id));
          if (open.size === 0) sink?.close();
        };
        sink = {
          push: (message) => {
            if (closed) return;
            sent = sent.then(async () => deliver(message, await onMessage(message)));
          },
          close: () => {
            if (closed) return;
            closed = true;
            this.posts.delete(sink as Sink);
            for (const id of open) this.waiting.delete(id);
            controller.close();
            onEnd(open.size > 0 ? new Error('the upstream session closed') : undefined);
          },
        };
        this.posts.add(sink);
        for (const id of requests) this.waiting.set(id, sink);
      },
      cancel: () => {
        sink?.close();
      },
    });
    try {
      for (const m of messages) await this.transport.send(m);
    } catch (error) {
      sink?.close();
      throw error;
    }
    return stream;
  }

  /** The GET stream: what the server sends while no POST is waiting; one at a time (a new one replaces the old). */
  listen(onMessage: (m: unknown) => unknown): ReadableStream<Uint8Array> {
    this.lastUsed = Date.now();
    this.listener?.close();
    let sink: Sink | undefined;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        let closed = false;
        sink = {
          push: (message) => {
            if (!closed) controller.enqueue(event(onMessage(message) ?? message));
          },
          close: () => {
            if (closed) return;
            closed = true;
            if (this.listener === sink) this.listener = undefined;
            controller.close();
          },
        };
        this.listener = sink;
      },
      cancel: () => sink?.close(),
    });
  }

  private closeSinks(): void {
    for (const sink of [...this.posts]) sink.close();
    this.listener?.close();
  }

  async close(): Promise<void> {
    this.closeSinks();
    await this.transport.close().catch(() => undefined);
  }
}

/** The bridges of this process by gateway session id; idle ones closed after the session lifetime. */
export class SseBridges {
  private readonly bridges = new Map<string, SseBridge>();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(private readonly idleMs: number) {
    this.timer = setInterval(() => this.sweep(), Math.min(idleMs, 60_000));
    this.timer.unref?.();
  }

  set(id: string, bridge: SseBridge): void {
    this.bridges.set(id, bridge);
  }

  get(id: string): SseBridge | undefined {
    return this.bridges.get(id);
  }

  async drop(id: string): Promise<void> {
    const bridge = this.bridges.get(id);
    this.bridges.delete(id);
    await bridge?.close();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, bridge] of this.bridges) if (now - bridge.lastUsed > this.idleMs) void this.drop(id);
  }

  async closeAll(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.bridges.keys()].map((id) => this.drop(id)));
  }
}
