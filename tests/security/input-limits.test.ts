// Limits on every input, /metrics behind a token, the bootstrap key's length and log redaction at any depth (issue
// #13, items 5 and 6; docs/security.md "Limits on input, metrics and logs"). Each test is the attack: someone who may
// send any body to an administration route (or, without any key, to the invitation's accept route), write any
// config, scrape /metrics, or get a secret into a log line, and the assertion that the gateway holds, calls or shows
// no more than the documented limit. The real gateway in process on SQLite (what is refused is refused before
// anything is stored, so the dialect does not matter), a local provider that counts its calls.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Writable } from 'node:stream';
import { route } from '@gateway/pipeline';
import { type AttemptRecord, type AttemptResult, type AttemptStage, type GatewayConfig, type GatewayRequest, type ProviderAdapter, ROUTING_LIMITS } from '@gateway/sdk';
import { createGateway, createLogger, type Gateway } from '@gateway/server';
import { fallback } from '../../plugins/strategies/src/index.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';

type ErrorBody = { error: { message: string; type: string; code: string | null; param: string | null } };

const MiB = 1024 * 1024;
const json = { 'content-type': 'application/json' };
const admin = { ...json, 'x-gateway-api-key': TEST_ADMIN_KEY };

/** A provider on loopback that counts its calls and answers with `status`. */
function countingProvider(status = 200) {
  let calls = 0;
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch() {
      calls++;
      return status === 200
        ? Response.json({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] })
        : Response.json({ error: { message: 'down', type: 'server_error', code: null } }, { status });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/v1`, calls: () => calls, stop: () => server.stop(true) };
}

/**
 * A chunked body (no content-length): `head`, then spaces (valid JSON whitespace) in 64 KiB chunks up to `total`
 * bytes, produced only as the server pulls them; `pulled()` says how many bytes it took.
 */
function chunkedJson(head: string, total: number) {
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  let pulled = 0;
  let sentHead = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (!sentHead) {
        sentHead = true;
        const bytes = new TextEncoder().encode(head);
        pulled += bytes.byteLength;
        controller.enqueue(bytes);
        return;
      }
      if (pulled >= total) return controller.close();
      pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { stream, pulled: () => pulled };
}

async function expectErrorShape(res: Response, status: number, code: string): Promise<ErrorBody> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as ErrorBody;
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error.code).toBe(code);
  return body;
}

describe('administration bodies are capped', () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startInProcessGateway();
  });
  afterAll(() => gw?.close());

  const call = (method: string, path: string, init: RequestInit = {}) =>
    gw.handle(new Request(`http://gateway/v1${path}`, { method, ...init }));
  const configCount = async () => ((await (await call('GET', '/configs', { headers: admin })).json()) as { total: number }).total;

  test('a workspace manager saves a config padded past the admin limit (declared length): 413, nothing stored', async () => {
    const before = await configCount();
    // A valid body: the config, then 2 MiB of JSON whitespace. Read whole, it would be parsed and stored.
    const body = `{"name":"Padded","slug":"padded-declared","config":{"provider":"openai","api_key":"sk-x"}}${' '.repeat(2 * MiB)}`;
    const res = await call('POST', '/configs', { headers: admin, body });
    const refused = await expectErrorShape(res, 413, 'payload_too_large');
    expect(refused.error.message).toContain(String(1 * MiB));
    expect(await configCount()).toBe(before);
  });

  test('the same body chunked (no content-length): refused once the counted bytes pass the limit, not read whole', async () => {
    const before = await configCount();
    const body = chunkedJson('{"name":"Chunked","slug":"padded-chunked","config":{"provider":"openai","api_key":"sk-x"}}', 48 * MiB);
    const res = await call('POST', '/configs', { headers: admin, body: body.stream, duplex: 'half' } as RequestInit);
    await expectErrorShape(res, 413, 'payload_too_large');
    // The gateway stopped pulling right after the limit: 48 MiB were on offer.
    expect(body.pulled()).toBeLessThan(2 * MiB);
    expect(await configCount()).toBe(before);
  });

  test('without any key, the invitation accept route takes an endless chunked body: 413 before it is held, the invite stays pending', async () => {
    const invite = (await (
      await call('POST', '/users/invites', { headers: admin, body: JSON.stringify({ email: `pad-${crypto.randomUUID()}@example.com`, role: 'member' }) })
    ).json()) as { id: string; token: string };
    expect(invite.token).toBeString();
    const body = chunkedJson(JSON.stringify({ token: invite.token, name: 'Padded' }), 64 * MiB);
    const res = await call('POST', '/users/invites/accept', { headers: json, body: body.stream, duplex: 'half' } as RequestInit);
    await expectErrorShape(res, 413, 'payload_too_large');
    expect(body.pulled()).toBeLessThan(2 * MiB);
    const after = (await (await call('GET', `/users/invites/${invite.id}`, { headers: admin })).json()) as { status: string };
    expect(after.status).toBe('pending');
  });

  test('a declared length past the limit on the accept route is refused before a byte is read', async () => {
    const body = chunkedJson('{"token":"inv-x"}', 64 * MiB);
    const res = await call('POST', '/users/invites/accept', {
      headers: { ...json, 'content-length': String(64 * MiB) },
      body: body.stream,
      duplex: 'half',
    } as RequestInit);
    await expectErrorShape(res, 413, 'payload_too_large');
    expect(body.pulled()).toBeLessThan(2 * MiB);
  });
});

