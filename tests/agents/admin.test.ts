/**
 * The agent integrations' and servers' own rules, beyond who may call them (tests/admin/rbac): the credential kept
 * on a masked PUT and required again when the URL changes, the scope of the integration's level, workspace access,
 * DELETE refused while servers use an integration, and the request-log rows of a call whose upstream fails and of a
 * stream the client leaves.
 */
import { describe, expect, test } from 'bun:test';
import { RequestLogServices } from '@gateway/plugin-request-log';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { a2aPath, UPSTREAM_TOKEN, uniqueSlug, useAgentStack } from './support.ts';

type View = Record<string, unknown>;
const HEADER = { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` };

for (const dialect of E2E_DIALECTS) {
  describe(`agent administration [${dialect}]`, () => {
    const get = useAgentStack(dialect);

    test('a masked header value keeps the credential; a new URL needs it again', async () => {
      const s = get();
      const made = await s.admin<View>('POST', '/agent-integrations', { name: 'Masked', workspace_id: s.defaultWorkspace, url: s.upstream.url, auth: HEADER });
      const id = String(made.body.id);
      const renamed = await s.admin<View>('PUT', `/agent-integrations/${id}`, { name: 'Renamed', auth: { ...HEADER, header_value: '****' } });
      expect([renamed.status, renamed.body.name, renamed.body.version]).toEqual([200, 'Renamed', 2]);
      // The kept credential still opens the upstream.
      const server = await s.admin<View>('POST', '/agent-servers', { name: 'Masked', agent_integration_id: id });
      const card = await s.admin<View>('GET', `/agent-servers/${server.body.id}/agent-card`);
      expect(card.status).toBe(200);
      const moved = await s.admin<View>('PUT', `/agent-integrations/${id}`, { url: `${s.upstream.origin}/elsewhere`, auth: { ...HEADER, header_value: '****' } });
      expect([moved.status, (moved.body.error as View).param]).toEqual([400, 'auth.header_value']);
      const movedWithout = await s.admin<View>('PUT', `/agent-integrations/${id}`, { url: `${s.upstream.origin}/elsewhere` });
      expect([movedWithout.status, (movedWithout.body.error as View).param]).toEqual([400, 'auth']);
    });

    test('DELETE is refused while a server uses the integration; the server goes first', async () => {
      const s = get();
      const made = await s.admin<View>('POST', '/agent-integrations', { name: 'Used', workspace_id: s.defaultWorkspace, url: s.upstream.url });
      const server = await s.admin<View>('POST', '/agent-servers', { name: 'User', agent_integration_id: made.body.id });
      expect((await s.admin('DELETE', `/agent-integrations/${made.body.id}`)).status).toBe(409);
      expect((await s.admin('DELETE', `/agent-servers/${server.body.id}`)).status).toBe(204);
      expect((await s.admin('DELETE', `/agent-integrations/${made.body.id}`)).status).toBe(204);
      expect((await s.admin('GET', `/agent-integrations/${made.body.id}`)).status).toBe(404);
    });

    test('each level has its scope: a workspace-integration key reads its workspace\'s, not the organisation\'s', async () => {
      const s = get();
      const org = await s.admin<View>('POST', '/agent-integrations', { name: 'Org level', slug: uniqueSlug('org'), url: s.upstream.url });
      const ws = await s.admin<View>('POST', '/agent-integrations', { name: 'Ws level', slug: uniqueSlug('ws'), workspace_id: s.defaultWorkspace, url: s.upstream.url });
      const key = await s.admin<View>('POST', '/api-keys', { name: 'ws integrations', type: 'workspace-service', workspace_id: s.defaultWorkspace, scopes: ['workspace_agent_integrations.read'] });
      const secret = String(key.body.key);
      expect((await s.admin('GET', `/agent-integrations/${ws.body.id}`, undefined, secret)).status).toBe(200);
      expect((await s.admin('GET', `/agent-integrations/${org.body.id}`, undefined, secret)).status).toBe(403);
      const listed = await s.admin<{ data: View[] }>('GET', '/agent-integrations', undefined, secret);
      const ids = listed.body.data.map((v) => v.id);
      expect([ids.includes(ws.body.id), ids.includes(org.body.id)]).toEqual([true, false]);
    });

    test('workspace access: a server of an organisation integration stops answering when its workspace is closed', async () => {
      const s = get();
      const org = await s.admin<View>('POST', '/agent-integrations', { name: 'Opened', slug: uniqueSlug('open'), url: s.upstream.url, auth: HEADER });
      expect((await s.admin('PUT', `/agent-integrations/${org.body.id}/workspaces`, { workspace_ids: ['default'] })).body).toMatchObject({ workspace_ids: [s.defaultWorkspace] });
      const server = await s.admin<View>('POST', '/agent-servers', { name: 'Opened', agent_integration_id: org.body.id });
      expect(server.status).toBe(201);
      expect((await s.admin('GET', `/agent-servers/${server.body.id}/agent-card`)).status).toBe(200);
      expect((await s.admin('PUT', `/agent-integrations/${org.body.id}/workspaces`, { workspace_ids: [] })).status).toBe(200);
      expect((await s.admin('GET', `/agent-servers/${server.body.id}/agent-card`)).status).toBe(404);
      const rpc = await s.fetchWith(s.keys.service)(a2aPath(String(server.body.id)), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 't' } }),
      });
      expect(rpc.status).toBe(404);
    });

    test('an upstream that refuses the call (its 401) and a JSON-RPC error answer are logged as such', async () => {
      const s = get();
      const made = await s.admin<View>('POST', '/agent-integrations', { name: 'No credential', workspace_id: s.defaultWorkspace, url: s.upstream.url });
      const server = await s.admin<View>('POST', '/agent-servers', { name: 'No credential', agent_integration_id: made.body.id });
      const id = String(server.body.id);
      const call = (method: string) =>
        s.fetchWith(s.keys.service)(a2aPath(id), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { id: 'missing' } }) });
      expect((await call('tasks/get')).status).toBe(401);
      await s.admin('PUT', `/agent-integrations/${made.body.id}`, { auth: HEADER });
      const trace = `trace-${crypto.randomUUID()}`;
      const missing = await s.fetchWith(s.keys.service)(a2aPath(id), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-trace-id': trace, 'x-gateway-span-name': 'lookup' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/get', params: { id: 'missing' } }),
      });
      expect(missing.headers.get('x-gateway-trace-id')).toBe(trace);
      expect(await missing.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: {} });
      await s.gw.service(RequestLogServices.queue).flush();
      const rows = await s.db.query(`SELECT status, error_code, trace_id, span_name FROM request_logs WHERE path = '/agent-servers/${id}/a2a' ORDER BY status`);
      expect(rows.map((r) => [Number(r.status), r.error_code, r.trace_id === trace, r.span_name])).toEqual([
        [200, 'a2a_rpc_error', true, 'lookup'],
        [401, 'a2a_failed', false, 'a2a tasks/get'],
      ]);
    });

    test('a client that leaves mid-stream: the row is written then, failed, saying the client went away', async () => {
      const s = get();
      const made = await s.admin<View>('POST', '/agent-integrations', { name: 'Left', workspace_id: s.defaultWorkspace, url: s.upstream.url, auth: HEADER });
      const server = await s.admin<View>('POST', '/agent-servers', { name: 'Left', agent_integration_id: made.body.id });
      const id = String(server.body.id);
      const message = { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'gate x y' }] };
      const res = await s.fetchWith(s.keys.service)(a2aPath(id), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'message/stream', params: { message } }),
      });
      expect(res.headers.get('content-type')).toStartWith('text/event-stream');
      const reader = res.body?.getReader();
      if (!reader) throw new Error('no body');
      // The task event arrives while the upstream still holds the first word.
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toContain('"kind":"task"');
      await reader.cancel();
      s.upstream.release();
      s.upstream.release();
      await s.gw.service(RequestLogServices.queue).flush();
      const rows = await s.db.query(`SELECT error_code, error_message, metadata FROM request_logs WHERE path = '/agent-servers/${id}/a2a'`);
      expect(rows.map((r) => [r.error_code, r.error_message])).toEqual([['a2a_failed', 'the client went away']]);
    });

    test('single skills and users are removed by DELETE; one not on the list is a 404', async () => {
      const s = get();
      const made = await s.admin<View>('POST', '/agent-integrations', { name: 'Lists', workspace_id: s.defaultWorkspace, url: s.upstream.url });
      const integration = String(made.body.id);
      await s.admin('PUT', `/agent-integrations/${integration}/skills`, { skills: [{ id: 'echo', name: 'Echo' }, { id: 'wait', name: 'Wait' }] });
      expect((await s.admin('DELETE', `/agent-integrations/${integration}/skills/wait`)).status).toBe(204);
      expect((await s.admin('DELETE', `/agent-integrations/${integration}/skills/wait`)).status).toBe(404);
      expect((await s.admin<{ data: View[] }>('GET', `/agent-integrations/${integration}/skills`)).body.data.map((k) => k.id)).toEqual(['echo']);
      const server = String((await s.admin<View>('POST', '/agent-servers', { name: 'Lists', agent_integration_id: integration })).body.id);
      await s.admin('PUT', `/agent-servers/${server}/skills`, { skill_ids: ['echo', 'wait'] });
      await s.admin('PUT', `/agent-servers/${server}/user-access`, { user_ids: [s.keys.aliceId] });
      expect((await s.admin('DELETE', `/agent-servers/${server}/skills/echo`)).status).toBe(204);
      expect((await s.admin<View>('GET', `/agent-servers/${server}/skills`)).body.skill_ids).toEqual(['wait']);
      expect((await s.admin('DELETE', `/agent-servers/${server}/user-access/${s.keys.aliceId}`)).status).toBe(204);
      expect((await s.admin('DELETE', `/agent-servers/${server}/user-access/${s.keys.aliceId}`)).status).toBe(404);
      expect((await s.admin<View>('GET', `/agent-servers/${server}/user-access`)).body.user_ids).toEqual([]);
    });
  });
}
