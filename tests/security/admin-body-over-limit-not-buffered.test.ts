/**
 * An attacker sends endless request bodies to the routes added today that take large JSON-RPC or SCIM bodies: the MCP
 * proxy, the A2A proxy (both for any key with the invoke scope) and SCIM (public, before its token is judged). Each
 * body is refused with 413 once it passes ADMIN_MAX_BODY_BYTES, having read at most a chunk more: never held whole.
 */
import { describe, expect, test } from 'bun:test';
import { useStack, workspaceWithKey } from '../stored-access/support.ts';
import { endlessJson } from './endless-json.ts';

const LIMIT = 64 * 1024;
const CHUNK = 16 * 1024;
const TOTAL = 8 * 1024 * 1024;

const endless = () => endlessJson('{"jsonrpc":"2.0","params":"', TOTAL, CHUNK);

describe('administration bodies over ADMIN_MAX_BODY_BYTES [sqlite]', () => {
  const stack = useStack('sqlite', { ADMIN_MAX_BODY_BYTES: String(LIMIT), SCIM_ENABLED: 'ON' });

  // A workspace-service key with the route's own scope (none for SCIM: its token is judged after the body is read).
  for (const [name, path, scope] of [
    ['the MCP proxy', '/mcp/some-server', 'mcp_servers.invoke'],
    ['the A2A proxy', '/agent-servers/some-agent/a2a', 'agents.invoke'],
    ['SCIM', '/scim/v2/Users', null],
  ] as const) {
    test(`${name}: a chunked body is refused as soon as it passes the limit`, async () => {
      const s = stack();
      const headers: Record<string, string> = scope
        ? { 'x-gateway-api-key': (await workspaceWithKey(s, [scope])).key, accept: 'application/json, text/event-stream' }
        : { authorization: 'Bearer not-a-scim-token' };
      const upload = endless();
      const res = await s.gw.handle(
        new Request(`http://gateway/v1${path}`, {
          method: 'POST',
          headers: { 'content-type': name === 'SCIM' ? 'application/scim+json' : 'application/json', ...headers },
          body: upload.body,
          duplex: 'half',
        } as RequestInit),
      );
      await res.text();
      expect(res.status).toBe(413);
      expect(upload.pulled()).toBeLessThanOrEqual(LIMIT + 2 * CHUNK);
    });
  }
});
