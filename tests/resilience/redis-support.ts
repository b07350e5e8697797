// Shared pieces of the two-process circuit-breaker suites (circuit-*.test.ts, redis-*.test.ts): a redis-server of
// the suite's OWN (a child process on a free port, never the shared 127.0.0.1:6379 other suites use) that a test can
// kill, freeze and restart on the same port; two real gateway processes pointed at it with the same
// CIRCUIT_BREAKER_KEY_PREFIX (unique per run) and one SQLite database each; OpenAI mocks behind them.

import { afterAll, beforeAll } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import Redis from 'ioredis';
import { createE2EDatabase, type E2EDatabase, freePort } from '../helpers/e2e-database.ts';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

/** The key prefix of the gateway's Redis state store (core/state/src/redis.ts). */
export const STORE_PREFIX = 'gw:';
/** The breaker's background refresh (plugins/circuit-breaker README: "within about 250 ms"). */
export const REFRESH_MS = 250;
/** cb_config.cooldown_interval cannot be lower (SPEC.md). */
export const MIN_COOLDOWN_MS = 30_000;

const INSPECTOR = 'circuit-suite-inspector';

// Every redis-server this process started, so that none outlives it even if afterAll never runs.
const children = new Set<Subprocess>();
process.on('exit', () => {
  for (const p of children) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

export interface OwnRedis {
  port: number;
  url: string;
  /** Whether the server process is running (not killed; a frozen one counts as running). */
  running(): boolean;
  /** Kills the server (SIGTERM or SIGKILL) and waits until it is gone. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts it again on the same port (empty: no persistence) and waits until it answers PING. */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: the server keeps its sockets open but answers nothing. */
  freeze(): void;
  thaw(): void;
  /** Runs one command on a fresh connection (so it never queues behind a reconnecting client). */
  command(name: string, ...args: (string | number)[]): Promise<unknown>;
  /** Connections other than the suite's own inspector (here: the gateways' ioredis clients). */
  clientCount(): Promise<number>;
  /** Keys (with the store's `gw:` prefix) that match a glob, and their values. */
  entries(pattern: string): Promise<Map<string, string | null>>;
  /** The server's log (its --logfile). */
  log(): string;
  close(): Promise<void>;
}

async function ping(port: number): Promise<boolean> {
  return (await rawCommand(port, 'ping').catch(() => null)) === 'PONG';
}

async function rawCommand(port: number, name: string, ...args: (string | number)[]): Promise<unknown> {
  const conn = new Redis({
    host: '127.0.0.1',
    port,
    connectionName: INSPECTOR,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    commandTimeout: 1_000,
    retryStrategy: () => null,
  });
  conn.on('error', () => {});
  try {
    await conn.connect();
    return await conn.call(name, ...args);
  } finally {
    conn.disconnect();
  }
}

/** Starts a redis-server of the suite's own on a free port (retried on another port if that one was taken). */
export async function startOwnRedis(): Promise<OwnRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-redis-'));
  const logfile = join(dir, 'redis.log');
  let proc: Subprocess | undefined;
  let port = 0;

  const spawn = async (p: number): Promise<boolean> => {
    const child = Bun.spawn(
      ['redis-server', '--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', dir, '--logfile', logfile],
      { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' },
    );
    children.add(child);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) return false;
      if (await ping(p)) {
        proc = child;
        return true;
      }
      await Bun.sleep(20);
    }
    child.kill('SIGKILL');
    return false;
  };

  for (let i = 0; i < 5 && !proc; i++) {
    port = await freePort();
    await spawn(port);
  }
  if (!proc) throw new Error(`could not start redis-server:\n${safeRead(logfile)}`);

  const self: OwnRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    running: () => proc !== undefined && proc.exitCode === null && proc.signalCode === null,
    async stop(signal = 'SIGKILL') {
      const p = proc;
      if (!p) return;
      if (p.exitCode === null && p.signalCode === null) {
        p.kill('SIGCONT'); // a frozen server cannot act on SIGTERM
        p.kill(signal);
      }
      await p.exited;
      children.delete(p);
      proc = undefined;
    },
    async restart() {
      if (self.running()) throw new Error('redis-server is still running');
      // The listening socket of a killed server is gone at once; retry briefly all the same.
      for (let i = 0; i < 20; i++) {
        if (await spawn(port)) return;
        await Bun.sleep(100);
      }
      throw new Error(`could not restart redis-server on port ${port}:\n${safeRead(logfile)}`);
    },
    freeze: () => proc?.kill('SIGSTOP'),
    thaw: () => proc?.kill('SIGCONT'),
    command: (name, ...args) => rawCommand(port, name, ...args),
    async clientCount() {
      const list = String(await rawCommand(port, 'client', 'list'));
      // Command connections only: a process's publish/subscribe connection (named gateway-subscriber) is a second,
      // idle one, and while it reconnects it is not yet flagged as a subscriber.
      return list.split('\n').filter((line) => line.trim() && !line.includes(`name=${INSPECTOR}`) && !line.includes('name=gateway-subscriber')).length;
    },
    async entries(pattern) {
      const keys = ((await rawCommand(port, 'keys', pattern)) as string[]).sort();
      const out = new Map<string, string | null>();
      for (const key of keys) out.set(key, (await rawCommand(port, 'get', key)) as string | null);
      return out;
    },
    log: () => safeRead(logfile),
    async close() {
      await self.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return self;
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

export interface TwoGateways {
  redis: OwnRedis;
  /** The gateway processes, both on `redis` with the same key prefix, each with its own SQLite database. */
  gws: [GatewayProcess, GatewayProcess];
  dbs: [E2EDatabase, E2EDatabase];
  mocks: OpenAIMock[];
  /** CIRCUIT_BREAKER_KEY_PREFIX of this run. */
  prefix: string;
}

/** Waits until `cond` holds (polled every `everyMs`), or throws with `what` after `ms`. Returns the time it took. */
export async function waitFor(what: string, cond: () => Promise<boolean> | boolean, ms: number, everyMs = 25): Promise<number> {
  const started = Date.now();
  while (!(await cond())) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await Bun.sleep(everyMs);
  }
  return Date.now() - started;
}

async function startGateway(env: Record<string, string>): Promise<GatewayProcess> {
  let lastError: unknown;
  for (let i = 0; i < 3; i++) {
    try {
      return await startGatewayProcess({ PORT: String(await freePort()), ...env });
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/**
 * Own redis-server, `mockCount` OpenAI mocks and two gateway processes for a test file; ready once both gateways'
 * Redis connections are up. The getter is valid inside the file's tests.
 */
export function useTwoGateways(mockCount: number, env: Record<string, string> = {}): () => TwoGateways {
  let stack: TwoGateways | undefined;
  beforeAll(async () => {
    const redis = await startOwnRedis();
    const prefix = `cb-e2e-${crypto.randomUUID()}:`;
    const dbs: [E2EDatabase, E2EDatabase] = [await createE2EDatabase('sqlite'), await createE2EDatabase('sqlite')];
    const mocks: OpenAIMock[] = [];
    for (let i = 0; i < mockCount; i++) mocks.push(await startOpenAIMock({ apiKey: null }));
    const common = { REDIS_URL: redis.url, CIRCUIT_BREAKER_KEY_PREFIX: prefix, ...env };
    const gws = (await Promise.all(dbs.map((db) => startGateway({ ...common, DATABASE_URL: db.url })))) as [GatewayProcess, GatewayProcess];
    stack = { redis, gws, dbs, mocks, prefix };
    // Each gateway holds one ioredis connection (core/state): wait for both before the first request.
    await waitFor('both gateways connected to redis-server', async () => (await redis.clientCount()) >= 2, 10_000);
  }, 60_000);
  afterAll(async () => {
    if (!stack) return;
    for (const gw of stack.gws) {
      if (gw.proc.exitCode !== null) console.error(`a gateway process exited early (${gw.proc.exitCode}):\n${gw.output().slice(-4000)}`);
      await gw.stop();
    }
    for (const m of stack.mocks) await m.stop();
    for (const db of stack.dbs) await db.drop();
    await stack.redis.close();
  }, 40_000);
  return () => {
    if (!stack) throw new Error('the two-gateway stack did not start');
    return stack;
  };
}

/** pino JSON lines of a gateway's output whose `msg` contains `text`. */
export function logLines(gw: GatewayProcess, text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of gw.output().split('\n')) {
    if (!line.includes(text)) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      /* not a JSON log line */
    }
  }
  return out.filter((l) => typeof l.msg === 'string' && (l.msg as string).includes(text));
}
