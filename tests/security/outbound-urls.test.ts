// Issue #13, item 4: outbound URLs are guarded everywhere and at connect time.
//
// The attacker writes a config (or a request header) naming a URL: a custom host, a guardrail webhook, a partner
// guardrail service, a service account's token_uri, a secret manager's address. They control the DNS of that name and
// answer a public address to the check, then 127.0.0.1 (DNS rebinding); or they name a loopback address outright, and
// read what comes back in error messages.
//
// Nothing here leaves the machine: the gateway's resolver is a stub (no DNS query), and globalThis.fetch is replaced
// by a recorder that answers itself and never connects (the in-process gateway's outbound calls all go through it).
// The TLS test connects to a local server only: its connector maps the stub's public address to 127.0.0.1.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostGuard, type Resolver } from '@gateway/pipeline';
import { GatewayError, type OutboundInit, Services } from '@gateway/sdk';
import { createGateway, type Gateway } from '@gateway/server';
import { readSettings } from '../../core/server/src/env.ts';
import { VaultKvClient } from '../../admin/secret-references/src/clients/vault.ts';
import { ManagerFailure } from '../../admin/secret-references/src/errors.ts';
import { ROOT } from '../helpers/gateway-process.ts';
import { TEST_ADMIN_KEY } from '../helpers/in-process.ts';

/** A documentation address (TEST-NET-3): public to the guard, and never connected to (the recorder answers). */
const PUBLIC = '203.0.113.5';
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] };
const CHAT_ANSWER = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};

/**
 * Answers PUBLIC to the first lookup of every name and 127.0.0.1 to every later one: a rebinding attacker's DNS.
 * Records each lookup.
 */
function rebindingResolver() {
  const lookups: string[] = [];
  const resolve: Resolver = async (name) => {
    const first = !lookups.includes(name);
    lookups.push(name);
    return first ? [PUBLIC] : ['127.0.0.1'];
  };
  return { lookups, resolve };
}

interface Connection {
  url: string;
  host: string | null;
  serverName: string | undefined;
  redirect: string | undefined;
}

function connectionOf(input: string | URL | Request, init: OutboundInit | undefined): Connection {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  return { url, host: new Headers(init?.headers).get('host'), serverName: init?.tls?.serverName as string | undefined, redirect: init?.redirect };
}

const hostOf = (url: string) => new URL(url).hostname;

// ---- the default ----------------------------------------------------------------------------------------------------

describe('loopback is not trusted by default', () => {
  let server: ReturnType<typeof Bun.serve>;
  let hits = 0;
  let gw: Gateway;

  beforeAll(async () => {
    server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => (hits++, Response.json(CHAT_ANSWER)) });
    // TRUSTED_CUSTOM_HOSTS not set: the gateway's own default.
    gw = await createGateway({
      env: { DATABASE_URL: 'sqlite::memory:', GATEWAY_ADMIN_API_KEY: TEST_ADMIN_KEY, LOG_LEVEL: 'silent', GATEWAY_ENCRYPTION_KEY: 'gateway-test-encryption-key' },
      roots: [ROOT],
    });
  });
  afterAll(async () => {
    await gw?.close();
    server?.stop(true);
  });

  test('TRUSTED_CUSTOM_HOSTS defaults to empty', () => {
    expect(readSettings({}).trustedCustomHosts).toEqual([]);
    expect(gw.settings.trustedCustomHosts).toEqual([]);
  });

  test('a custom host on this machine (127.0.0.1, localhost, [::1], ::ffff:127.0.0.1) is refused before any connection', async () => {
    const got: Record<string, string> = {};
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '[::ffff:127.0.0.1]']) {
      const customHost = `http://${host}:${server.port}/v1`;
      const res = await gw.handle(
        new Request('http://gateway.test/v1/chat/completions', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': customHost, authorization: 'Bearer sk-attacker' },
          body: JSON.stringify(CHAT),
        }),
      );
      got[host] = `${res.status} ${((await res.json()) as { error?: { code?: string } }).error?.code}`;
    }
    expect(got).toEqual({ '127.0.0.1': '400 forbidden_custom_host', localhost: '400 forbidden_custom_host', '[::1]': '400 forbidden_custom_host', '[::ffff:127.0.0.1]': '400 forbidden_custom_host' });
    expect(hits).toBe(0);
  });
});

