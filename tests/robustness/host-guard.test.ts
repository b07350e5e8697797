// The private-address guard for custom hosts (core/pipeline/src/host-guard.ts). Nothing here sends a packet to a
// non-loopback address:
//   - unit tests inject the resolver, so no DNS query is made;
//   - the in-process tests replace globalThis.fetch by a spy that records and throws for anything but the local mock,
//     and use only IP literals and names the guard refuses without a lookup;
//   - the real-server tests use loopback custom hosts only, and the gateway's HTTP(S)_PROXY points at a local trap;
//   - the one test that lets a public address through runs in a private network namespace (`unshare -rn`, loopback
//     only) with the trap as well, so the attempt lands on the trap and nowhere else.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { HostGuard } from '@gateway/pipeline';
import { GatewayError } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { ROOT } from '../helpers/gateway-process.ts';
import { providerHeaders, startInProcessGateway } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { CHAT_BODY, expectError, type RobustGateway, startRobustGateway } from './support.ts';

async function errorOf(res: Response): Promise<{ code?: string; message?: string } | undefined> {
  return ((await res.json()) as { error?: { code?: string; message?: string } } | null)?.error;
}

/** A resolver that answers from a table and records every lookup; unknown names fail like NXDOMAIN. */
function fakeResolver(table: Record<string, string[]>) {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const found = table[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  };
  return { calls, resolve };
}

/** Judges every URL and compares all verdicts at once, so that a failure lists every wrong one. */
async function expectVerdicts(guard: HostGuard, urls: string[], expected: string): Promise<void> {
  const got: Record<string, string> = {};
  for (const url of urls) got[url] = await verdict(guard, url);
  expect(got).toEqual(Object.fromEntries(urls.map((url) => [url, expected])));
}

async function verdict(guard: HostGuard, url: string): Promise<string> {
  try {
    await guard.check(url);
    return 'allowed';
  } catch (error) {
    if (!(error instanceof GatewayError)) return `threw ${String(error)}`;
    return `${error.status} ${error.code}`;
  }
}

const DNS = {
  'internal.corp.example': ['10.1.2.3'],
  'metadata-alias.example': ['169.254.169.254'],
  'mixed.example': ['93.184.216.34', '10.0.0.5'],
  'v6-ula.example': ['fd12:3456::1'],
  'v6-mapped.example': ['::ffff:192.168.0.10'],
  'loopback.example': ['127.0.0.1'],
  'public.example': ['93.184.216.34', '2606:2800:220:1::1'],
  'empty.example': [],
};

