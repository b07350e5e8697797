// First run (issue #25, item 3) on real gateway processes: the first start prints the generated admin key and the
// next steps as plain text, not inside a JSON log line; a second start prints neither. A lost key is replaced with
// `npm run admin -- create-key` on the database directly (SQLite and MariaDB): printed once, stored hashed, accepted
// by a running gateway. GATEWAY_ADMIN_API_KEY on an existing database is added, or refused loudly when revoked.
// Logs: JSON lines when stdout is not a terminal, readable lines with LOG_FORMAT=pretty.

import { afterAll, describe, expect, test } from 'bun:test';
import { createE2EDatabase, E2E_DIALECTS, type E2EDatabase } from '../helpers/e2e-database.ts';
import { ROOT, startGatewayProcess } from '../helpers/gateway-process.ts';

const sha256 = (text: string) => new Bun.CryptoHasher('sha256').update(text).digest('hex');

/** `npm run admin -- <args>` as the script runs it (bun scripts/admin.ts), on DATABASE_URL. */
async function admin(databaseUrl: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([process.execPath, 'scripts/admin.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

const listKeys = (url: string, key: string) => fetch(`${url}/v1/api-keys`, { headers: { 'x-gateway-api-key': key } });

describe('the first start (SQLite, no GATEWAY_ADMIN_API_KEY)', () => {
  const dbs: E2EDatabase[] = [];
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });

  test('prints the generated key, a first call and where the docs are, as plain text; the key works; a second start prints none', async () => {
    const db = await createE2EDatabase('sqlite');
    dbs.push(db);
    // An empty GATEWAY_ADMIN_API_KEY counts as unset: the key is generated.
    const gw = await startGatewayProcess({ DATABASE_URL: db.url, GATEWAY_ADMIN_API_KEY: '' });
    let secret: string;
    try {
      const output = gw.output();
      const keyLine = /^ {4}(\S{40})$/m.exec(output);
      expect(keyLine).not.toBeNull();
      secret = keyLine![1]!;
      expect(output).toContain('Admin API key (shown once, stored only hashed: keep it now):');
      expect(output).toContain(`export GATEWAY_KEY=${secret}`);
      // HOST=127.0.0.1 and PORT=0 (the system chose the port, which the listening line gives).
      expect(output).toContain('curl http://127.0.0.1:<port>/v1/chat/completions');
      expect(output).toContain('-H "x-gateway-api-key: $GATEWAY_KEY" -H "x-gateway-provider: openai"');
      expect(output).toContain('README.md ("First five minutes")');
      expect(output).toContain('npm run admin -- create-key');
      // Not inside a log line: no JSON line carries the key.
      for (const line of output.split('\n').filter((l) => l.startsWith('{'))) expect(line).not.toContain(secret);
      // Logs are JSON lines when stdout is not a terminal.
      const listening = output.split('\n').find((l) => l.includes('gateway listening'));
      expect(JSON.parse(listening!)).toMatchObject({ level: 30, msg: expect.stringContaining('gateway listening') });

      expect((await listKeys(gw.url, secret)).status).toBe(200);
      // Stored hashed only.
      const rows = await db.query('SELECT hash FROM api_keys');
      expect(rows.map((r) => r.hash)).toContain(sha256(secret));
      expect(JSON.stringify(rows)).not.toContain(secret);
    } finally {
      expect(await gw.stop()).toBe(0);
    }

    const again = await startGatewayProcess({ DATABASE_URL: db.url, GATEWAY_ADMIN_API_KEY: '' });
    try {
      expect(again.output()).not.toContain('first start');
      expect(again.output()).not.toContain(secret);
      expect((await listKeys(again.url, secret)).status).toBe(200);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  }, 60_000);

  test('LOG_FORMAT=pretty: readable lines, not JSON', async () => {
    const db = await createE2EDatabase('sqlite');
    dbs.push(db);
    const proc = Bun.spawn([process.execPath, 'core/server/src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'pretty', LOG_LEVEL: 'info', GATEWAY_ADMIN_API_KEY: '' },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    let text = '';
    const decoder = new TextDecoder();
    const reader = proc.stdout.getReader();
    try {
      const deadline = Date.now() + 30_000;
      while (!text.includes('gateway listening') && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      const line = text.split('\n').find((l) => l.includes('gateway listening'));
      expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}gateway listening on http:\/\/127\.0\.0\.1:\d+ port=\d+ host=127\.0\.0\.1$/);
      expect(text.split('\n').some((l) => l.startsWith('{'))).toBe(false);
    } finally {
      proc.kill('SIGTERM');
      await proc.exited;
    }
  }, 60_000);
});

describe.each(E2E_DIALECTS)('a lost admin key replaced (%s)', (dialect) => {
  test('npm run admin -- create-key: a new key printed once, stored hashed, accepted by the running gateway', async () => {
    const db = await createE2EDatabase(dialect);
    const gw = await startGatewayProcess({ DATABASE_URL: db.url }).catch(async (e: unknown) => {
      await db.drop();
      throw e;
    });
    try {
      const made = await admin(db.url, 'create-key');
      expect(made.code).toBe(0);
      const secret = /^ {4}(\S+)$/m.exec(made.stdout)?.[1];
      expect(secret).toBeDefined();
      expect(made.stdout).toContain('of organisation default (every scope; shown once, stored only hashed)');
      const rows = await db.query('SELECT hash, type FROM api_keys');
      expect(rows).toContainEqual({ hash: sha256(secret!), type: 'organisation-service' });
      expect(JSON.stringify(rows)).not.toContain(secret!);
      const listed = await listKeys(gw.url, secret!);
      expect(listed.status).toBe(200);
      expect(((await listed.json()) as { data: unknown[] }).data).toHaveLength(2);

      const unknown = await admin(db.url, 'create-key', '--organisation', 'no-such-org');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('no organisation with slug no-such-org');
      const usage = await admin(db.url, 'remove-everything');
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('usage: npm run admin -- create-key');
    } finally {
      expect(await gw.stop()).toBe(0);
      await db.drop();
    }
  }, 60_000);

  test('GATEWAY_ADMIN_API_KEY on an existing database: an unknown one is added; a revoked one is refused, loudly', async () => {
    const db = await createE2EDatabase(dialect);
    const first = `first-${crypto.randomUUID()}`;
    const second = `second-${crypto.randomUUID()}`;
    try {
      const a = await startGatewayProcess({ DATABASE_URL: db.url, GATEWAY_ADMIN_API_KEY: first });
      expect(await a.stop()).toBe(0);

      const b = await startGatewayProcess({ DATABASE_URL: db.url, GATEWAY_ADMIN_API_KEY: second });
      let secondId: string;
      try {
        expect(b.output()).toContain('GATEWAY_ADMIN_API_KEY was not in the database: added as a new admin key');
        const listed = await listKeys(b.url, second);
        expect(listed.status).toBe(200);
        const keys = ((await listed.json()) as { data: { id: string; name: string }[] }).data;
        secondId = keys.find((k) => k.name === 'Admin key (from GATEWAY_ADMIN_API_KEY)')!.id;
        expect((await listKeys(b.url, first)).status).toBe(200);
        const revoked = await fetch(`${b.url}/v1/api-keys/${secondId}`, {
          method: 'PUT',
          headers: { 'x-gateway-api-key': first, 'content-type': 'application/json' },
          body: JSON.stringify({ status: 'revoked' }),
        });
        expect(revoked.status).toBe(200);
      } finally {
        expect(await b.stop()).toBe(0);
      }

      const c = await startGatewayProcess({ DATABASE_URL: db.url, GATEWAY_ADMIN_API_KEY: second });
      try {
        expect(c.output()).toContain(`GATEWAY_ADMIN_API_KEY is NOT applied: it is the secret of API key ${secondId}, which was revoked`);
        expect((await listKeys(c.url, second)).status).toBe(401);
      } finally {
        expect(await c.stop()).toBe(0);
      }
    } finally {
      await db.drop();
    }
  }, 60_000);
});