// ---- the guard itself: resolve once, check every address, connect to the checked one ---------------------------------

describe('HostGuard.fetch (stub resolver, recording connector: no DNS, no connection)', () => {
  function recorder() {
    const connections: Connection[] = [];
    const connect = async (url: string, init: OutboundInit) => {
      connections.push(connectionOf(url, init));
      return Response.json({ ok: true });
    };
    return { connections, connect };
  }

  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => 'connected',
      (e: unknown) => (e instanceof GatewayError ? `${e.status} ${e.code}` : `threw ${String(e)}`),
    );

  test('DNS rebinding: the address checked is the address connected to; a later 127.0.0.1 answer is checked and refused', async () => {
    const dns = rebindingResolver();
    const wire = recorder();
    // ttlMs 0: every call resolves again, so the attacker's second answer is what the guard sees next.
    const guard = new HostGuard([], dns.resolve, { ttlMs: 0, connect: wire.connect });
    const first = await guard.fetch('http://rebind.example:8080/v1/chat/completions?x=1', { method: 'POST', headers: { authorization: 'Bearer k' } });
    expect(first.status).toBe(200);
    expect(await refusal(guard.fetch('http://rebind.example:8080/v1/chat/completions'))).toBe('400 forbidden_custom_host');
    expect(dns.lookups).toEqual(['rebind.example', 'rebind.example']);
    // One connection, to the address that was checked, with the name in Host; never by name, never to 127.0.0.1.
    expect(wire.connections).toEqual([{ url: `http://${PUBLIC}:8080/v1/chat/completions?x=1`, host: 'rebind.example:8080', serverName: undefined, redirect: 'manual' }]);
  });

  test('within the address cache the checked address is reused: the rebinding answer is never even asked for', async () => {
    const dns = rebindingResolver();
    const wire = recorder();
    const guard = new HostGuard([], dns.resolve, { connect: wire.connect });
    for (let i = 0; i < 3; i++) expect((await guard.fetch(`https://api.rebind.example/v1/x${i}`)).status).toBe(200);
    expect(dns.lookups).toEqual(['api.rebind.example']);
    expect(wire.connections.map((c) => [hostOf(c.url), c.host, c.serverName])).toEqual([
      [PUBLIC, 'api.rebind.example', 'api.rebind.example'],
      [PUBLIC, 'api.rebind.example', 'api.rebind.example'],
      [PUBLIC, 'api.rebind.example', 'api.rebind.example'],
    ]);
  });

  test('every address is checked: one private address among public ones refuses the name, nothing is connected', async () => {
    const wire = recorder();
    const guard = new HostGuard([], async () => [PUBLIC, '2606:2800:220:1::1', '10.0.0.7'], { connect: wire.connect });
    expect(await refusal(guard.fetch('https://mixed.example/v1'))).toBe('400 forbidden_custom_host');
    const v6 = new HostGuard([], async () => ['2606:2800:220:1::1', '::ffff:169.254.169.254'], { connect: wire.connect });
    expect(await refusal(v6.fetch('https://mixed6.example/v1'))).toBe('400 forbidden_custom_host');
    expect(wire.connections).toEqual([]);
  });

  test('every spelling of a URL is read as fetch reads it (no parser confusion): upper case, backslashes, userinfo', async () => {
    const dns = rebindingResolver();
    const wire = recorder();
    const guard = new HostGuard([], dns.resolve, { connect: wire.connect });
    await guard.fetch('HTTP://Spelled.Example:81\\v1?q');
    await guard.fetch('http://user:pw@userinfo.example/v1');
    expect(await refusal(guard.fetch('http://public.example@127.0.0.1/v1'))).toBe('400 forbidden_custom_host');
    expect(await refusal(guard.fetch('http:\\\\127.0.0.1\\v1'))).toBe('400 forbidden_custom_host');
    expect(wire.connections.map((c) => [c.url, c.host])).toEqual([
      [`http://${PUBLIC}:81/v1?q`, 'spelled.example:81'],
      [`http://user:pw@${PUBLIC}/v1`, 'userinfo.example'],
    ]);
  });

  test('trusted hosts and public literals need no lookup and are connected as written; redirects are never followed', async () => {
    const dns = rebindingResolver();
    const wire = recorder();
    const guard = new HostGuard(['models.internal.example'], dns.resolve, { connect: wire.connect });
    await guard.fetch('http://models.internal.example:8000/v1', { redirect: 'follow' });
    await guard.fetch(`https://${PUBLIC}/v1`);
    expect(dns.lookups).toEqual([]);
    expect(wire.connections).toEqual([
      { url: 'http://models.internal.example:8000/v1', host: null, serverName: undefined, redirect: 'manual' },
      { url: `https://${PUBLIC}/v1`, host: null, serverName: undefined, redirect: 'manual' },
    ]);
  });
});

