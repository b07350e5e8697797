/**
 * The agent gateway's test stack: a whole in-process gateway on a fresh database (SQLite or MariaDB), an upstream A2A
 * agent on loopback built with @a2a-js/sdk (tests/mocks/a2a-upstream.ts), keys of each kind, and the official
 * @a2a-js/sdk clients speaking to the gateway's /v1/agent-servers/:id/a2a through `gateway.handle`.
 */
import { afterAll, beforeAll } from 'bun:test';
import { type Message, Role } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { AgentCard } from '@a2a-js/sdk';
import type { Gateway } from '@gateway/server';
import { createE2EDatabase, type E2EDatabase, type E2EDialect } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type A2AUpstream, startA2AUpstream } from '../mocks/a2a-upstream.ts';

export { TEST_ADMIN_KEY };
export const UPSTREAM_TOKEN = 'agent-token-held-by-the-gateway';
export const ENCRYPTION_KEY = 'agents-tests-encryption-key-0123456789';

export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

export interface Keys {
  /** workspace-service key of the default workspace with agents.invoke only. */
  service: string;
  /** workspace-user keys (agents.invoke only) of two members of the default workspace. */
  alice: string;
  bob: string;
  aliceId: string;
  /** workspace-service key with every agent scope but agents.invoke. */
  noInvoke: string;
}

export interface AgentStack {
  gw: Gateway;
  db: E2EDatabase;
  upstream: A2AUpstream;
  defaultWorkspace: string;
  keys: Keys;
  admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown, key?: string): Promise<Answer<T>>;
  /** fetch through the gateway with `key` added. */
  fetchWith(key: string): typeof fetch;
  /** The v0.3 JSON-RPC client (message/send, message/stream, tasks/get, tasks/cancel) at the server's gateway URL. */
  legacyClient(serverId: string, key: string): LegacyJsonRpcTransport;
  /** The v1.0 client made from the gateway's agent card with its interface URL pointed at the gateway. */
  client(serverId: string, key: string): Promise<Awaited<ReturnType<ClientFactory['createFromAgentCard']>>>;
}

export const a2aPath = (serverId: string) => `http://gateway.test/v1/agent-servers/${serverId}/a2a`;

export function userMessage(text: string): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** `env`: more gateway settings (the card sync interval, the secret cache's lifetime). */
export function useAgentStack(dialect: E2EDialect, env: Record<string, string> = {}): () => AgentStack {
  let stack: AgentStack | undefined;
  beforeAll(async () => {
    const db = await createE2EDatabase(dialect);
    const upstream = await startA2AUpstream(UPSTREAM_TOKEN);
    const gw = await startInProcessGateway({ DATABASE_URL: db.url, GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY, ...env });
    const admin = async <T>(method: string, path: string, body?: unknown, key = TEST_ADMIN_KEY): Promise<Answer<T>> => {
      const res = await gw.handle(
        new Request(`http://gateway.test/v1${path}`, {
          method,
          headers: { 'content-type': 'application/json', 'x-gateway-api-key': key },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
    };
    const must = async (method: string, path: string, body: unknown) => {
      const a = await admin<Record<string, unknown>>(method, path, body);
      if (a.status >= 300) throw new Error(`${method} ${path}: ${a.status} ${JSON.stringify(a.body)}`);
      return a.body;
    };
    const workspaces = await admin<{ data: { id: string; slug: string }[] }>('GET', '/workspaces');
    const defaultWorkspace = workspaces.body.data.find((w) => w.slug === 'default')?.id;
    if (!defaultWorkspace) throw new Error('no default workspace');
    const person = async (name: string) => {
      const user = await must('POST', '/users', { email: `${name}-${dialect}@agents.test`, name, role: 'member' });
      await must('POST', `/workspaces/${defaultWorkspace}/users`, { user_id: user.id, role: 'member' });
      const key = await must('POST', '/api-keys', { name: `${name} key`, type: 'workspace-user', workspace_id: defaultWorkspace, user_id: user.id, scopes: ['agents.invoke'] });
      return { id: String(user.id), key: String(key.key) };
    };
    const [alice, bob] = [await person('alice'), await person('bob')];
    const service = await must('POST', '/api-keys', { name: 'agent service', type: 'workspace-service', workspace_id: defaultWorkspace, scopes: ['agents.invoke'] });
    const noInvoke = await must('POST', '/api-keys', {
      name: 'no invoke',
      type: 'workspace-service',
      workspace_id: defaultWorkspace,
      scopes: ['agent_servers.read', 'agent_servers.write', 'workspace_agent_integrations.read'],
    });
    // The SDKs take a `typeof fetch`; the gateway's handle() is one for what they send (a URL and its init).
    const fetchWith = (key: string): typeof fetch =>
      Object.assign(
        (input: string | URL | Request, init?: RequestInit) => {
          const headers = new Headers(init?.headers);
          headers.set('x-gateway-api-key', key);
          return gw.handle(new Request(input instanceof Request ? input.url : String(input), { ...init, headers }));
        },
        { preconnect: () => undefined },
      );
    stack = {
      gw,
      db,
      upstream,
      defaultWorkspace,
      keys: { service: String(service.key), alice: alice.key, bob: bob.key, aliceId: alice.id, noInvoke: String(noInvoke.key) },
      admin,
      fetchWith,
      legacyClient: (serverId, key) => new LegacyJsonRpcTransport({ endpoint: a2aPath(serverId), fetchImpl: fetchWith(key) }),
      async client(serverId, key) {
        const card = await admin<Record<string, unknown>>('GET', `/agent-servers/${serverId}/agent-card`);
        const parsed = AgentCard.fromJSON(card.body);
        parsed.supportedInterfaces = parsed.supportedInterfaces.map((i) => ({ ...i, url: a2aPath(serverId) }));
        const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: fetchWith(key) })] });
        return factory.createFromAgentCard(parsed);
      },
    };
  }, 60_000);
  afterAll(async () => {
    if (!stack) return;
    await stack.gw.close();
    await stack.upstream.close();
    await stack.db.drop();
  });
  return () => {
    if (!stack) throw new Error('the agent stack did not start');
    return stack;
  };
}

let counter = 0;
export const uniqueSlug = (base: string) => `${base}-${process.pid}-${++counter}`;
