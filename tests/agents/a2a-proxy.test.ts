/**
 * The agent gateway end to end with @a2a-js/sdk on both sides: an integration holding the upstream's credential, an
 * agent server, its agent card fetched through the gateway, and the official clients through
 * /v1/agent-servers/:id/a2a — v0.3 (message/send, message/stream, tasks/get, tasks/cancel) and v1.0 — streamed
 * event by event and not, a request-log row per call, and who may invoke.
 */
import { describe, expect, test } from 'bun:test';
import { TaskState } from '@a2a-js/sdk';
import { RequestLogServices } from '@gateway/plugin-request-log';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { a2aPath, TEST_ADMIN_KEY, UPSTREAM_TOKEN, uniqueSlug, useAgentStack, userMessage } from './support.ts';

type View = Record<string, unknown>;

const send = (text: string, returnImmediately = false) => ({
  tenant: '',
  message: userMessage(text),
  configuration: returnImmediately ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true } : undefined,
  metadata: undefined,
});

const isTask = (r: object): r is { id: string; status: { state: TaskState } | undefined; artifacts: { parts: { content?: { $case: string; value: unknown } }[] }[] } => 'status' in r && 'id' in r;

for (const dialect of E2E_DIALECTS) {
  describe(`agent gateway [${dialect}]`, () => {
    const get = useAgentStack(dialect);

    async function registered(workspaceLevel = true) {
      const s = get();
      const integration = await s.admin<View>('POST', '/agent-integrations', {
        name: 'Echo',
        slug: uniqueSlug('echo'),
        url: s.upstream.url,
        ...(workspaceLevel ? { workspace_id: s.defaultWorkspace } : {}),
        auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` },
      });
      expect(integration.status).toBe(201);
      if (!workspaceLevel) expect((await s.admin('PUT', `/agent-integrations/${integration.body.id}/workspaces`, { workspace_ids: [s.defaultWorkspace] })).status).toBe(200);
      const server = await s.admin<View>('POST', '/agent-servers', { name: 'Echo server', slug: uniqueSlug('echo'), agent_integration_id: integration.body.id });
      expect(server.status).toBe(201);
      return { integration: integration.body, server: server.body, id: String(server.body.id) };
    }

    test('the integration shows its header masked; the agent card comes from the upstream, its skills narrowed to the server\'s', async () => {
      const s = get();
      const { integration, id } = await registered();
      expect(integration.auth).toEqual({ type: 'header', header_name: 'Authorization', header_value: '****' });
      expect(JSON.stringify(integration)).not.toContain(UPSTREAM_TOKEN);
      const card = await s.admin<{ name: string; version: string; skills: { id: string }[] }>('GET', `/agent-servers/${id}/agent-card`);
      expect(card.status).toBe(200);
      expect(card.body).toMatchObject({ name: 'Echo agent', version: '1.2.3' });
      expect(card.body.skills.map((k) => k.id)).toEqual(['echo', 'wait']);
      expect((await s.admin('PUT', `/agent-servers/${id}/skills`, { skill_ids: ['echo'] })).status).toBe(200);
      const narrowed = await s.admin<{ skills: { id: string }[] }>('GET', `/agent-servers/${id}/agent-card`);
      expect(narrowed.body.skills.map((k) => k.id)).toEqual(['echo']);
    });

    test('v0.3 message/send through the gateway: the upstream gets the gateway-held credential, the client its task', async () => {
      const s = get();
      const { id } = await registered();
      const before = s.upstream.calls.length;
      const result = await s.legacyClient(id, s.keys.service).sendMessage(send('echo hello agent'));
      if (!isTask(result)) throw new Error('expected a task');
      expect(result.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(result.artifacts.flatMap((a) => a.parts.map((p) => p.content?.value))).toEqual(['hello', 'agent']);
      expect(s.upstream.calls.slice(before)).toEqual([{ method: 'message/send', authorization: `Bearer ${UPSTREAM_TOKEN}` }]);
    });

    test('v0.3 message/stream: each event reaches the client before the upstream sends the next', async () => {
      const s = get();
      const { id } = await registered();
      const stream = s.legacyClient(id, s.keys.alice).sendMessageStream(send('gate one two'));
      const kinds: string[] = [];
      const words: unknown[] = [];
      for await (const event of stream) {
        const payload = event.payload;
        if (!payload) continue;
        kinds.push(payload.$case);
        // The upstream holds each word until released: the first word arrives while the second is not yet sent.
        if (payload.$case === 'statusUpdate' && payload.value.status?.state === TaskState.TASK_STATE_WORKING) s.upstream.release();
        if (payload.$case === 'artifactUpdate') {
          words.push(payload.value.artifact?.parts[0]?.content?.value);
          s.upstream.release();
        }
      }
      expect(words).toEqual(['one', 'two']);
      expect(kinds).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'artifactUpdate', 'statusUpdate']);
      await s.gw.service(RequestLogServices.queue).flush();
      const rows = await s.db.query(`SELECT status, provider, endpoint, user_id, metadata FROM request_logs WHERE provider = 'a2a' AND endpoint = 'a2a.message/stream' AND path = '/agent-servers/${id}/a2a'`);
      expect(rows).toHaveLength(1);
      const row = rows[0] as View;
      const metadata = (typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata) as Record<string, string>;
      expect([Number(row.status), row.user_id]).toEqual([200, s.keys.aliceId]);
      expect(metadata).toMatchObject({ a2a_method: 'message/stream', a2a_outcome: 'ok', a2a_events: '5', a2a_task_state: 'completed' });
      expect(metadata.a2a_task_id).toBeString();
    });

    test('v0.3 tasks/get and tasks/cancel of a running task, each logged', async () => {
      const s = get();
      const { id } = await registered(false);
      const client = s.legacyClient(id, s.keys.service);
      const started = await client.sendMessage(send('wait', true));
      if (!isTask(started)) throw new Error('expected a task');
      const fetched = await client.getTask({ tenant: '', id: started.id, historyLength: undefined });
      expect(fetched.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      const cancelled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
      expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      await s.gw.service(RequestLogServices.queue).flush();
      const rows = await s.db.query(`SELECT endpoint FROM request_logs WHERE path = '/agent-servers/${id}/a2a' ORDER BY created_at, id`);
      expect(rows.map((r) => r.endpoint).sort()).toEqual(['a2a.message/send', 'a2a.tasks/cancel', 'a2a.tasks/get']);
    });

    test('v1.0 client from the gateway\'s agent card: SendMessage and SendStreamingMessage', async () => {
      const s = get();
      const { id } = await registered();
      const client = await s.client(id, s.keys.bob);
      const result = await client.sendMessage(send('echo v one'));
      if (!isTask(result)) throw new Error('expected a task');
      expect(result.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const seen: string[] = [];
      for await (const event of client.sendMessageStream(send('echo a b c'))) if (event.payload) seen.push(event.payload.$case);
      expect(seen).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'artifactUpdate', 'artifactUpdate', 'statusUpdate']);
      expect(s.upstream.calls.slice(-2).map((c) => c.method)).toEqual(['SendMessage', 'SendStreamingMessage']);
    });

    test('who may invoke: agents.invoke on a workspace key; not an organisation key, a key without the scope, another user', async () => {
      const s = get();
      const { id } = await registered();
      const rpc = (key: string, method = 'tasks/get') =>
        s.fetchWith(key)(a2aPath(id), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { id: 'none' } }) });
      const before = s.upstream.calls.length;
      const org = await rpc(TEST_ADMIN_KEY);
      expect(org.status).toBe(403);
      const noScope = await rpc(s.keys.noInvoke);
      expect(noScope.status).toBe(403);
      expect(((await noScope.json()) as { error: { message: string } }).error.message).toContain('agents.invoke');
      const unknownMethod = await rpc(s.keys.service, 'tasks/pushNotificationConfig/set');
      expect(await unknownMethod.json()).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32601 } });
      expect(s.upstream.calls.length).toBe(before);
      // Named users only: alice may, bob may not; service keys of the workspace still may.
      expect((await s.admin('PUT', `/agent-servers/${id}/user-access`, { user_ids: [s.keys.aliceId] })).status).toBe(200);
      expect((await rpc(s.keys.bob)).status).toBe(403);
      expect((await rpc(s.keys.alice)).status).toBe(200);
      expect((await rpc(s.keys.service)).status).toBe(200);
      expect(s.upstream.calls.length).toBe(before + 2);
    });

    test('a server may not use an organisation integration that is not open to its workspace', async () => {
      const s = get();
      const integration = await s.admin<View>('POST', '/agent-integrations', { name: 'Closed', slug: uniqueSlug('closed'), url: s.upstream.url });
      expect(integration.status).toBe(201);
      expect(integration.body.workspace_id).toBeNull();
      const server = await s.admin<View>('POST', '/agent-servers', { name: 'No', agent_integration_id: integration.body.id });
      expect(server.status).toBe(404);
    });
  });
}
