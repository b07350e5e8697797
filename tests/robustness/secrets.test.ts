// Secrets never leave through the gateway's output or its error bodies: the provider key (Authorization), the
// gateway key (x-gateway-api-key, right or wrong), and a config's api_key, whatever goes wrong (invalid config,
// unreachable provider, timeout, provider error, refused host). The server runs with LOG_LEVEL=debug.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { CHAT_BODY, freePort, isErrorShape, type RobustGateway, startRobustGateway } from './support.ts';

const tag = () => crypto.randomUUID().replaceAll('-', '').slice(0, 20);
// Identifier characters only, so that the same values also work unquoted in a malformed JSON config.
const PROVIDER_KEY = `sk_prov_SECRET_${tag()}`;
const CONFIG_KEY = `sk_cfg_SECRET_${tag()}`;
const GATEWAY_KEY = `gw_admin_SECRET_${tag()}`;
const WRONG_GATEWAY_KEY = `gw_wrong_SECRET_${tag()}`;
const SECRETS = { PROVIDER_KEY, CONFIG_KEY, GATEWAY_KEY, WRONG_GATEWAY_KEY };

/** The values themselves and their random tails (a leak of a distinctive part is still a leak). */
function leaks(text: string): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(SECRETS)) {
    const tail = value.slice(-20);
    if (text.includes(value)) found.push(`${name} (whole)`);
    else if (text.includes(tail)) found.push(`${name} (its random part)`);
  }
  return found;
}

let mock: OpenAIMock;
let gw: RobustGateway;
let deadHost: string;
const bodies: { what: string; status: number; text: string }[] = [];

beforeAll(async () => {
  mock = await startOpenAIMock({ apiKey: null, strictParams: false });
  deadHost = `http://127.0.0.1:${freePort()}/v1`; // nothing listens there: connection refused
  gw = await startRobustGateway({ LOG_LEVEL: 'debug', GATEWAY_ADMIN_API_KEY: GATEWAY_KEY });
});
afterAll(async () => {
  await gw?.stop();
  await mock?.stop();
});

async function call(what: string, opts: { headers?: Record<string, string>; body?: string; path?: string; gatewayKey?: string | null } = {}) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': mock.url,
    authorization: `Bearer ${PROVIDER_KEY}`,
    ...opts.headers,
  };
  if (opts.gatewayKey !== null) headers['x-gateway-api-key'] = opts.gatewayKey ?? GATEWAY_KEY;
  const res = await fetch(gw.url + (opts.path ?? '/v1/chat/completions'), { method: 'POST', headers, body: opts.body ?? JSON.stringify(CHAT_BODY) });
  const text = await res.text();
  bodies.push({ what, status: res.status, text });
  return { status: res.status, text, headers: res.headers };
}

const leaf = (extra: Record<string, unknown> = {}) => ({ provider: 'openai', api_key: CONFIG_KEY, custom_host: mock.url, ...extra });

