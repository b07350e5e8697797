// The compose topology without Docker (docker/compose.yaml): three gateway processes with the compose file's gateway
// environment, sharing a MariaDB database and a Redis, traces to a local OTLP receiver. A key revoked, a saved config
// changed, a circuit opened, a cache entry written and a rate limit reached through one process are seen by the
// others within the time docs/operations.md documents (1 s; polled here with a 5 s hang guard for loaded CI
// machines). Then a rolling restart of the three under a steady stream of calls, sent as the compose load balancer
// does (a refused connection is tried on the next process): no call fails and every call has its request-log row.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createE2EDatabase, type E2EDatabase, freePort } from '../helpers/e2e-database.ts';
import { type GatewayProcess, ROOT, startGatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { type OwnRedis, startOwnRedis } from '../resilience/redis-support.ts';
import { type OtlpReceiver, startOtlpReceiver } from '../observability/otlp-receiver.ts';

const ADMIN_KEY = `gw-cluster-${crypto.randomUUID()}`;
/** docs/operations.md: what one process changes is seen by the others within 1 s; 5× that for a loaded machine. */
const SEEN_WITHIN_MS = 5_000;

let db: E2EDatabase;
let redis: OwnRedis;
let mock: OpenAIMock;
let collector: OtlpReceiver;
const gws: GatewayProcess[] = [];
let composeEnv: Record<string, string> = {};

/** The compose file's gateway environment, its service names replaced by this machine's. */
async function gatewayEnvironment(): Promise<Record<string, string>> {
  const compose = Bun.YAML.parse(await Bun.file(`${ROOT}/docker/compose.yaml`).text()) as { services: Record<string, { environment: Record<string, string> }> };
  const env = { ...compose.services.gateway!.environment };
  expect(Object.keys(env).sort()).toEqual(
    ['CIRCUIT_BREAKER_REFRESH_MS', 'DATABASE_URL', 'GATEWAY_ADMIN_API_KEY', 'GATEWAY_DRAIN_TIMEOUT_MS', 'GATEWAY_ENCRYPTION_KEY', 'LOG_LEVEL', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_SERVICE_NAME', 'PORT', 'REDIS_URL'].sort(),
  );
  expect(env.DATABASE_URL).toContain('@mariadb:3306/');
  expect(env.REDIS_URL).toBe('redis://redis:6379');
  return {
    ...env,
    DATABASE_URL: db.url,
    REDIS_URL: redis.url,
    OTEL_EXPORTER_OTLP_ENDPOINT: env.OTEL_EXPORTER_OTLP_ENDPOINT!.replace('http://otel-collector:4318', collector.url),
    GATEWAY_ADMIN_API_KEY: ADMIN_KEY,
    GATEWAY_ENCRYPTION_KEY: 'cluster-test-encryption-key-0123456789',
    LOG_LEVEL: 'info', // the compose default; the helper waits for the 'gateway listening' line
    // A short drain: the rolling restart below has no stream that needs 25 s.
    GATEWAY_DRAIN_TIMEOUT_MS: '5000',
  };
}

async function startOne(index: number, port?: number): Promise<GatewayProcess> {
  const gw = await startGatewayProcess({ ...composeEnv, PORT: String(port ?? (await freePort())) });
  gws[index] = gw;
  return gw;
}

beforeAll(async () => {
  [db, redis, mock] = await Promise.all([createE2EDatabase('mysql'), startOwnRedis(), startOpenAIMock({ apiKey: null })]);
  collector = startOtlpReceiver();
  composeEnv = await gatewayEnvironment();
  await startOne(0); // migrates and bootstraps alone
  await Promise.all([startOne(1), startOne(2)]);
}, 120_000);

afterAll(async () => {
  await Promise.all(gws.map((g) => g?.stop()));
  collector?.stop();
  await Promise.all([mock?.stop(), redis?.close(), db?.drop()]);
}, 60_000);

async function admin<T = Record<string, unknown>>(gw: GatewayProcess, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${gw.url}/v1${path}`, {
    method,
    headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}

const leaf = (extra: Record<string, unknown> = {}) => ({ provider: 'openai', api_key: 'sk-test', custom_host: mock.url, ...extra });

async function call(gw: GatewayProcess, headers: Record<string, string>, content = 'hello', key = ADMIN_KEY) {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
  });
  const body = (await res.json()) as { model?: string; error?: { code: string } };
  return { status: res.status, body, cache: res.headers.get('x-gateway-cache-status') };
}

/** Polls `probe` until it holds (the value seen), or the hang guard passes (the last value, for the assertion). */
async function seen<T>(probe: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + SEEN_WITHIN_MS;
  let v = await probe();
  while (!ok(v) && Date.now() < deadline) {
    await Bun.sleep(25);
    v = await probe();
  }
  return v;
}

describe('what one process changes, the others see', () => {
  test('a revoked key', async () => {
    const workspaces = await admin<{ data: { id: string; slug: string }[] }>(gws[0]!, 'GET', '/workspaces');
    const workspace = workspaces.body.data.find((w) => w.slug === 'default')!.id;
    const made = await admin<{ id: string; key: string }>(gws[0]!, 'POST', '/api-keys', { name: 'cluster', type: 'workspace-service', workspace_id: workspace, scopes: ['completions.write'] });
    expect(made.status).toBe(201);
    const config = { 'x-gateway-config': JSON.stringify(leaf()) };
    // Every process verifies (and caches) the key.
    for (const gw of gws) expect((await call(gw, config, 'key in use', made.body.key)).status).toBe(200);
    expect((await admin(gws[0]!, 'PUT', `/api-keys/${made.body.id}`, { status: 'revoked' })).status).toBe(200);
    for (const gw of gws.slice(1)) expect((await seen(() => call(gw, config, 'revoked?', made.body.key), (r) => r.status === 401)).status).toBe(401);
  }, 30_000);

  test('a saved config changed', async () => {
    const workspaces = await admin<{ data: { id: string; slug: string }[] }>(gws[0]!, 'GET', '/workspaces');
    const workspace = workspaces.body.data.find((w) => w.slug === 'default')!.id;
    const slug = `cluster-${crypto.randomUUID().slice(0, 8)}`;
    const created = await admin<{ id: string }>(gws[0]!, 'POST', '/configs', { name: 'cluster', slug, workspace_id: workspace, config: leaf({ override_params: { model: 'gpt-4o-mini' } }) });
    expect(created.status).toBe(201);
    for (const gw of gws) expect((await call(gw, { 'x-gateway-config': slug })).body.model).toStartWith('gpt-4o-mini');
    expect((await admin(gws[0]!, 'PUT', `/configs/${created.body.id}`, { config: leaf({ override_params: { model: 'gpt-4.1' } }) })).status).toBe(200);
    for (const gw of gws.slice(1)) expect((await seen(() => call(gw, { 'x-gateway-config': slug }), (r) => String(r.body.model).startsWith('gpt-4.1'))).body.model).toStartWith('gpt-4.1');
  }, 30_000);

  test('a circuit opened', async () => {
    // Its own credentials make it a circuit of its own.
    const config = { 'x-gateway-config': JSON.stringify({ ...leaf({ api_key: `sk-circuit-${crypto.randomUUID()}` }), cb_config: { failure_threshold: 1, cooldown_interval: 30_000 } }) };
    mock.enqueue({ kind: 'error', status: 503 });
    expect((await call(gws[0]!, config, 'break')).status).toBe(503);
    for (const gw of gws.slice(1)) {
      const before = mock.requests.length;
      const r = await seen(() => call(gw, config, 'is it open?'), (r) => r.body.error?.code === 'circuit_open');
      expect(r.body.error?.code).toBe('circuit_open');
      expect(mock.requests.length).toBeLessThanOrEqual(before + 1); // at most one call raced the notice
    }
  }, 30_000);

  test('a cache entry written', async () => {
    const config = { 'x-gateway-config': JSON.stringify(leaf({ cache: { mode: 'simple' } })) };
    const content = `cached across processes ${crypto.randomUUID()}`;
    expect((await call(gws[0]!, config, content)).cache).toBe('MISS');
    for (const gw of gws.slice(1)) expect((await seen(() => call(gw, config, content), (r) => r.cache === 'HIT')).cache).toBe('HIT');
  }, 30_000);

  test('a rate limit reached', async () => {
    const tag = crypto.randomUUID();
    const policy = await admin(gws[0]!, 'POST', '/policies/rate-limits', { name: `cluster ${tag}`, type: 'requests', unit: 'rph', value: 2, conditions: [{ key: 'metadata.case', value: tag }] });
    expect(policy.status).toBe(201);
    const headers = { 'x-gateway-config': JSON.stringify(leaf()), 'x-gateway-metadata': JSON.stringify({ case: tag }) };
    // The policy reaches every process, then two calls through the first spend the limit for all.
    for (const gw of gws.slice(1)) await seen(() => admin<{ data: unknown[] }>(gw, 'GET', '/policies/rate-limits'), (r) => JSON.stringify(r.body).includes(tag));
    expect([(await call(gws[0]!, headers)).status, (await call(gws[0]!, headers)).status]).toEqual([200, 200]);
    for (const gw of gws.slice(1)) expect((await seen(() => call(gw, headers), (r) => r.status === 429)).status).toBe(429);
  }, 30_000);
});

describe('rolling restart', () => {
  test('three processes restarted one by one under a steady stream: no call fails, every call is logged once', async () => {
    const run = `roll-${crypto.randomUUID().slice(0, 8)}`;
    const config = JSON.stringify(leaf());
    let sent = 0;
    const failures: string[] = [];
    let stop = false;
    // As the load balancer: round robin, a refused connection (a process restarting) tried on the next one.
    let next = 0;
    async function send(): Promise<void> {
      const traceId = `${run}-${sent++}`;
      const errors: string[] = [];
      // nginx's proxy_next_upstream: the next process after a refusal, each in turn (twice round, a pause between).
      const start = next++;
      for (let tries = 0; tries < 6; tries++) {
        if (tries === 3) await Bun.sleep(100);
        const gw = gws[(start + tries) % gws.length]!;
        let res: Response;
        try {
          res = await fetch(`${gw.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': config, 'x-gateway-trace-id': traceId },
            body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: traceId }] }),
          });
        } catch (error) {
          errors.push(`${gw.port}: ${(error as { code?: string }).code ?? String(error)}`);
          continue; // connection refused: not sent, so safe to send elsewhere
        }
        await res.text();
        if (res.status !== 200) failures.push(`${traceId}: ${res.status}`);
        return;
      }
      failures.push(`${traceId}: no process took it (${errors.join('; ')})`);
    }
    const workers = Array.from({ length: 4 }, async () => {
      while (!stop) await send();
    });
    for (let i = 0; i < 3; i++) {
      await Bun.sleep(300);
      const old = gws[i]!;
      const port = old.port;
      expect(await old.stop()).toBe(0); // drained and flushed
      await startOne(i, port);
    }
    await Bun.sleep(300);
    stop = true;
    await Promise.all(workers);
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(20);
    // Every call has exactly one row (the log is written in batches: wait for the last ones).
    const rows = await seen(
      () => db.query(`SELECT trace_id, COUNT(*) AS n FROM request_logs WHERE trace_id LIKE '${run}-%' GROUP BY trace_id`),
      (rows) => rows.length === sent,
    );
    expect(rows.length).toBe(sent);
    expect(rows.every((r) => Number(r.n) === 1)).toBe(true);
    // The compose topology traces too: the processes sent their spans to the collector (the default protocol,
    // protobuf, which the receiver recognises without decoding).
    expect(collector.contentTypes.filter((t) => t === 'application/x-protobuf').length).toBeGreaterThan(0);
  }, 120_000);
});
