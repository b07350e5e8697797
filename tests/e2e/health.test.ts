// Health that tells the truth (issue #25, item 4), on real gateway processes: a gateway that cannot serve refuses to
// start and says why (a MySQL database that does not exist, MySQL without GATEWAY_ENCRYPTION_KEY, a plugin that did
// not load, no authenticator), instead of answering /health 200 and then 500 on every call; /health/live and
// /health/ready for orchestrators on SQLite and MariaDB; ready turns 503 while draining or with a load problem.

import { describe, expect, test } from 'bun:test';
import { createE2EDatabase, E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { startGatewayProcess } from '../helpers/gateway-process.ts';
import { startInProcessGateway } from '../helpers/in-process.ts';

/** The output of a start that must fail (startGatewayProcess rejects with everything the process printed). */
async function refusedStart(env: Record<string, string>): Promise<string> {
  const started = await startGatewayProcess(env).then(
    async (gw) => {
      await gw.stop();
      return undefined;
    },
    (error: unknown) => String(error instanceof Error ? error.message : error),
  );
  if (started === undefined) throw new Error('the gateway started; it should have refused');
  return started;
}

describe('start refused with a clear message', () => {
  test('a MySQL database that does not exist', async () => {
    const name = `gw_missing_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const output = await refusedStart({ DATABASE_URL: `mysql://root@127.0.0.1:3306/${name}` });
    expect(output).toContain('gateway exited with 1 before listening');
    expect(output).toContain('The gateway did not start:');
    expect(output).toContain(`Unknown database '${name}'`);
    expect(output).toContain(`CREATE DATABASE \`${name}\``);
    // Refused before anything listened or loaded: no plugin tried the database.
    expect(output).not.toContain('gateway listening');
    expect(output).not.toContain('plugin refused');
  }, 30_000);

  test('MySQL without GATEWAY_ENCRYPTION_KEY; the password in DATABASE_URL is not printed', async () => {
    const output = await refusedStart({ DATABASE_URL: 'mysql://root:hunter2secret@127.0.0.1:3306/test', GATEWAY_ENCRYPTION_KEY: '' });
    expect(output).toContain('GATEWAY_ENCRYPTION_KEY is not set: a MySQL deployment needs it');
    expect(output).not.toContain('hunter2secret');
  }, 30_000);

  test('a plugin that did not load names itself and the way to switch it off', async () => {
    // Without the identity plugin every plugin that requires it is refused.
    const output = await refusedStart({ GATEWAY_DISABLED_PLUGINS: '@gateway/admin-identity' });
    expect(output).toContain('The gateway did not start:');
    expect(output).toMatch(/plugin @gateway\/admin-api-keys did not load: requires @gateway\/admin-identity/);
    expect(output).toContain('GATEWAY_DISABLED_PLUGINS=@gateway/admin-api-keys');
    expect(output).not.toContain('gateway listening');
  }, 30_000);

  test('no authenticator at all (the API-key plugin switched off): every call would fail', async () => {
    const output = await refusedStart({ GATEWAY_DISABLED_PLUGINS: '@gateway/admin-api-keys,@gateway/plugin-usage-limits,@gateway/plugin-rate-limits' });
    expect(output).toContain('no plugin provides the API-key authenticator');
    expect(output).not.toContain('gateway listening');
  }, 30_000);
});

describe.each(E2E_DIALECTS)('liveness and readiness (%s)', (dialect) => {
  test('/health/live and /health/ready answer 200 with their checks; /health keeps its shape', async () => {
    const db = await createE2EDatabase(dialect);
    const gw = await startGatewayProcess({ DATABASE_URL: db.url }).catch(async (e: unknown) => {
      await db.drop();
      throw e;
    });
    try {
      const live = await fetch(`${gw.url}/health/live`);
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: 'live' });
      const ready = await fetch(`${gw.url}/health/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', plugins: 'ok', draining: false } });
      const health = await fetch(`${gw.url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok' });
    } finally {
      expect(await gw.stop()).toBe(0);
      await db.drop();
    }
  }, 30_000);
});

describe('not ready (a gateway built in this process, where nothing refuses the start)', () => {
  test('while draining: 503, draining true; and back', async () => {
    const gateway = await startInProcessGateway();
    try {
      gateway.readiness.draining = true;
      const draining = await gateway.handle(new Request('http://gateway.test/health/ready'));
      expect(draining.status).toBe(503);
      expect(await draining.json()).toEqual({ status: 'not_ready', checks: { database: 'ok', plugins: 'ok', draining: true } });
      // Liveness is not readiness: a draining process is alive.
      expect((await gateway.handle(new Request('http://gateway.test/health/live'))).status).toBe(200);
      gateway.readiness.draining = false;
      expect((await gateway.handle(new Request('http://gateway.test/health/ready'))).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });

  test('a plugin that did not load: 503 naming it', async () => {
    const gateway = await startInProcessGateway({ GATEWAY_DISABLED_PLUGINS: '@gateway/admin-identity' });
    try {
      const ready = await gateway.handle(new Request('http://gateway.test/health/ready'));
      expect(ready.status).toBe(503);
      const body = (await ready.json()) as { status: string; checks: { plugins: string[] } };
      expect(body.status).toBe('not_ready');
      expect(body.checks.plugins.some((p) => p.startsWith('plugin @gateway/admin-api-keys did not load'))).toBe(true);
    } finally {
      await gateway.close();
    }
  });

  test('a database that stopped answering: 503 with the reason', async () => {
    const gateway = await startInProcessGateway();
    const ready = async () => gateway.handle(new Request('http://gateway.test/health/ready'));
    expect((await ready()).status).toBe(200);
    // Closed under the running gateway: the probe's query fails as a lost database would.
    await gateway.close();
    const answer = await ready();
    expect(answer.status).toBe(503);
    const body = (await answer.json()) as { checks: { database: string } };
    expect(body.checks.database).not.toBe('ok');
  });
});
