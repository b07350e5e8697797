// The cache's Redis backend on its own, against a redis-server of this file's own (a child process on a free port;
// the shared 127.0.0.1:6379 is never touched): no connection before first use; Redis absent at the first use
// (rejects within the command timeout, then at once) and arriving later (picked up by itself); binary values and
// TTLs; a frozen server (given up after the timeout, then left alone for a second).

import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisBackend } from '@gateway/plugin-cache';
import type { Subprocess } from 'bun';
import { freePort } from '../helpers/e2e-database.ts';
import { RUN, waitFor } from './support.ts';

const TIMEOUT_MS = 1_000;
/** "At once": well short of the command timeout a waiting call would take (slack for a loaded machine). */
const AT_ONCE_MS = TIMEOUT_MS / 2;
const dir = mkdtempSync(join(tmpdir(), 'gw-cache-redis-'));
let server: Subprocess | undefined;
const port = await freePort();

function startServer(): Subprocess {
  server = Bun.spawn(['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'ignore',
  });
  return server;
}

const backend = new RedisBackend({ url: `redis://127.0.0.1:${port}`, keyPrefix: `gw-cache-backend-${RUN}:`, timeoutMs: TIMEOUT_MS });

afterAll(async () => {
  await backend.close();
  if (server && server.exitCode === null) {
    server.kill('SIGCONT');
    server.kill('SIGKILL');
    await server.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

async function elapsed(fn: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  let error: unknown;
  await fn().catch((e: unknown) => (error = e));
  return { ms: performance.now() - started, error };
}

describe('the Redis backend', () => {
  test('no server at first use: rejects within the command timeout, then at once; connects when it appears', async () => {
    expect(backend.client.status).toBe('wait'); // lazy: nothing opened yet
    const first = await elapsed(() => backend.get('k'));
    expect(first.error).toBeDefined();
    expect(first.ms).toBeLessThan(TIMEOUT_MS + 1_000);
    for (let i = 0; i < 5; i++) {
      const next = await elapsed(() => backend.set('k', new Uint8Array([1]), 60));
      expect(next.error).toBeDefined();
      expect(next.ms).toBeLessThan(AT_ONCE_MS);
    }
    startServer();
    await waitFor('the backend connected by itself', () => backend.client.status === 'ready', 10_000, 50);
  }, 20_000);

  test('binary values round-trip, with a TTL', async () => {
    const value = new Uint8Array(256).map((_, i) => i);
    await backend.set('bin', value, 60);
    expect(await backend.get('bin')).toEqual(value);
    expect(await backend.client.ttl(`gw-cache-backend-${RUN}:bin`)).toBeGreaterThan(55);
    expect(await backend.get('absent')).toBeNull();
    await backend.delete('bin');
  });

  test('a frozen server: given up after the timeout, then refused at once for a second', async () => {
    server?.kill('SIGSTOP');
    try {
      const first = await elapsed(() => backend.get('k'));
      expect(first.error).toBeDefined();
      expect(first.ms).toBeLessThan(TIMEOUT_MS + 1_000);
      const second = await elapsed(() => backend.get('k'));
      expect(second.error).toBeDefined();
      expect(second.ms).toBeLessThan(AT_ONCE_MS);
    } finally {
      server?.kill('SIGCONT');
    }
    await Bun.sleep(1_100);
    await waitFor('answering again', async () => (await backend.get('k').then(() => true, () => false)), 5_000, 100);
  }, 20_000);
});