describe('HostGuard (unit, injected resolver: no DNS, no connection)', () => {
  const refusedLiterals = [
    'http://10.0.0.1/v1',
    'http://169.254.169.254/',
    'http://169.254.169.254/latest/meta-data/',
    'http://192.168.1.1',
    'http://172.16.0.1:8080/v1',
    'http://172.31.255.255/',
    'http://127.0.0.1:8080/v1',
    'http://127.1.2.3/',
    'http://0.0.0.0/',
    'http://100.64.0.1/',
    'http://[::1]',
    'http://[::1]:8080/v1',
    'http://[fd00::1]',
    'http://[fc00::1]/',
    'http://[fe80::1]/',
    'http://[fd00:ec2::254]/',
    'http://[::]/',
    'http://2130706433/', // 127.0.0.1 written as one number
    'http://0x7f.0.0.1/',
    'http://0251.0376.0251.0376/', // 169.254.169.254 in octal
    'https://10.0.0.1/v1',
  ];
  const refusedNames = ['http://metadata.google.internal', 'http://metadata.google.internal/computeMetadata/v1/', 'http://metadata/', 'http://instance-data/', 'http://localhost:8080/', 'http://foo.localhost/', 'http://anything.internal/'];

  test('refuses private, loopback, link-local and metadata literals without a lookup', async () => {
    const dns = fakeResolver(DNS);
    const guard = new HostGuard(['trusted.example'], dns.resolve);
    await expectVerdicts(guard, refusedLiterals, '400 forbidden_custom_host');
    expect(dns.calls).toEqual([]);
  });

  test('refuses metadata and localhost names without a lookup', async () => {
    const dns = fakeResolver(DNS);
    const guard = new HostGuard(['trusted.example'], dns.resolve);
    await expectVerdicts(guard, refusedNames, '400 forbidden_custom_host');
    expect(dns.calls).toEqual([]);
  });

  test('refuses names that resolve to a private address (any of them), and names that do not resolve', async () => {
    const dns = fakeResolver(DNS);
    const guard = new HostGuard(['trusted.example'], dns.resolve);
    const names = ['internal.corp.example', 'metadata-alias.example', 'mixed.example', 'v6-ula.example', 'v6-mapped.example', 'loopback.example', 'empty.example', 'nxdomain.example'];
    await expectVerdicts(guard, names.map((name) => `https://${name}/v1`), '400 forbidden_custom_host');
    expect(dns.calls.sort()).toEqual(
      ['internal.corp.example', 'metadata-alias.example', 'mixed.example', 'v6-ula.example', 'v6-mapped.example', 'loopback.example', 'empty.example', 'nxdomain.example'].sort(),
    );
  });

  test('the refusal says why: a private address, or a name that could not be resolved', async () => {
    const dns = fakeResolver(DNS);
    const guard = new HostGuard(['trusted.example'], dns.resolve);
    const message = async (url: string) => (await guard.check(url)?.then(() => '', (e: Error) => e.message)) ?? '';
    expect(await message('https://internal.corp.example/v1')).toContain('resolves to a private or metadata address');
    for (let i = 0; i < 2; i++) expect(await message('https://nxdomain.example/v1')).toContain('could not be resolved'); // cached verdict too
    expect(await message('https://empty.example/v1')).toContain('could not be resolved');
  });

  test('refuses IPv4-mapped IPv6 literals (the URL parser writes them in hex: [::ffff:7f00:1])', async () => {
    const dns = fakeResolver(DNS);
    const guard = new HostGuard(['trusted.example'], dns.resolve);
    // e.g. new URL('http://[::ffff:127.0.0.1]/').hostname === '[::ffff:7f00:1]'
    await expectVerdicts(guard, ['http://[::ffff:127.0.0.1]/', 'http://[::ffff:169.254.169.254]/', 'http://[::ffff:10.0.0.1]/v1', 'http://[::ffff:a9fe:a9fe]/', 'http://[0:0:0:0:0:ffff:c0a8:101]/'], '400 forbidden_custom_host');
  });

  test('allows a trusted host (name, IP, or host:port) without a lookup, even when it is private', async () => {
    const dns = fakeResolver(DNS);
    const guard = new HostGuard(['trusted.example', '10.9.9.9', '::1', 'internal.corp.example:8443'], dns.resolve);
    await expectVerdicts(guard, ['http://trusted.example/v1', 'https://TRUSTED.example:8443/', 'http://10.9.9.9/v1', 'http://[::1]:8080/v1', 'https://internal.corp.example:8443/v1'], 'allowed');
    expect(dns.calls).toEqual([]);
    // trust is per host: the same private name on another port is checked, and refused
    expect(await verdict(guard, 'https://internal.corp.example:9999/v1')).toBe('400 forbidden_custom_host');
  });

  test('[::1] is refused when not trusted, allowed when trusted', async () => {
    const dns = fakeResolver(DNS);
    expect(await verdict(new HostGuard(['localhost', '127.0.0.1'], dns.resolve), 'http://[::1]:8080/v1')).toBe('400 forbidden_custom_host');
    expect(await verdict(new HostGuard(['::1'], dns.resolve), 'http://[::1]:8080/v1')).toBe('allowed');
  });

  test('allows public addresses and names that resolve only to public addresses', async () => {
    const dns = fakeResolver(DNS);
    const guard = new HostGuard([], dns.resolve);
    await expectVerdicts(guard, ['http://93.184.216.34/v1', 'https://8.8.8.8/', 'http://[2606:2800:220:1::1]/v1', 'https://public.example/v1', 'http://172.32.0.1/', 'http://100.128.0.1/'], 'allowed');
    expect(dns.calls).toEqual(['public.example']);
  });

  test('URLs that are not http(s) are refused as invalid requests', async () => {
    const guard = new HostGuard([], fakeResolver(DNS).resolve);
    await expectVerdicts(guard, ['ftp://93.184.216.34/', 'file:///etc/passwd', 'not a url', '', 'gopher://10.0.0.1/'], '400 invalid_request');
  });

  test('verdicts are cached: a refused name is not looked up again within the TTL', async () => {
    const dns = fakeResolver(DNS);
    const guard = new HostGuard([], dns.resolve);
    for (let i = 0; i < 5; i++) expect(await verdict(guard, 'https://internal.corp.example/v1')).toBe('400 forbidden_custom_host');
    expect(dns.calls).toEqual(['internal.corp.example']);
  });
});

