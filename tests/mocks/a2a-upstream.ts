/**
 * An upstream A2A agent on loopback, built with the official @a2a-js/sdk server (DefaultRequestHandler with its
 * JSON-RPC transport handlers: v1.0 method names and, through the SDK's compat layer, v0.3's `message/send`...).
 * It serves its agent card at /.well-known/agent-card.json (or, with `legacyCardOnly`, only at agent.json), answers
 * JSON-RPC at /a2a when the request carries `authorization: Bearer <token>` (or, with `credential`, one of the values
 * it names in the header it names), and streams SSE event by event. `reviseCard` changes the card it serves and
 * `failCards` makes the card URLs answer an error status, for the card sync tests.
 *
 * The agent: a message "echo <words>" makes a task that streams one artifact per word and completes; "wait" makes a
 * task that stays working until tasks/cancel. `release()` lets a "gate" message's next event out (a stream test
 * reads the first event before the upstream has sent the second).
 */
import { AgentCard, type Message, Role, type Task, TaskState } from '@a2a-js/sdk';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  type RequestContext,
  ServerCallContext,
} from '@a2a-js/sdk/server';

export interface A2AUpstream {
  url: string;
  origin: string;
  /** Every JSON-RPC request it received: method and the authorization header it carried. */
  readonly calls: { method: string; authorization: string | null }[];
  readonly cardRequests: string[];
  /** The credential header's value of each JSON-RPC request, in order (with the `credential` option). */
  readonly credentials: (string | null)[];
  /** Serves the card with these fields changed (name, description, version, skills as JSON). */
  reviseCard(fields: Record<string, unknown>): void;
  /** The card URLs answer `status` from now on; undefined: they serve the card again. */
  failCards(status: number | undefined): void;
  /** Lets the next gated event out. */
  release(): void;
  close(): Promise<void>;
}

const textOf = (message: Message): string => message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

const status = (state: TaskState, text?: string) => ({
  state,
  message: text === undefined ? undefined : agentMessage(text),
  timestamp: new Date().toISOString(),
});

function agentMessage(text: string): Message {
  return { messageId: crypto.randomUUID(), contextId: '', taskId: '', role: Role.ROLE_AGENT, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

class EchoAgent implements AgentExecutor {
  private readonly waiting = new Map<string, () => void>();
  private gate: (() => void) | undefined;
  private gateOpen = 0;

  release(): void {
    if (this.gate) {
      const open = this.gate;
      this.gate = undefined;
      open();
    } else this.gateOpen++;
  }

  private nextGate(): Promise<void> {
    if (this.gateOpen > 0) {
      this.gateOpen--;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.gate = resolve;
    });
  }

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = ctx;
    const text = textOf(ctx.userMessage);
    const task: Task = { id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [ctx.userMessage], metadata: undefined };
    bus.publish(AgentEvent.task(task));
    if (text === 'wait') {
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING, 'waiting'), metadata: undefined }));
      await new Promise<void>((resolve) => this.waiting.set(taskId, resolve));
      return;
    }
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), metadata: undefined }));
    const words = text.replace(/^(echo|gate)\s*/, '').split(/\s+/).filter(Boolean);
    for (const [i, word] of words.entries()) {
      if (text.startsWith('gate')) await this.nextGate();
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: `word-${i}`, name: 'echo', description: '', parts: [{ content: { $case: 'text', value: word }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [] },
          append: false,
          lastChunk: i === words.length - 1,
          metadata: undefined,
        }),
      );
    }
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED, words.join(' ')), metadata: undefined }));
    bus.finished();
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: status(TaskState.TASK_STATE_CANCELED), metadata: undefined }));
    bus.finished();
    this.waiting.get(taskId)?.();
    this.waiting.delete(taskId);
  };
}

export interface A2AUpstreamOptions {
  legacyCardOnly?: boolean;
  /** Accept a call when `header` holds one of `values` (instead of `authorization: Bearer <token>`). */
  credential?: { header: string; values: string[] };
}

export async function startA2AUpstream(token: string, options: A2AUpstreamOptions = {}): Promise<A2AUpstream> {
  const agent = new EchoAgent();
  const calls: A2AUpstream['calls'] = [];
  const cardRequests: string[] = [];
  const credentials: (string | null)[] = [];
  let card: AgentCard | undefined;
  let revised: Record<string, unknown> = {};
  let cardFailure: number | undefined;
  const encoder = new TextEncoder();
  let handlers: { v1: JsonRpcTransportHandler; v03: LegacyJsonRpcTransportHandler } | undefined;

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method === 'GET' && path.startsWith('/.well-known/')) {
        cardRequests.push(path);
        const served = options.legacyCardOnly ? '/.well-known/agent.json' : '/.well-known/agent-card.json';
        if (cardFailure !== undefined) return new Response('card unavailable', { status: cardFailure });
        return path === served && card ? Response.json({ ...(AgentCard.toJSON(card) as Record<string, unknown>), ...revised }) : new Response('not found', { status: 404 });
      }
      if (req.method !== 'POST' || path !== '/a2a' || !handlers) return new Response('not found', { status: 404 });
      const body = (await req.json()) as Record<string, unknown>;
      const method = String(body.method);
      calls.push({ method, authorization: req.headers.get('authorization') });
      if (options.credential) {
        const value = req.headers.get(options.credential.header);
        credentials.push(value);
        if (value === null || !options.credential.values.includes(value)) return new Response('unauthorised', { status: 401 });
      } else if (req.headers.get('authorization') !== `Bearer ${token}`) return new Response('unauthorised', { status: 401 });
      const context = new ServerCallContext({ requestedVersion: req.headers.get('a2a-version') ?? (method.includes('/') ? '0.3' : '1.0') });
      const result = await (method.includes('/') ? handlers.v03 : handlers.v1).handle(body, context);
      if (!(Symbol.asyncIterator in result)) return Response.json(result);
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          for await (const event of result) controller.enqueue(encoder.encode(`data: ${JSON.stringify(event)}\n\n`));
          controller.close();
        },
      });
      return new Response(stream, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } });
    },
  });
  const origin = `http://127.0.0.1:${server.port}`;
  const agentCard = AgentCard.fromJSON({
    name: 'Echo agent',
    description: 'Echoes words back, one artifact per word',
    version: '1.2.3',
    supportedInterfaces: [{ url: `${origin}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      { id: 'echo', name: 'Echo', description: 'Echoes words', tags: ['text'], examples: ['echo a b'], inputModes: [], outputModes: [], securityRequirements: [] },
      { id: 'wait', name: 'Wait', description: 'Waits until cancelled', tags: [], examples: [], inputModes: [], outputModes: [], securityRequirements: [] },
    ],
  });
  card = agentCard;
  const requestHandler = new DefaultRequestHandler(agentCard, new InMemoryTaskStore(), agent);
  handlers = { v1: new JsonRpcTransportHandler(requestHandler), v03: new LegacyJsonRpcTransportHandler(requestHandler) };
  return {
    url: `${origin}/a2a`,
    origin,
    calls,
    cardRequests,
    credentials,
    reviseCard: (fields) => {
      revised = { ...revised, ...fields };
    },
    failCards: (status) => {
      cardFailure = status;
    },
    release: () => agent.release(),
    close: async () => {
      await server.stop(true);
    },
  };
}
