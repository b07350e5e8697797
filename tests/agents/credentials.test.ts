/**
 * Agent integrations hold credentials as MCP integrations do: a user-entered token per user and agent server (auth
 * `user_token`, sealed at rest, revoked by its user or a manager, and by a new URL), and `secret_mappings` resolved
 * from a secret manager (a local Vault) at request time — one header, or a JSON object of headers. The upstream is
 * an @a2a-js/sdk agent that checks the header it receives; the client is the SDK's, through the gateway.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { TaskState } from '@a2a-js/sdk';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type A2AUpstream, startA2AUpstream } from '../mocks/a2a-upstream.ts';
import { startVault } from '../mocks/secret-managers/vault.ts';
import { a2aPath, type AgentStack, UPSTREAM_TOKEN, uniqueSlug, useAgentStack, userMessage } from './support.ts';

type View = Record<string, unknown> & { id: string };

const VAULT_TOKEN = 'hvs.agent-mappings-token';
const vault = startVault({ tokens: [VAULT_TOKEN] });
const ALICE_TOKEN = 'alice-own-agent-token';
let perUser: A2AUpstream | undefined;
afterAll(async () => {
  vault.stop();
  await perUser?.close();
});

const send = (text: string) => ({ tenant: '', message: userMessage(text), configuration: undefined, metadata: undefined });
const isTask = (r: object): r is { status: { state: TaskState } | undefined } => 'status' in r && 'id' in r;

/** One tasks/get through the gateway, raw: the status says who got through. */
const probe = (s: AgentStack, serverId: string, key: string) =>
  s.fetchWith(key)(a2aPath(serverId), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'none' } }) });

