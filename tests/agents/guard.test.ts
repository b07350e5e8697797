/**
 * Every upstream URL of the agent gateway goes through the OutboundGuard when it is saved and again at connect time:
 * a private address is refused with forbidden_custom_host before any connection is opened. The proof of "before any
 * connection": a TCP listener on loopback that counts the connections it accepts, called by a gateway that trusts
 * loopback (it counts) and by one over the same database that does not (it refuses, and the count stays).
 * Also: the agent card falls back from agent-card.json to the older agent.json.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { createE2EDatabase, type E2EDatabase } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type A2AUpstream, startA2AUpstream } from '../mocks/a2a-upstream.ts';
import { ENCRYPTION_KEY, UPSTREAM_TOKEN } from './support.ts';

type View = Record<string, unknown>;

describe('agent gateway: the outbound guard', () => {
  let db: E2EDatabase;
  let trusting: Gateway;
  let guarded: Gateway;
  let legacy: A2AUpstream;
  let connections = 0;
  let listener: { port: number; stop(closeActive?: boolean): void };
  let workspaceId: string;

  beforeAll(async () => {
    db = await createE2EDatabase('sqlite');
    listener = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        open(socket) {
          connections++;
          socket.end();
        },
        data() {},
      },
    });
    legacy = await startA2AUpstream(UPSTREAM_TOKEN, { legacyCardOnly: true });
    trusting = await startInProcessGateway({ DATABASE_URL: db.url, GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY });
    guarded = await startInProcessGateway({ DATABASE_URL: db.url, GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY, TRUSTED_CUSTOM_HOSTS: '' });
    const workspaces = (await call(trusting, 'GET', '/workspaces')).body.data as { id: string; slug: string }[];
    workspaceId = workspaces.find((w) => w.slug === 'default')?.id ?? '';
  }, 60_000);
  afterAll(async () => {
    await guarded?.close();
    await trusting?.close();
    await legacy?.close();
    listener?.stop(true);
    await db?.drop();
  });

  async function call(gw: Gateway, method: string, path: string, body?: unknown, key = TEST_ADMIN_KEY): Promise<{ status: number; body: View }> {
    const res = await gw.handle(
      new Request(`http://gateway.test/v1${path}`, { method, headers: { 'content-type': 'application/json', 'x-gateway-api-key': key }, body: body === undefined ? undefined : JSON.stringify(body) }),
    );
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as View };
  }
  const errorCode = (a: { body: View }) => (a.body.error as View | undefined)?.code;

  test('a private address is refused when saved', async () => {
    for (const url of ['http://10.255.255.1/a2a', 'http://169.254.169.254/latest', 'http://[fd00::1]/a2a']) {
      const answer = await call(guarded, 'POST', '/agent-integrations', { name: 'Private', url });
      expect([url, answer.status, errorCode(answer)]).toEqual([url, 400, 'forbidden_custom_host']);
    }
    const card = await call(guarded, 'POST', '/agent-integrations', { name: 'Private card', url: 'https://agent.example/a2a', agent_card_url: 'http://10.0.0.1/card.json' });
    expect([card.status, errorCode(card)]).toEqual([400, 'forbidden_custom_host']);
  });

  test('at connect time: the untrusting gateway refuses before any connection; the trusting one connects', async () => {
    const url = `http://127.0.0.1:${listener.port}/a2a`;
    const integration = await call(trusting, 'POST', '/agent-integrations', { name: 'Counted', url, workspace_id: workspaceId });
    expect(integration.status).toBe(201);
    const server = await call(trusting, 'POST', '/agent-servers', { name: 'Counted', agent_integration_id: integration.body.id });
    expect(server.status).toBe(201);
    // Creating it on the trusting gateway read its card (the listener hangs up): counted from here.
    expect(server.body.sync_status).toBe('failed');
    const atStart = connections;
    const id = String(server.body.id);
    const key = await call(trusting, 'POST', '/api-keys', { name: 'invoke', type: 'workspace-service', workspace_id: server.body.workspace_id, scopes: ['agents.invoke'] });
    const rpc = { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 't' } };

    const refusedCard = await call(guarded, 'GET', `/agent-servers/${id}/agent-card`);
    const refusedInvoke = await call(guarded, 'POST', `/agent-servers/${id}/a2a`, rpc, String(key.body.key));
    expect([refusedCard.status, errorCode(refusedCard), refusedInvoke.status, errorCode(refusedInvoke)]).toEqual([400, 'forbidden_custom_host', 400, 'forbidden_custom_host']);
    expect(connections).toBe(atStart);

    // The same calls from the gateway that trusts loopback reach the listener (which hangs up: 502).
    const reached = await call(trusting, 'POST', `/agent-servers/${id}/a2a`, rpc, String(key.body.key));
    expect(reached.status).toBe(502);
    expect(connections).toBeGreaterThan(atStart);
  });

  test('the agent card falls back to /.well-known/agent.json', async () => {
    const integration = await call(trusting, 'POST', '/agent-integrations', {
      name: 'Legacy card',
      url: legacy.url,
      workspace_id: workspaceId,
      auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` },
    });
    const server = await call(trusting, 'POST', '/agent-servers', { name: 'Legacy card', agent_integration_id: integration.body.id });
    // Read once when the server was created (its card sync), and again by the GET.
    expect((server.body.agent_card as View).name).toBe('Echo agent');
    const card = await call(trusting, 'GET', `/agent-servers/${server.body.id}/agent-card`);
    expect([card.status, card.body.name]).toEqual([200, 'Echo agent']);
    expect(legacy.cardRequests).toEqual(['/.well-known/agent-card.json', '/.well-known/agent.json', '/.well-known/agent-card.json', '/.well-known/agent.json']);
  });
});