test('ADMIN_MAX_BODY_BYTES cannot lift the admin limit above MAX_REQUEST_BODY_BYTES', async () => {
  const gw = await startInProcessGateway({ MAX_REQUEST_BODY_BYTES: '4096', ADMIN_MAX_BODY_BYTES: String(64 * MiB) });
  try {
    const body = `{"name":"Big","slug":"big-one","config":{"provider":"openai","api_key":"sk-x"}}${' '.repeat(8192)}`;
    const res = await gw.handle(new Request('http://gateway/v1/configs', { method: 'POST', headers: admin, body }));
    const refused = await expectErrorShape(res, 413, 'payload_too_large');
    expect(refused.error.message).toContain('4096');
  } finally {
    await gw.close();
  }
});

describe('a config cannot make one request call providers without bound', () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startInProcessGateway();
  });
  afterAll(() => gw?.close());

  async function send(config: unknown): Promise<Response> {
    return gw.handle(
      new Request('http://gateway/v1/chat/completions', {
        method: 'POST',
        headers: { ...admin, 'x-gateway-config': JSON.stringify(config) },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      }),
    );
  }
  const leaf = (url: string, extra: Record<string, unknown> = {}) => ({ provider: 'openai', api_key: 'sk-x', custom_host: url, ...extra });

  test('retry.attempts of 1000: invalid_config naming the maximum, the provider never called', async () => {
    const p = countingProvider();
    try {
      const res = await send(leaf(p.url, { retry: { attempts: 1000 } }));
      const body = await expectErrorShape(res, 400, 'invalid_config');
      expect(body.error.message).toContain(`retry.attempts: must be <= ${ROUTING_LIMITS.maxRetryAttempts}`);
      expect(p.calls()).toBe(0);
    } finally {
      p.stop();
    }
  });

  test('retrying on 200 (a paid answer asked for again and again) or on 3xx is refused', async () => {
    const p = countingProvider(200);
    try {
      const res = await send(leaf(p.url, { retry: { attempts: 2, on_status_codes: [200, 302, 500] } }));
      const body = await expectErrorShape(res, 400, 'invalid_config');
      expect(body.error.message).toContain('retry.on_status_codes[0]: must be >= 400');
      expect(body.error.message).toContain('retry.on_status_codes[1]: must be >= 400');
      expect(p.calls()).toBe(0);
      const fallbackOn200 = await send({ strategy: { mode: 'fallback', on_status_codes: [200] }, targets: [leaf(p.url), leaf(p.url)] });
      expect((await expectErrorShape(fallbackOn200, 400, 'invalid_config')).error.message).toContain('strategy.on_status_codes[0]: must be >= 400');
      expect(p.calls()).toBe(0);
    } finally {
      p.stop();
    }
  });

  test('a fallback over 26 failing targets, each retried once (52 calls), is refused before any call', async () => {
    const p = countingProvider(500);
    try {
      const config = { strategy: { mode: 'fallback' }, retry: { attempts: 1 }, targets: Array.from({ length: 26 }, () => leaf(p.url)) };
      const body = await expectErrorShape(await send(config), 400, 'invalid_config');
      expect(body.error.message).toContain(`config: one request could call providers 52 times (retries and fallbacks included); at most ${ROUTING_LIMITS.maxAttemptsPerRequest}`);
      expect(p.calls()).toBe(0);
    } finally {
      p.stop();
    }
  });

  test('too many targets on one level, or in all through nesting (10 × 10 × 10 load-balanced leaves)', async () => {
    const p = countingProvider();
    try {
      const wide = { strategy: { mode: 'loadbalance' }, targets: Array.from({ length: ROUTING_LIMITS.maxTargetsPerLevel + 1 }, () => leaf(p.url)) };
      expect((await expectErrorShape(await send(wide), 400, 'invalid_config')).error.message).toContain(
        `targets: at most ${ROUTING_LIMITS.maxTargetsPerLevel} targets (${ROUTING_LIMITS.maxTargetsPerLevel + 1} given)`,
      );
      const level = (depth: number): unknown =>
        depth === 0 ? leaf(p.url) : { strategy: { mode: 'loadbalance' }, targets: Array.from({ length: 10 }, () => level(depth - 1)) };
      expect((await expectErrorShape(await send(level(3)), 400, 'invalid_config')).error.message).toContain(
        `targets: at most ${ROUTING_LIMITS.maxTargets} targets in all, nesting included (1110 given)`,
      );
      expect(p.calls()).toBe(0);
      // Within the limits a config still works.
      expect((await send({ strategy: { mode: 'fallback' }, retry: { attempts: 1 }, targets: [leaf(p.url), leaf(p.url)] })).status).toBe(200);
    } finally {
      p.stop();
    }
  });
});