describe('through the pipeline (in-process, fetch spy): a refused host is never fetched', () => {
  let gateway: Gateway;
  let mock: OpenAIMock;
  const realFetch = globalThis.fetch;
  const spied: string[] = [];

  beforeAll(async () => {
    mock = await startOpenAIMock({ apiKey: null, strictParams: false });
    const mockOrigin = new URL(mock.url).origin;
    const spy = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (url.startsWith(`${mockOrigin}/`)) return realFetch(input, init);
      spied.push(url);
      throw new TypeError(`fetch to ${url} blocked by the test spy`);
    }) as typeof fetch;
    globalThis.fetch = Object.assign(spy, { preconnect: realFetch.preconnect });
    // Trust nothing but the mock's own address, so that 127.0.0.1 on other ports, [::1] and localhost are refused.
    gateway = await startInProcessGateway({ TRUSTED_CUSTOM_HOSTS: `127.0.0.1:${mock.port}` });
  });
  afterAll(async () => {
    globalThis.fetch = realFetch;
    await gateway?.close();
    await mock?.stop();
  });

  const call = (customHost: string, extra: Record<string, string> = {}) =>
    gateway.handle(
      new Request('http://gateway.test/v1/chat/completions', { method: 'POST', headers: providerHeaders(customHost, extra), body: JSON.stringify(CHAT_BODY) }),
    );

  test('control: the spy sits in the provider call path (the trusted mock is reached through it)', async () => {
    const before = mock.requests.length;
    const res = await call(mock.url);
    expect(res.status).toBe(200);
    expect(mock.requests.length).toBe(before + 1);
    const pub = await call('http://93.184.216.34/v1'); // allowed by the guard: reaches the spy, which throws
    expect(pub.status).toBe(502);
    await pub.arrayBuffer();
    expect(spied).toEqual(['http://93.184.216.34/v1/chat/completions']);
    spied.length = 0;
  });

  const forbidden = [
    'http://10.0.0.1/v1',
    'http://169.254.169.254/',
    'http://192.168.1.1',
    'http://[::1]',
    'http://[fd00::1]',
    'http://metadata.google.internal',
    `http://127.0.0.1:${1}/v1`,
    'http://localhost/v1',
    'http://[::ffff:169.254.169.254]/',
  ];

  test('x-gateway-custom-host: 400 forbidden_custom_host, nothing fetched', async () => {
    spied.length = 0;
    const got: Record<string, string> = {};
    for (const host of forbidden) {
      const res = await call(host);
      got[host] = `${res.status} ${(await errorOf(res))?.code}`;
    }
    expect(got).toEqual(Object.fromEntries(forbidden.map((h) => [h, '400 forbidden_custom_host'])));
    expect(spied).toEqual([]);
  });

  test('config custom_host, at the root and in every target of a fallback: refused, nothing fetched', async () => {
    spied.length = 0;
    const leaf = (h: string) => ({ provider: 'openai', api_key: 'sk-x', custom_host: h });
    const got: Record<string, string> = {};
    for (const host of forbidden) {
      const res = await call(mock.url, { 'x-gateway-config': JSON.stringify(leaf(host)) });
      got[host] = `${res.status} ${(await errorOf(res))?.code}`;
    }
    expect(got).toEqual(Object.fromEntries(forbidden.map((h) => [h, '400 forbidden_custom_host'])));
    const config = { strategy: { mode: 'fallback' }, targets: forbidden.slice(0, 6).map(leaf) };
    const res = await call(mock.url, { 'x-gateway-config': JSON.stringify(config) });
    expect(res.status).toBe(400);
    expect((await errorOf(res))?.code).toBe('forbidden_custom_host');
    // inherited from the parent node
    const inherited = { custom_host: 'http://169.254.169.254/', strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: 'k' }] };
    const res2 = await call(mock.url, { 'x-gateway-config': JSON.stringify(inherited) });
    expect(res2.status).toBe(400);
    expect((await errorOf(res2))?.code).toBe('forbidden_custom_host');
    expect(spied).toEqual([]);
  });

  test('a fallback from a refused host to the trusted mock answers from the mock', async () => {
    spied.length = 0;
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: 'k', custom_host: 'http://169.254.169.254/' },
        { provider: 'openai', api_key: 'k', custom_host: mock.url },
      ],
    };
    const res = await call(mock.url, { 'x-gateway-config': JSON.stringify(config) });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    await res.arrayBuffer();
    expect(spied).toEqual([]);
  });
});