describe('secrets in error bodies', () => {
  test('successful calls (header key, config key, stream) work: the keys really reach the provider', async () => {
    expect((await call('ok: Authorization')).status).toBe(200);
    expect((await call('ok: config api_key', { headers: { 'x-gateway-config': JSON.stringify(leaf()) } })).status).toBe(200);
    const stream = await call('ok: stream', { body: JSON.stringify({ ...CHAT_BODY, stream: true }) });
    expect(stream.status).toBe(200);
    const auths = mock.requests.map((r) => r.headers.authorization);
    expect(auths).toContain(`Bearer ${PROVIDER_KEY}`);
    expect(auths).toContain(`Bearer ${CONFIG_KEY}`);
  });

  test('wrong and missing gateway keys → 401 without the key in the body', async () => {
    for (const key of [WRONG_GATEWAY_KEY, `${GATEWAY_KEY}x`, `x${GATEWAY_KEY}`, GATEWAY_KEY.slice(0, -1)]) {
      const res = await call(`401: ${key.slice(0, 12)}…`, { gatewayKey: key });
      expect(res.status).toBe(401);
      expect(leaks(res.text)).toEqual([]);
    }
    expect((await call('401: missing', { gatewayKey: null })).status).toBe(401);
  });

  test('invalid configs that contain an api_key → 400 invalid_config without the key', async () => {
    // Only the secret fields carry the key here: a key pasted into a non-secret field (provider id, target name)
    // may legitimately be echoed in the violation that names that field.
    const configs: [string, string][] = [
      ['many violations', JSON.stringify(leaf({ retry: { attempts: -1 }, weight: 'x', bogus: true }))],
      ['api_key of the wrong type elsewhere', JSON.stringify({ ...leaf(), targets: [{ api_key: 5 }] })],
      ['the key under a misspelt property', JSON.stringify({ provider: 'openai', custom_host: mock.url, apikey: CONFIG_KEY })],
      ['the key under a camel-case property', JSON.stringify({ provider: 'openai', custom_host: mock.url, apiKey: CONFIG_KEY })],
      ['api_key of the wrong shape', JSON.stringify({ provider: 'openai', custom_host: mock.url, api_key: [CONFIG_KEY] })],
      ['the key in a target with violations', JSON.stringify({ strategy: { mode: 'fallback' }, targets: [leaf({ weight: -1 }), { api_key: CONFIG_KEY }] })],
      ['the key in svc credentials', JSON.stringify({ provider: 'openai', svcA_access_key_id: 1, svcA_secret_access_key: CONFIG_KEY })],
      ['the key in an Authorization field', JSON.stringify({ provider: 'openai', Authorization: `Bearer ${CONFIG_KEY}`, retry: { attempts: 'x' } })],
      ['truncated JSON', JSON.stringify(leaf()).slice(0, -2)],
      ['trailing comma', `${JSON.stringify(leaf()).slice(0, -1)},}`],
      ['unquoted key (a templating mistake)', `{"provider":"openai","custom_host":"${mock.url}","api_key": ${CONFIG_KEY}}`],
      ['unquoted key, first property', `{"api_key": ${CONFIG_KEY}, "provider":"openai"}`],
      ['bad escape in the key', `{"provider":"openai","api_key":"${CONFIG_KEY}\\q"}`],
      ['control character in the key', `{"provider":"openai","api_key":"${CONFIG_KEY}\\u0000\t"}`],
    ];
    const found: Record<string, string> = {};
    for (const [what, config] of configs) {
      const res = await call(`invalid config: ${what}`, { headers: { 'x-gateway-config': config } });
      const l = leaks(res.text);
      found[what] = `${res.status}${l.length ? ` LEAKS ${l.join(', ')}: ${res.text.slice(0, 160)}` : ''}`;
    }
    expect(found).toEqual(Object.fromEntries(configs.map(([what]) => [what, '400'])));
  });

  test('unreachable provider (connection refused) → 502 without any key, via header and via config', async () => {
    const a = await call('502: header key', { headers: { 'x-gateway-custom-host': deadHost } });
    const b = await call('502: config key', { headers: { 'x-gateway-config': JSON.stringify(leaf({ custom_host: deadHost })) } });
    const c = await call('502: fallback of two dead targets', {
      headers: { 'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [leaf({ custom_host: deadHost }), leaf({ custom_host: `${deadHost}/x` })] }) },
    });
    const d = await call('502: retries', { headers: { 'x-gateway-config': JSON.stringify(leaf({ custom_host: deadHost, retry: { attempts: 1 } })) } });
    for (const r of [a, b, c, d]) {
      expect(r.status).toBe(502);
      expect(isErrorShape(JSON.parse(r.text))).toBe(true);
      expect(leaks(r.text)).toEqual([]);
    }
  });

  test('timeouts, provider errors, refused hosts, bad bodies → no key in the body', async () => {
    mock.setBehavior((req) => (req.headers['x-test-case'] === 'slow' ? { kind: 'default', delayMs: 2_000 } : undefined));
    const cases = [
      await call('408', { headers: { 'x-gateway-config': JSON.stringify(leaf({ request_timeout: 50, forward_headers: ['x-test-case'] })), 'x-test-case': 'slow' } }),
      await call('408 header', { headers: { 'x-gateway-request-timeout': '50', 'x-gateway-forward-headers': 'x-test-case', 'x-test-case': 'slow' } }),
      await call('forbidden host', { headers: { 'x-gateway-custom-host': 'http://10.0.0.1/v1' } }),
      await call('forbidden host in config', { headers: { 'x-gateway-config': JSON.stringify(leaf({ custom_host: 'http://10.0.0.1/v1' })) } }),
      await call('bad body', { body: '{bad' }),
      await call('unknown provider', { headers: { 'x-gateway-provider': 'nope' } }),
      await call('bad metadata', { headers: { 'x-gateway-metadata': `{"k": ${CONFIG_KEY}}` } }),
    ];
    mock.setBehavior(null);
    mock.enqueue({ kind: 'error', status: 500, message: 'upstream exploded' }, { kind: 'error', status: 429 }, { kind: 'reset' });
    cases.push(await call('provider 500'), await call('provider 429'), await call('provider reset'));
    mock.enqueue({ kind: 'stream', frames: [{ data: { id: 'x', object: 'chat.completion.chunk', choices: [] } }], end: 'cut' });
    cases.push(await call('stream cut', { body: JSON.stringify({ ...CHAT_BODY, stream: true }) }));
    for (const r of cases) {
      expect(r.status === 200 || r.status >= 400).toBe(true);
      expect(leaks(r.text)).toEqual([]);
    }
    expect(cases[0]?.status).toBe(408);
    expect(cases[2]?.status).toBe(400);
  });
});

describe('secrets in the server output (LOG_LEVEL=debug)', () => {
  test('no error body seen in this file carries a key', () => {
    const leaking = bodies.filter((b) => leaks(b.text).length).map((b) => `${b.what} → ${b.status}: ${leaks(b.text).join(', ')}`);
    expect(leaking).toEqual([]);
    expect(bodies.length).toBeGreaterThan(30);
  });

  test('the process output never contains a key', async () => {
    await Bun.sleep(300); // let the request log and any late lines flush
    const output = gw.output();
    expect(output.length).toBeGreaterThan(0);
    const lines = output.split('\n').filter((line) => leaks(line).length);
    expect(lines.map((line) => `${leaks(line).join(', ')}: ${line.slice(0, 300)}`)).toEqual([]);
    expect(gw.trap.seen).toEqual([]);
  });
});