describe('the engine stops at the attempt budget for a config that was never validated (saved before the limits)', () => {
  const provider = { id: 'counted', baseUrl: () => 'http://127.0.0.1:9/never', endpoints: {} } as unknown as ProviderAdapter;
  /** Every attempt fails with 500 at once (asking for no pause), so only the limits end the request. */
  function failingAttempts() {
    let attempts = 0;
    const stage: AttemptStage = {
      name: 'always-500',
      phase: 'attempt',
      rule: 'sequential',
      async run(): Promise<AttemptResult> {
        attempts++;
        return { response: new Response('{}', { status: 500 }), status: 500, providerId: 'counted', retryAfterMs: 0, settled: Promise.resolve({ body: undefined }) };
      },
    };
    return { stage, attempts: () => attempts };
  }
  async function run(config: GatewayConfig, stage: AttemptStage) {
    const req = { signal: new AbortController().signal, body: undefined, locals: {}, headers: new Headers() } as unknown as GatewayRequest;
    const log: AttemptRecord[] = [];
    const deps = {
      strategies: new Map([['fallback', fallback]]),
      attemptStages: [stage],
      call: {} as never,
      resolveProvider: (target: GatewayConfig) => ({ provider, target }),
    };
    const result = await route(req, Object.freeze(config), 'config', deps, log);
    return { result, log };
  }

  test('a fallback over 80 failing targets makes at most the budget of calls', async () => {
    const f = failingAttempts();
    const targets = Array.from({ length: 80 }, () => ({ provider: 'counted', api_key: 'x' }));
    const { result, log } = await run({ strategy: { mode: 'fallback' }, targets }, f.stage);
    expect(f.attempts()).toBe(ROUTING_LIMITS.maxAttemptsPerRequest);
    expect(log).toHaveLength(ROUTING_LIMITS.maxAttemptsPerRequest);
    expect(result.status).toBe(500);
  });

  test('retry.attempts of 1000 on one target is cut to the documented maximum', async () => {
    const f = failingAttempts();
    await run({ provider: 'counted', api_key: 'x', retry: { attempts: 1000, use_retry_after_headers: true } }, f.stage);
    expect(f.attempts()).toBe(1 + ROUTING_LIMITS.maxRetryAttempts);
  });
});