describe('real server with TRUSTED_CUSTOM_HOSTS excluding 127.0.0.1', () => {
  let gw: RobustGateway;
  let mock: OpenAIMock;

  beforeAll(async () => {
    mock = await startOpenAIMock({ apiKey: null, strictParams: false });
    gw = await startRobustGateway({ TRUSTED_CUSTOM_HOSTS: 'trusted.invalid' });
  }, 30_000); // a hang guard: a gateway process can take over bun's 5 s default to start on a loaded CI machine
  afterAll(async () => {
    await gw?.stop();
    await mock?.stop();
  });

  const call = (customHost: string) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': gw.adminKey,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': customHost,
        authorization: 'Bearer sk-host-guard',
      },
      body: JSON.stringify(CHAT_BODY),
    });

  test('http://127.0.0.1:<mock port>/v1 → 400 forbidden_custom_host, the mock records no request', async () => {
    const err = await expectError(await call(`http://127.0.0.1:${mock.port}/v1`), 400, 'forbidden_custom_host');
    expect(err.error.param).toBe('custom_host');
    expect(mock.requests).toHaveLength(0);
  });

  test('localhost and [::1] spellings of the mock are refused too', async () => {
    for (const host of [`http://localhost:${mock.port}/v1`, `http://[::1]:${mock.port}/v1`, `http://2130706433:${mock.port}/v1`, `http://127.0.0.1.:${mock.port}/v1`]) {
      const res = await call(host);
      const code = (await errorOf(res))?.code;
      expect({ host, status: res.status, code }).toEqual({ host, status: 400, code: 'forbidden_custom_host' });
    }
    expect(mock.requests).toHaveLength(0);
  });

  test('the IPv4-mapped IPv6 spelling http://[::ffff:127.0.0.1]:<mock port> is refused, the mock records no request', async () => {
    const res = await call(`http://[::ffff:127.0.0.1]:${mock.port}/v1`);
    const text = await res.text();
    expect({ status: res.status, body: text.slice(0, 200), mockRequests: mock.requests.length }).toMatchObject({ status: 400, mockRequests: 0 });
    expect(JSON.parse(text).error.code).toBe('forbidden_custom_host');
  });

  test('nothing tried to leave the machine', () => {
    expect(gw.trap.seen).toEqual([]);
  });
});

const unshareWorks = Bun.spawnSync(['unshare', '-rn', '--', 'true']).exitCode === 0;

describe('end to end in a private network namespace (unshare -rn, loopback only)', () => {
  test.skipIf(!unshareWorks)('a public literal is allowed (it reaches the local proxy trap, not the network); private ones are refused before any connection', async () => {
    const proc = Bun.spawn(['unshare', '-rn', '--', 'bash', '-c', 'ip link set lo up && exec "$@"', 'x', process.execPath, 'tests/robustness/netns-host-guard.ts'], {
      cwd: ROOT,
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const timer = setTimeout(() => proc.kill('SIGKILL'), 40_000);
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    clearTimeout(timer);
    const line = out.split('\n').find((l) => l.startsWith('RESULT '));
    if (!line) throw new Error(`no result from the namespace run (exit ${code}):\n${out}\n${err}`);
    const result = JSON.parse(line.slice(7)) as { statuses: Record<string, [number, string | null]>; trapSeen: string[]; mockRequests: number };
    expect(result.statuses['http://93.184.216.34/v1']?.[1]).not.toBe('forbidden_custom_host');
    expect(result.trapSeen).toEqual(['POST http://93.184.216.34/v1/chat/completions']);
    for (const host of ['http://10.0.0.1/v1', 'http://169.254.169.254/', 'http://192.168.1.1', 'http://[fd00::1]', 'http://metadata.google.internal']) {
      expect({ host, result: result.statuses[host] }).toEqual({ host, result: [400, 'forbidden_custom_host'] });
    }
    expect(result.mockRequests).toBe(0);
  }, 60_000);
});
