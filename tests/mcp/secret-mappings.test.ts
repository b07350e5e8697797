/**
 * MCP integrations whose credential lives in a secret manager (a local Vault): `secret_mappings` to one header
 * (`headers.Authorization`) or to a JSON object of headers (`headers`, value_format json), resolved each time the
 * gateway connects — a rotated secret is used by the next connection once the secret cache lapses — and the
 * scheduled metadata sync (MCP_SYNC_INTERVAL_MS) reading servers again without any call.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { startVault } from '../mocks/secret-managers/vault.ts';
import { type McpStack, UPSTREAM_TOKEN, useMcpStack } from './support.ts';

const VAULT_TOKEN = 'hvs.mcp-mappings-token';
const vault = startVault({ tokens: [VAULT_TOKEN] });
afterAll(() => vault.stop());

type View = Record<string, unknown> & { id: string; slug: string };

/** Polls the server until its sync_status is `status` (the schedule runs in the background); a hang guard, not a timing check. */
async function waitForStatus(s: McpStack, id: string, status: string): Promise<View> {
  for (let i = 0; i < 200; i++) {
    const server = await s.admin<View>('GET', `/mcp-servers/${id}`);
    if (server.body.sync_status === status) return server.body;
    await Bun.sleep(100);
  }
  throw new Error(`the server never became ${status}`);
}

for (const dialect of E2E_DIALECTS) {
  describe(`MCP secret mappings and the sync schedule [${dialect}]`, () => {
    const get = useMcpStack(dialect, { SECRET_REFERENCES_CACHE_TTL_MS: '200', MCP_SYNC_INTERVAL_MS: '300' });
    const path = `mcp-${dialect}/upstream`;

    async function reference(s: McpStack): Promise<string> {
      const created = await s.admin<View>('POST', '/secret-references', {
        name: `MCP vault ${dialect}`,
        manager_type: 'hashicorp_vault',
        auth_config: { address: vault.url, token: VAULT_TOKEN },
        secret_path: path,
        allow_all_workspaces: true,
      });
      expect(created.status).toBe(201);
      return created.body.id;
    }

    test('one header and a JSON object of headers, resolved at connect time; a rotated secret is picked up by the schedule', async () => {
      const s = get();
      vault.write(path, { token: `Bearer ${UPSTREAM_TOKEN}`, headers: JSON.stringify({ Authorization: `Bearer ${UPSTREAM_TOKEN}` }) });
      const ref = await reference(s);

      const single = await s.admin<View>('POST', '/mcp-integrations', {
        name: 'From vault',
        url: s.upstream.url,
        secret_mappings: [{ target_field: 'headers.Authorization', secret_reference_id: ref, secret_key: 'token' }],
      });
      expect(single.status).toBe(201);
      expect(single.body.secret_mappings).toEqual([{ target_field: 'headers.Authorization', secret_reference_id: ref, secret_key: 'token' }]);
      const server = await s.admin<View>('POST', '/mcp-servers', { name: 'Vaulted', mcp_integration_id: single.body.id });
      expect(server.body.sync_status).toBe('synced');
      const { client } = await s.connect(server.body.slug);
      expect((await client.callTool({ name: 'echo', arguments: { text: 'vault' } })).content).toEqual([{ type: 'text', text: 'echo: vault' }]);
      await client.close();

      const json = await s.admin<View>('POST', '/mcp-integrations', {
        name: 'Headers from vault',
        url: s.upstream.url,
        secret_mappings: [{ target_field: 'headers', secret_reference_id: ref, secret_key: 'headers', value_format: 'json' }],
      });
      expect(json.status).toBe(201);
      const jsonServer = await s.admin<View>('POST', '/mcp-servers', { name: 'Vaulted headers', mcp_integration_id: json.body.id });
      expect(jsonServer.body.sync_status).toBe('synced');

      // The secret is rotated to a value the upstream refuses: the scheduled sync reads it and fails, then succeeds
      // once the secret is right again; nobody calls the sync route.
      vault.write(path, { token: 'Bearer rotated-wrong', headers: JSON.stringify({ Authorization: 'Bearer rotated-wrong' }) });
      expect((await waitForStatus(s, server.body.id, 'failed')).sync_error).toContain('unauthorised');
      await waitForStatus(s, jsonServer.body.id, 'failed');
      vault.write(path, { token: `Bearer ${UPSTREAM_TOKEN}`, headers: JSON.stringify({ Authorization: `Bearer ${UPSTREAM_TOKEN}` }) });
      expect((await waitForStatus(s, server.body.id, 'synced')).server_name).toBe('loopback-tools');
    });

    test('a mapping must target a header; headers as a whole needs value_format json; the reference must exist', async () => {
      const s = get();
      const ref = await reference(s);
      const bad = async (mapping: Record<string, unknown>) =>
        (await s.admin<{ error: { param: string } }>('POST', '/mcp-integrations', { name: 'Bad', url: s.upstream.url, secret_mappings: [{ secret_reference_id: ref, ...mapping }] })).body.error;
      expect((await bad({ target_field: 'url' })).param).toBe('secret_mappings[0].target_field');
      expect((await bad({ target_field: 'headers' })).param).toBe('secret_mappings[0].target_field');
      expect((await bad({ target_field: 'headers.Bad Header' })).param).toBe('secret_mappings[0].target_field');
      const missing = await s.admin('POST', '/mcp-integrations', {
        name: 'Missing',
        url: s.upstream.url,
        secret_mappings: [{ target_field: 'headers.Authorization', secret_reference_id: 'no-such-reference' }],
      });
      expect([400, 404]).toContain(missing.status);
    });
  });
}