describe('/metrics', () => {
  test('with METRICS_TOKEN set, a scraper without the token (or with a wrong one) gets 401; with it, the metrics', async () => {
    const token = `metrics-${crypto.randomUUID()}`;
    const gw = await startInProcessGateway({ METRICS_TOKEN: token });
    try {
      const scrape = (headers: Record<string, string> = {}) => gw.handle(new Request('http://gateway/metrics', { headers }));
      await expectErrorShape(await scrape(), 401, 'unauthorized');
      await expectErrorShape(await scrape({ authorization: `Bearer ${token}x` }), 401, 'unauthorized');
      await expectErrorShape(await scrape({ authorization: token }), 401, 'unauthorized');
      // The gateway's own key is no metrics token.
      await expectErrorShape(await scrape({ authorization: `Bearer ${TEST_ADMIN_KEY}`, 'x-gateway-api-key': TEST_ADMIN_KEY }), 401, 'unauthorized');
      const ok = await scrape({ authorization: `Bearer ${token}` });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('gateway_uptime_seconds');
    } finally {
      await gw.close();
    }
  });

  test('without METRICS_TOKEN it stays open (local use)', async () => {
    const gw = await startInProcessGateway();
    try {
      expect((await gw.handle(new Request('http://gateway/metrics'))).status).toBe(200);
    } finally {
      await gw.close();
    }
  });
});

describe('the bootstrap admin key has a minimum length', () => {
  test('a guessable GATEWAY_ADMIN_API_KEY refuses to start, naming the variable and the minimum', async () => {
    const start = createGateway({ env: { DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', GATEWAY_ADMIN_API_KEY: 'admin123' } });
    expect(start).rejects.toThrow(/GATEWAY_ADMIN_API_KEY is 8 characters long; it must have at least 32/);
    await start.catch(() => {});
  });
});

describe('log redaction at any depth', () => {
  function capture() {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    return { logger: createLogger('debug', destination), lines };
  }

  test('secrets nested 5 levels deep in objects and arrays, in errors and in child bindings never reach the log', async () => {
    const { logger, lines } = capture();
    const secrets = {
      authorization: 'Bearer sk-SECRET-auth',
      'x-gateway-api-key': 'gw-SECRET-key',
      password: 'SECRET-password',
      svcB_entra_client_secret: 'SECRET-entra',
      svcA_session_token: 'SECRET-session',
      access_token: 'SECRET-access-token',
    };
    logger.info({ a: { b: [{ c: { d: { ...secrets, max_tokens: 5, apiKeyId: 'key-id-shown' } } }] } }, 'deep');
    logger.warn({ level1: [[[[{ api_key: 'sk-SECRET-array', client_secret: 'SECRET-client' }]]]] }, 'arrays');
    const err = Object.assign(new Error('upstream failed'), { request: { headers: { Authorization: 'Bearer sk-SECRET-in-error' } } });
    logger.error({ err, context: { nested: { deeper: { error: err } } } }, 'failed');
    const child = logger.child({ plugin: 'x', options: { inner: { token: 'SECRET-binding' } } });
    child.info('child');
    child.child({ call: { upstream: { headers: [{ cookie: 'SECRET-cookie' }] } } }).debug('grandchild');
    await Bun.sleep(10);
    const out = lines.join('');
    expect(lines.length).toBe(5);
    expect(out).not.toContain('SECRET');
    expect(out).toContain('[redacted]');
    // What is not a secret stays readable.
    expect(out).toContain('"max_tokens":5');
    expect(out).toContain('key-id-shown');
    expect(out).toContain('upstream failed');
    const deep = JSON.parse(lines[0] as string) as { a: { b: { c: { d: Record<string, unknown> } }[] } };
    expect(deep.a.b[0]?.c.d).toMatchObject({ authorization: '[redacted]', 'x-gateway-api-key': '[redacted]', password: '[redacted]' });
  });
});