for (const dialect of E2E_DIALECTS) {
  describe(`agent credentials [${dialect}]`, () => {
    const get = useAgentStack(dialect, { SECRET_REFERENCES_CACHE_TTL_MS: '200' });

    test('user_token: each user connects their own token, sealed; the upstream gets the caller\'s; revoked by DELETE and by a new URL', async () => {
      const s = get();
      perUser ??= await startA2AUpstream('unused', { credential: { header: 'x-agent-token', values: [ALICE_TOKEN] } });
      const upstream = perUser;
      const integration = await s.admin<View>('POST', '/agent-integrations', {
        name: 'Per user',
        slug: uniqueSlug('per-user'),
        workspace_id: s.defaultWorkspace,
        url: upstream.url,
        auth: { type: 'user_token', header_name: 'X-Agent-Token' },
      });
      expect(integration.status).toBe(201);
      expect(integration.body.auth).toEqual({ type: 'user_token', header_name: 'X-Agent-Token' });
      const server = await s.admin<View>('POST', '/agent-servers', { name: 'Per user', slug: uniqueSlug('per-user'), agent_integration_id: integration.body.id });
      expect(server.status).toBe(201);
      const id = server.body.id;

      // Before connecting, and for a key without a user: refused by the gateway, nothing sent upstream.
      const calls = upstream.calls.length;
      const unconnected = await probe(s, id, s.keys.alice);
      expect(unconnected.status).toBe(403);
      expect(await unconnected.text()).toContain(`/v1/agent-servers/${id}/connections`);
      expect((await probe(s, id, s.keys.service)).status).toBe(403);
      expect(upstream.calls.length).toBe(calls);

      const connected = await s.admin<View>('POST', `/agent-servers/${id}/connections`, { token: ALICE_TOKEN }, s.keys.alice);
      expect(connected.status).toBe(201);
      expect(connected.body).toMatchObject({ object: 'agent_connection', agent_server_id: id, user_id: s.keys.aliceId });
      expect(JSON.stringify(connected.body)).not.toContain(ALICE_TOKEN);
      const stored = await s.db.query(`SELECT secret FROM agent_connections WHERE agent_server_id = '${id}'`);
      expect(stored).toHaveLength(1);
      expect(String(stored[0]?.secret)).not.toContain(ALICE_TOKEN);
      const listed = await s.admin<{ data: { user_id: string }[] }>('GET', `/agent-servers/${id}/connections`);
      expect(listed.body.data.map((c) => c.user_id)).toEqual([s.keys.aliceId]);

      // Alice's call carries her token; Bob's own (wrong) token is what reaches the upstream for him.
      const result = await s.legacyClient(id, s.keys.alice).sendMessage(send('echo mine'));
      if (!isTask(result)) throw new Error('expected a task');
      expect(result.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(upstream.credentials.at(-1)).toBe(ALICE_TOKEN);
      expect((await s.admin('POST', `/agent-servers/${id}/connections`, { token: 'bob-guess' }, s.keys.bob)).status).toBe(201);
      expect((await probe(s, id, s.keys.bob)).status).toBe(401);
      expect(upstream.credentials.at(-1)).toBe('bob-guess');

      // Bob may not revoke Alice's; she revokes her own, and is refused again.
      expect((await s.admin('DELETE', `/agent-servers/${id}/connections?user_id=${s.keys.aliceId}`, undefined, s.keys.bob)).status).toBe(403);
      expect((await s.admin('DELETE', `/agent-servers/${id}/connections`, undefined, s.keys.alice)).status).toBe(204);
      expect((await probe(s, id, s.keys.alice)).status).toBe(403);

      // A new URL revokes what users gave for the old one (Bob's here).
      expect((await s.admin('GET', `/agent-servers/${id}/connections`)).body).toMatchObject({ total: 1 });
      expect((await s.admin('PUT', `/agent-integrations/${integration.body.id}`, { url: `${upstream.origin}/a2a?moved=1` })).status).toBe(200);
      expect((await s.admin('GET', `/agent-servers/${id}/connections`)).body).toMatchObject({ total: 0 });
    });

    test('a connection is refused for a server whose integration does not take per-user tokens', async () => {
      const s = get();
      const integration = await s.admin<View>('POST', '/agent-integrations', { name: 'Shared', slug: uniqueSlug('shared'), workspace_id: s.defaultWorkspace, url: s.upstream.url });
      const server = await s.admin<View>('POST', '/agent-servers', { name: 'Shared', slug: uniqueSlug('shared'), agent_integration_id: integration.body.id });
      const refused = await s.admin<{ error: { param: string } }>('POST', `/agent-servers/${server.body.id}/connections`, { token: 'x' }, s.keys.alice);
      expect([refused.status, refused.body.error.param]).toEqual([400, 'token']);
    });

    test('secret_mappings: one header and a JSON object of headers, resolved from Vault per call; a bad target is refused', async () => {
      const s = get();
      const path = `agents-${dialect}/upstream`;
      vault.write(path, { token: `Bearer ${UPSTREAM_TOKEN}`, headers: JSON.stringify({ Authorization: `Bearer ${UPSTREAM_TOKEN}` }) });
      const reference = await s.admin<View>('POST', '/secret-references', {
        name: `Agent vault ${dialect}`,
        manager_type: 'hashicorp_vault',
        auth_config: { address: vault.url, token: VAULT_TOKEN },
        secret_path: path,
        allow_all_workspaces: true,
      });
      expect(reference.status).toBe(201);

      const bad = await s.admin<{ error: { param: string } }>('POST', '/agent-integrations', {
        name: 'Bad',
        workspace_id: s.defaultWorkspace,
        url: s.upstream.url,
        secret_mappings: [{ target_field: 'body.token', secret_reference_id: reference.body.id }],
      });
      expect([bad.status, bad.body.error.param]).toEqual([400, 'secret_mappings[0].target_field']);

      const mappings = [
        [{ target_field: 'headers.Authorization', secret_reference_id: reference.body.id, secret_key: 'token' }],
        [{ target_field: 'headers', secret_reference_id: reference.body.id, secret_key: 'headers', value_format: 'json' }],
      ];
      for (const secret_mappings of mappings) {
        const integration = await s.admin<View>('POST', '/agent-integrations', { name: 'Vaulted', slug: uniqueSlug('vaulted'), workspace_id: s.defaultWorkspace, url: s.upstream.url, secret_mappings });
        expect(integration.status).toBe(201);
        expect(integration.body.secret_mappings).toEqual(secret_mappings);
        const server = await s.admin<View>('POST', '/agent-servers', { name: 'Vaulted', slug: uniqueSlug('vaulted'), agent_integration_id: integration.body.id });
        // The card sync used the mapped credential too (the card needs none, but it is sent).
        expect(server.body.sync_status).toBe('synced');
        const before = s.upstream.calls.length;
        const result = await s.legacyClient(server.body.id, s.keys.service).sendMessage(send('echo vaulted'));
        if (!isTask(result)) throw new Error('expected a task');
        expect(result.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(s.upstream.calls.slice(before)).toEqual([{ method: 'message/send', authorization: `Bearer ${UPSTREAM_TOKEN}` }]);
      }

      // Rotated in Vault: the next call (once the secret cache lapses) sends the new value, which the upstream refuses.
      vault.write(path, { token: 'Bearer rotated', headers: JSON.stringify({ Authorization: 'Bearer rotated' }) });
      await Bun.sleep(300);
      const servers = await s.admin<{ data: View[] }>('GET', '/agent-servers?page_size=100');
      const vaulted = servers.body.data.find((v) => String(v.name) === 'Vaulted') as View;
      expect((await probe(s, vaulted.id, s.keys.service)).status).toBe(401);
      expect(s.upstream.calls.at(-1)?.authorization).toBe('Bearer rotated');
    });
  });
}
