/**
 * Stored secrets cannot be redirected (issue #13, item 2), each path written as the attack, on SQLite and MariaDB.
 *
 * The attacker may write a saved config, a virtual key, an integration or a saved guardrail, and call models, but
 * does not know the secrets stored in them. They send the masked placeholder back (or leave the key out) while
 * pointing the object at a server of theirs, or override a stored target's fields in a request, and hope the next
 * call carries the stored secret there. "The attacker's host" is a loopback server that records every request; the
 * tests assert that no stored secret ever reaches it, and that what answers show of a secret is only its last 4
 * characters.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { uniqueSlug, useStack, workspaceWithKey } from '../stored-access/support.ts';

type ErrorBody = { error: { message: string; type: string; code: string | null; param: string | null } };

/** A loopback server that records every request it gets (headers and body as text) and answers `answer`. */
function recorder(answer: (req: Request) => Response = () => Response.json({ verdict: true })) {
  const seen: { url: string; text: string }[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const headers = [...req.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n');
      seen.push({ url: req.url, text: `${req.method} ${req.url}\n${headers}\n\n${await req.text()}` });
      return answer(req);
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, seen, everything: () => seen.map((r) => r.text).join('\n'), stop: () => server.stop(true) };
}

// The Entra authority the gateway asks for tokens (AZURE_AUTHORITY_HOST) and the gateway's own federated identity
// (AZURE_FEDERATED_TOKEN_FILE): started before the gateways, which read them at start.
const authority = recorder(() => Response.json({ access_token: 'entra-access-token', expires_in: 3600, token_type: 'Bearer' }));
const tokenDir = mkdtempSync(join(tmpdir(), 'gw-secret-redirect-'));
const FEDERATED_ASSERTION = 'gateway-federated-identity-assertion';
writeFileSync(join(tokenDir, 'token'), FEDERATED_ASSERTION);
afterAll(() => {
  authority.stop();
  rmSync(tokenDir, { recursive: true, force: true });
});

for (const dialect of E2E_DIALECTS) {
  describe(`stored secrets cannot be redirected [${dialect}]`, () => {
    const get = useStack(dialect, { AZURE_AUTHORITY_HOST: authority.url, AZURE_FEDERATED_TOKEN_FILE: join(tokenDir, 'token') });
    let attacker: ReturnType<typeof recorder>;
    beforeAll(() => {
      attacker = recorder();
    });
    afterAll(() => attacker.stop());

    /** The stored secret never reached the attacker's host. */
    const neverLeaked = (secret: string) => expect(attacker.everything()).not.toContain(secret);

    test('saved config: the mask sent back with a new custom_host (or provider) is refused; a request header cannot move it either', async () => {
      const s = get();
      const SECRET = 'sk-config-stored-secret-0001';
      const ws = await workspaceWithKey(s, ['configs.read', 'configs.write', 'completions.write']);
      const created = await s.admin<{ id: string; config: Record<string, unknown> }>('POST', '/configs', {
        name: 'Victim config',
        workspace_id: ws.id,
        config: { provider: 'openai', api_key: SECRET, custom_host: s.mock.url },
      });
      expect(created.status).toBe(201);

      // The attacker (a writer of the workspace's configs) reads the config and points it at their host.
      const read = await s.admin<{ config: Record<string, unknown> }>('GET', `/configs/${created.body.id}`, undefined, ws.key);
      expect(read.body.config.api_key).toBe('********');
      for (const change of [{ custom_host: attacker.url }, { provider: 'openai-compatible', custom_host: attacker.url }]) {
        const put = await s.admin<ErrorBody>('PUT', `/configs/${created.body.id}`, { config: { ...read.body.config, ...change } }, ws.key);
        expect(put.status).toBe(400);
        expect(put.body.error.message).toMatch(/api_key: .*custom_host.* changed/);
      }
      const chat = await s.chat({ 'x-gateway-api-key': ws.key, 'x-gateway-config': created.body.id });
      expect(chat.status).toBe(200);
      neverLeaked(SECRET);
      expect(s.mock.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);

      // Nor does a custom host header move the stored key of a saved config that names no host (vllm's own base URL
      // is on loopback, so nothing leaves this machine either way).
      const LOCAL_SECRET = 'sk-config-stored-secret-0005';
      const local = await s.admin<{ id: string }>('POST', '/configs', { name: 'Victim local', workspace_id: ws.id, config: { provider: 'vllm', api_key: LOCAL_SECRET } });
      expect(local.status).toBe(201);
      await s.chat({ 'x-gateway-api-key': ws.key, 'x-gateway-config': local.body.id, 'x-gateway-custom-host': attacker.url });
      neverLeaked(LOCAL_SECRET);

      // Whoever enters the key again may change the host (and the mask still round-trips when nothing moves).
      expect((await s.admin('PUT', `/configs/${created.body.id}`, { config: { ...read.body.config, retry: { attempts: 1 } } }, ws.key)).status).toBe(200);
      const own = await s.admin('PUT', `/configs/${created.body.id}`, { config: { ...read.body.config, api_key: 'sk-attackers-own-key', custom_host: attacker.url } }, ws.key);
      expect(own.status).toBe(200);
    });

    test('virtual key: the key left out or sent back masked with a new custom_host is refused', async () => {
      const s = get();
      const SECRET = 'sk-virtual-stored-secret-0002';
      const ws = await workspaceWithKey(s, ['virtual_keys.read', 'virtual_keys.write', 'completions.write']);
      const slug = uniqueSlug('victim-vk');
      const created = await s.admin<{ id: string; key: string }>('POST', '/virtual-keys', {
        name: 'Victim key',
        slug,
        provider: 'openai',
        key: SECRET,
        workspace_id: ws.id,
        configurations: { custom_host: s.mock.url },
      });
      expect(created.status).toBe(201);

      const masked = (await s.admin<{ key: string }>('GET', `/virtual-keys/${created.body.id}`, undefined, ws.key)).body.key;
      for (const body of [{ configurations: { custom_host: attacker.url } }, { key: masked, configurations: { custom_host: attacker.url } }]) {
        const put = await s.admin<ErrorBody>('PUT', `/virtual-keys/${created.body.id}`, body, ws.key);
        expect({ status: put.status, param: put.body.error?.param }).toEqual({ status: 400, param: 'key' });
      }
      // A request naming the virtual key cannot send it elsewhere: not by custom_host, not by another provider.
      await s.chat({ 'x-gateway-api-key': ws.key, 'x-gateway-virtual-key': slug });
      await s.chat({ 'x-gateway-api-key': ws.key, 'x-gateway-virtual-key': slug, 'x-gateway-custom-host': attacker.url });
      await s.chat({ 'x-gateway-api-key': ws.key, 'x-gateway-config': JSON.stringify({ virtual_key: slug, provider: 'openai-compatible', custom_host: attacker.url }) });
      neverLeaked(SECRET);
      expect(s.mock.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
    });

    test('integration: a masked key (or AWS secret) with a new host or region is refused, and so is a per-model host without the key', async () => {
      const s = get();
      const SECRET = 'sk-integration-stored-secret-0003';
      const slug = uniqueSlug('victim-int');
      const created = await s.admin<{ id: string }>('POST', '/integrations', {
        name: 'Victim integration',
        slug,
        ai_provider_id: 'openai',
        key: SECRET,
        configurations: { custom_host: s.mock.url },
        workspaces: [{ id: 'default' }],
      });
      expect(created.status).toBe(201);
      // The attacker: an organisation key that may write integrations, and does not know the key.
      const org = await s.admin<{ key: string }>('POST', '/api-keys', { name: 'integrations writer', type: 'organisation-service', scopes: ['integrations.read', 'integrations.write'] });
      const read = await s.admin<{ key: string; configurations: Record<string, unknown> }>('GET', `/integrations/${slug}`, undefined, org.body.key);
      for (const body of [{ key: read.body.key, configurations: { custom_host: attacker.url } }, { configurations: { custom_host: attacker.url } }]) {
        const put = await s.admin<ErrorBody>('PUT', `/integrations/${slug}`, body, org.body.key);
        expect({ status: put.status, param: put.body.error?.param }).toEqual({ status: 400, param: 'key' });
      }
      const model = await s.admin<ErrorBody>(
        'PUT',
        `/integrations/${slug}/integration-models`,
        { models: [{ slug: 'gpt-4o-mini', configurations: { custom_host: attacker.url } }] },
        org.body.key,
      );
      expect({ status: model.status, param: model.body.error?.param }).toEqual({ status: 400, param: 'key' });
      const wrongKey = await s.admin<ErrorBody>('PUT', `/integrations/${slug}/integration-models`, { models: [{ slug: 'gpt-4o-mini', configurations: { custom_host: attacker.url } }], key: 'sk-guess' }, org.body.key);
      expect(wrongKey.status).toBe(400);

      await s.chat({ 'x-gateway-provider': `@${slug}` });
      await s.chat({ 'x-gateway-config': JSON.stringify({ provider: `@${slug}`, custom_host: attacker.url }) });
      neverLeaked(SECRET);
      expect(s.mock.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);

      // Bedrock: the masked secret access key with another region is refused the same way.
      const aws = await s.admin<{ id: string; configurations: Record<string, unknown> }>('POST', '/integrations', {
        name: 'Victim bedrock',
        ai_provider_id: 'bedrock',
        configurations: { svcA_access_key_id: 'AKIAIOSFODNN7EXAMPLE', svcA_secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', svcA_region: 'us-east-1' },
      });
      const moved = await s.admin<ErrorBody>('PUT', `/integrations/${aws.body.id}`, { configurations: { ...aws.body.configurations, svcA_region: 'eu-west-1' } }, org.body.key);
      expect({ status: moved.status, param: moved.body.error?.param }).toEqual({ status: 400, param: 'configurations.svcA_access_key_id' });
      expect(moved.body.error.message).toContain('configurations.svcA_secret_access_key');
    });

    test('saved guardrail: masked webhook headers with a new webhookURL are refused', async () => {
      const s = get();
      const SECRET = 'Bearer hook-stored-secret-0004';
      const legit = recorder();
      try {
        const ws = await workspaceWithKey(s, ['guardrails.read', 'guardrails.write', 'configs.write', 'completions.write']);
        const created = await s.admin<{ id: string; entry: Record<string, unknown> }>('POST', '/guardrails', {
          name: 'Victim webhook',
          workspace_id: ws.id,
          entry: { deny: true, 'default.webhook': { webhookURL: `${legit.url}/check`, headers: { authorization: SECRET } } },
        });
        expect(created.status).toBe(201);
        const read = await s.admin<{ entry: Record<string, Record<string, unknown>> }>('GET', `/guardrails/${created.body.id}`, undefined, ws.key);
        const hook = read.body.entry['default.webhook'] as Record<string, unknown>;
        const put = await s.admin<ErrorBody>('PUT', `/guardrails/${created.body.id}`, { entry: { ...read.body.entry, 'default.webhook': { ...hook, webhookURL: `${attacker.url}/collect` } } }, ws.key);
        expect(put.status).toBe(400);
        expect(put.body.error.message).toContain('headers.authorization: webhookURL changed');

        const config = JSON.stringify({ provider: 'openai', api_key: 'sk-callers-own-key', custom_host: s.mock.url, input_guardrails: [created.body.id] });
        expect((await s.chat({ 'x-gateway-api-key': ws.key, 'x-gateway-config': config })).status).toBe(200);
        neverLeaked(SECRET);
        expect(legit.everything()).toContain(SECRET);
      } finally {
        legit.stop();
      }
    });

    test('entraFederated integration: a request cannot swap svcB tenant or client ids to borrow the gateway identity', async () => {
      const s = get();
      const slug = uniqueSlug('victim-entra');
      const created = await s.admin('POST', '/integrations', {
        name: 'Victim federated',
        slug,
        ai_provider_id: 'azure-openai',
        auth_mode: 'entraFederated',
        configurations: { custom_host: s.mock.url, deployment_id: 'gpt-4o-mini', svcB_entra_tenant_id: 'victim-tenant', svcB_entra_client_id: 'victim-client' },
        workspaces: [{ id: 'default' }],
      });
      expect(created.status).toBe(201);
      const config = { provider: `@${slug}`, svcB_entra_tenant_id: 'attacker-tenant', svcB_entra_client_id: 'attacker-client', svcB_entra_scope: 'api://attacker/.default' };
      await s.chat({ 'x-gateway-config': JSON.stringify(config) });
      // The gateway's identity was presented only for the stored tenant and client, never for the attacker's.
      for (const wanted of ['attacker-tenant', 'attacker-client', 'api%3A%2F%2Fattacker']) expect(authority.everything()).not.toContain(wanted);
      expect(authority.seen.some((r) => r.url.includes('/victim-tenant/') && r.text.includes('client_id=victim-client'))).toBe(true);
      expect(authority.everything()).toContain(FEDERATED_ASSERTION);
    });

    test('masked values show the last 4 characters of a long secret and nothing of a short one', async () => {
      const s = get();
      const LONG = 'sk-live-QJ7rT2pX9mW4vN8bWXYZ';
      const SHORT = 'Zq8Rt5Vn2Lk7Hp3';
      const created = await s.admin<{ id: string; key: string; configurations: Record<string, string> }>('POST', '/integrations', {
        name: 'Masked',
        ai_provider_id: 'bedrock',
        key: LONG,
        configurations: { svcA_access_key_id: SHORT, svcA_secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
      });
      const read = await s.admin<{ key: string; configurations: Record<string, string> }>('GET', `/integrations/${created.body.id}`);
      expect(read.body.key).toBe('****WXYZ');
      expect(read.body.configurations).toEqual({ svcA_access_key_id: '****', svcA_secret_access_key: '****EKEY' });
      const text = JSON.stringify(read.body);
      // No run of 5 characters of a secret appears, other than within its last 4 (the documented hint).
      for (const secret of [LONG, SHORT, 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'])
        for (let i = 0; i + 5 <= secret.length - 3; i++) expect(text).not.toContain(secret.slice(i, i + 5));
    });
  });
}