// ---- https to a checked address: SNI and certificate verification stay on the name ----------------------------------

const OPENSSL = Bun.which('openssl');

describe.skipIf(!OPENSSL)('https to the checked address keeps SNI and certificate checks on the name (skipped when openssl is not installed)', () => {
  let dir: string;
  let server: ReturnType<typeof Bun.serve>;
  let ca: string;
  const seen: string[] = [];
  const certFor = (name: string) => {
    const key = join(dir, `${name}.key`);
    const crt = join(dir, `${name}.crt`);
    const made = Bun.spawnSync([OPENSSL as string, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', crt, '-days', '1', '-subj', `/CN=${name}`, '-addext', `subjectAltName=DNS:${name}`]);
    if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`);
    return { key: Bun.file(key), cert: Bun.file(crt), serverName: name };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outbound-tls-'));
    const a = certFor('a.guard.test');
    const b = certFor('b.guard.test');
    ca = (await a.cert.text()) + (await b.cert.text());
    server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      tls: [a, b],
      fetch: (req) => (seen.push(req.headers.get('host') ?? ''), new Response('ok')),
    });
  });
  afterAll(() => {
    server?.stop(true);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The guard resolves every name to PUBLIC; the connector stands in for the network by delivering PUBLIC to 127.0.0.1. */
  const guard = () =>
    new HostGuard([], async () => [PUBLIC], { connect: (url, init) => fetch(url.replace(PUBLIC, '127.0.0.1'), init) });
  const get = (g: HostGuard, name: string) =>
    g.fetch(`https://${name}:${server.port}/x`, { tls: { ca } }).then(
      async (r) => `${r.status} ${await r.text()}`,
      (e: { code?: string }) => `error ${e.code}`,
    );

  test('each name gets its own certificate (SNI) and it verifies against the name, not the address', async () => {
    const g = guard();
    expect(await get(g, 'a.guard.test')).toBe('200 ok');
    expect(await get(g, 'b.guard.test')).toBe('200 ok');
    expect(seen).toEqual([`a.guard.test:${server.port}`, `b.guard.test:${server.port}`]);
  });

  test('verification is on: a name the certificate does not carry, or an unknown issuer, fails', async () => {
    const g = guard();
    expect(await get(g, 'c.guard.test')).toBe('error ERR_TLS_CERT_ALTNAME_INVALID');
    const noCa = await g.fetch(`https://a.guard.test:${server.port}/x`).then(
      () => 'connected',
      (e: { code?: string }) => `error ${e.code}`,
    );
    expect(noCa).toMatch(/^error (DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)$/);
  });
});

// ---- every user-controlled URL goes through the one guard -------------------------------------------------------------

describe('every user-controlled URL goes through the guard (in-process gateway, stub DNS, recording fetch)', () => {
  const realFetch = globalThis.fetch;
  const connections: Connection[] = [];
  /** What the recorder answers, by path. */
  const answers: Record<string, () => Response> = {};
  const dns = rebindingResolver();
  let gw: Gateway;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

  beforeAll(async () => {
    const recorder = (async (input: string | URL | Request, init?: OutboundInit) => {
      const connection = connectionOf(input, init);
      connections.push(connection);
      const answer = answers[new URL(connection.url).pathname];
      return answer ? answer() : new Response('not here', { status: 404 });
    }) as typeof fetch;
    globalThis.fetch = Object.assign(recorder, { preconnect: realFetch.preconnect });
    gw = await createGateway({
      env: { DATABASE_URL: 'sqlite::memory:', GATEWAY_ADMIN_API_KEY: TEST_ADMIN_KEY, LOG_LEVEL: 'silent', GATEWAY_ENCRYPTION_KEY: 'gateway-test-encryption-key' },
      roots: [ROOT],
      resolve: dns.resolve,
    });
  });
  afterAll(async () => {
    globalThis.fetch = realFetch;
    await gw?.close();
  });

  const call = (config: Record<string, unknown>, headers: Record<string, string> = {}) =>
    gw.handle(
      new Request('http://gateway.test/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': JSON.stringify(config), ...headers },
        body: JSON.stringify(CHAT),
      }),
    );
  const since = (n: number) => connections.slice(n);
  const neverLoopback = () => expect(connections.filter((c) => ['127.0.0.1', '[::1]', 'localhost'].includes(hostOf(c.url)))).toEqual([]);

  test('custom host: the call goes to the address checked, twice, although the name rebinds to 127.0.0.1', async () => {
    answers['/v1/chat/completions'] = () => Response.json(CHAT_ANSWER);
    const before = connections.length;
    for (let i = 0; i < 2; i++) {
      const res = await call({ provider: 'openai', api_key: 'sk-x', custom_host: 'http://llm.rebind.test:8080/v1' });
      expect(res.status).toBe(200);
    }
    expect(since(before).map((c) => [c.url, c.host])).toEqual([
      [`http://${PUBLIC}:8080/v1/chat/completions`, 'llm.rebind.test:8080'],
      [`http://${PUBLIC}:8080/v1/chat/completions`, 'llm.rebind.test:8080'],
    ]);
    neverLoopback();
  });

  test('guardrail webhook (default.webhook): connected at the checked address; a loopback webhook is refused unsent', async () => {
    answers['/hook'] = () => Response.json({ verdict: true });
    const before = connections.length;
    const cfg = (webhookURL: string) => ({ provider: 'openai', api_key: 'sk-x', custom_host: 'http://llm.rebind.test:8080/v1', input_guardrails: [{ 'default.webhook': { webhookURL } }] });
    expect((await call(cfg('http://hook.rebind.test/hook'))).status).toBe(200);
    const refused = await call(cfg('http://127.0.0.1:9/hook'));
    expect(JSON.stringify(await refused.json())).toContain('"kind":"forbidden"');
    expect(since(before).map((c) => [hostOf(c.url), c.host, new URL(c.url).pathname])).toEqual([
      [PUBLIC, 'hook.rebind.test', '/hook'],
      [PUBLIC, 'llm.rebind.test:8080', '/v1/chat/completions'],
      [PUBLIC, 'llm.rebind.test:8080', '/v1/chat/completions'],
    ]);
    neverLoopback();
  });

  test('partner guardrail endpoint (policy.check baseURL): https to the checked address with SNI on the name', async () => {
    answers['/v1/policies/pol_1/evaluate'] = () => Response.json({ decision: 'allow' });
    const before = connections.length;
    const res = await call({ provider: 'openai', api_key: 'sk-x', custom_host: 'http://llm.rebind.test:8080/v1', input_guardrails: [{ 'policy.check': { policyId: 'pol_1', baseURL: 'https://policy.rebind.test' }, deny: true }] });
    expect(res.status).toBe(200);
    expect(since(before)[0]).toEqual({ url: `https://${PUBLIC}/v1/policies/pol_1/evaluate`, host: 'policy.rebind.test', serverName: 'policy.rebind.test', redirect: 'manual' });
    neverLoopback();
  });

  const vertex = (tokenUri: string) => ({
    provider: 'vertex-ai',
    svcC_region: 'us-central1',
    svcC_project_id: 'proj',
    svcC_service_account_json: { client_email: `svc-${tokenUri.length}@proj.iam.gserviceaccount.com`, private_key: pem, token_uri: tokenUri },
  });

  test('Vertex token_uri from a service-account JSON: fetched at the checked address; a loopback one is a 400 before any connection', async () => {
    answers['/token'] = () => Response.json({ access_token: 'ya29.test', expires_in: 3600 });
    const before = connections.length;
    await call({ ...vertex('https://oauth.rebind.test/token'), custom_host: 'http://llm.rebind.test:8080/v1' });
    expect(since(before)[0]).toEqual({ url: `https://${PUBLIC}/token`, host: 'oauth.rebind.test', serverName: 'oauth.rebind.test', redirect: 'manual' });

    const mark = connections.length;
    const res = await call(vertex('http://127.0.0.1:9/token'));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string; param: string } }).error).toMatchObject({ code: 'forbidden_custom_host', param: 'svcC_service_account_json' });
    expect(since(mark)).toEqual([]);
    neverLoopback();
  });

  test('secret manager address (Vault client with the gateway guard): checked address only; loopback refused unsent', async () => {
    answers['/v1/kv/data/team/openai'] = () => Response.json({ data: { data: { api_key: 'sk-from-vault' }, metadata: { version: 1 } } });
    const hostGuard = gw.service(Services.hostGuard);
    const client = new VaultKvClient({ hostGuard, timeoutMs: 1_000 });
    const before = connections.length;
    await client.get({ address: 'https://vault.rebind.test:8200', token: 'hvs.t', mount: 'kv' }, 'team/openai');
    expect(since(before)).toEqual([{ url: `https://${PUBLIC}:8200/v1/kv/data/team/openai`, host: 'vault.rebind.test:8200', serverName: 'vault.rebind.test', redirect: 'manual' }]);
    const mark = connections.length;
    const refused = await client.get({ address: 'http://127.0.0.1:8200', token: 'hvs.t', mount: 'kv' }, 'team/openai').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ManagerFailure);
    expect((refused as ManagerFailure).detail).toContain('the manager URL is refused');
    expect(since(mark)).toEqual([]);
    neverLoopback();
  });

  // ---- what comes back ----------------------------------------------------------------------------------------------

  const MARK = 'internal-body-7f3a';

  test('a webhook error answer is reported by its status, not its body', async () => {
    answers['/hook-fails'] = () => new Response(`<html>${MARK}</html>`, { status: 500 });
    const res = await call({ provider: 'openai', api_key: 'sk-x', custom_host: 'http://llm.rebind.test:8080/v1', input_guardrails: [{ 'default.webhook': { webhookURL: 'http://hook.rebind.test/hook-fails' } }] });
    const text = await res.text();
    expect(text).toContain('answered 500');
    expect(text).not.toContain(MARK);
  });

  test('a partner service error answer that is not its JSON message is not echoed', async () => {
    answers['/v1/policies/pol_2/evaluate'] = () => new Response(`${MARK} stack trace and config`, { status: 503 });
    const res = await call({ provider: 'openai', api_key: 'sk-x', custom_host: 'http://llm.rebind.test:8080/v1', input_guardrails: [{ 'policy.check': { policyId: 'pol_2', baseURL: 'https://policy.rebind.test' } }] });
    const text = await res.text();
    expect(text).toContain('answered 503');
    expect(text).not.toContain(MARK);
  });

  test('a token endpoint error reaches the client as an OAuth code and a short description only', async () => {
    answers['/token-fails'] = () => Response.json({ error: `<b>${MARK}</b>`, error_description: `${'x'.repeat(300)}${MARK}` }, { status: 400 });
    const res = await call(vertex('https://oauth.rebind.test/token-fails'));
    const body = (await res.json()) as { error: { message: string } };
    expect(res.status).toBe(401);
    expect(body.error.message).toContain('could not obtain an access token');
    expect(body.error.message).not.toContain(MARK);
  });
});
