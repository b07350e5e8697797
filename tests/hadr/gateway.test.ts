// HADR mode end to end: the real server (a separate process) on a private MariaDB writer and a replica of it
// (binlog replication), MYSQL_WRITER_HADR_MODE=ON, a mock OpenAI provider, and a small admin plugin from a
// temporary folder (tests/helpers/notes-plugin.ts). The writer is killed (SIGKILL): /health says degraded, chat
// completions keep flowing (API keys verified from the reader, even one the gateway never saw before), admin
// reads answer, admin writes answer 503 at once, the request log neither crashes nor blocks. The writer is
// restarted: /health is ok again within seconds and writes (and the request log) work without restarting the
// gateway.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { apiKeys, hashSecret } from '@gateway/admin-api-keys';
import { organisations } from '@gateway/admin-identity';
import { createDatabase } from '@gateway/db';
import type { Database } from '@gateway/sdk';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { caughtUp, MARIADB_MISSING, type MariaDbServer, replicate, startMariaDb } from '../helpers/mariadb-process.ts';
import { type NotesProject, writeNotesProject } from '../helpers/notes-plugin.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const T = 60_000;
const SECOND_KEY = `gw-hadr-second-${crypto.randomUUID()}`;

async function until<V>(what: string, probe: () => Promise<V | undefined>, timeoutMs: number): Promise<{ value: V; ms: number }> {
  const start = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return { value, ms: Date.now() - start };
    if (Date.now() - start > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await Bun.sleep(100);
  }
}

describe.skipIf(MARIADB_MISSING !== undefined)(
  `HADR mode through the gateway: writer killed and restarted under traffic${MARIADB_MISSING ? ` (skipped: ${MARIADB_MISSING})` : ''}`,
  () => {
    let writer: MariaDbServer;
    let reader: MariaDbServer;
    let mock: OpenAIMock;
    let notes: NotesProject;
    let gw: GatewayProcess;
    /** The test's own connection to the writer (seeding, reading back). */
    let direct: Database;
    let noteId = '';

    const call = (path: string, init: { method?: string; body?: unknown; key?: string; headers?: Record<string, string> } = {}) =>
      fetch(`${gw.url}${path}`, {
        method: init.method ?? 'GET',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': init.key ?? gw.adminKey, ...init.headers },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
    const chat = (key = gw.adminKey, traceId?: string) =>
      call('/v1/chat/completions', {
        method: 'POST',
        key,
        headers: {
          'x-gateway-provider': 'openai',
          'x-gateway-custom-host': mock.url,
          authorization: 'Bearer sk-test',
          ...(traceId ? { 'x-gateway-trace-id': traceId } : {}),
        },
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
      });
    const health = async () => (await (await fetch(`${gw.url}/health`)).json()) as { status: string; reason?: string };

    beforeAll(async () => {
      // One after the other, each assigned at once: afterAll removes whatever did start.
      writer = await startMariaDb({ serverId: 1, binlog: true });
      reader = await startMariaDb({ serverId: 2, readOnly: true });
      await replicate(reader, writer);
      await writer.query('CREATE DATABASE gateway');
      mock = await startOpenAIMock({ apiKey: null });
      notes = writeNotesProject();
      gw = await startGatewayProcess(
        {
          DATABASE_URL: writer.url('gateway'),
          DB_READER_HOST: '127.0.0.1',
          DB_READER_PORT: String(reader.port),
          DB_READER_USER: 'root',
          DB_READER_PASS: '',
          MYSQL_WRITER_HADR_MODE: 'ON',
          TEST_EXTRA_ROOTS: notes.root,
        },
        'tests/hadr/fixtures/gateway-extra-roots.ts',
      );
      direct = await createDatabase(writer.url('gateway'));
    }, T);

    afterAll(async () => {
      await direct?.close();
      const code = await gw?.stop();
      if (code !== undefined && code !== 0) console.error(gw.output().slice(-4000));
      await mock?.stop();
      notes?.remove();
      await Promise.all([writer?.destroy(), reader?.destroy()]);
    }, T);

    test('writer up: health ok, a change is made and audited, chat works', async () => {
      expect(await health()).toEqual({ status: 'ok' });
      const created = await call('/v1/test-notes', { method: 'POST', body: { title: 'before the outage' } });
      expect(created.status).toBe(201);
      noteId = ((await created.json()) as { id: string }).id;
      expect((await chat()).status).toBe(200);

      // A key the gateway has never verified: during the outage it can only be found on the reader.
      const [org] = await direct.select(organisations, { limit: 1 });
      expect(org).toBeDefined();
      await direct.insert(apiKeys, {
        organisation_id: org!.id,
        name: 'second key',
        type: 'organisation-service',
        hash: hashSecret(SECOND_KEY),
        prefix_hint: SECOND_KEY.slice(0, 8),
        scopes: ['completions.write', 'test_notes.read', 'test_notes.write'],
      });
      await caughtUp(reader, writer);
    }, T);

    test('writer killed: health degraded; chat, key verification and admin reads go on; admin writes 503 at once', async () => {
      await writer.kill('SIGKILL');
      // The request log may report itself degraded first (its batch journaled); the writer's own probe follows.
      const degraded = await until('/health degraded by the writer', async () => {
        const h = await health();
        return h.status === 'degraded' && /writer database unavailable/.test(String(h.reason)) ? h : undefined;
      }, 10_000);
      expect(degraded.ms).toBeLessThan(5_000);
      expect(degraded.value.reason).toMatch(/writer database unavailable/);
      const raw = await fetch(`${gw.url}/health`);
      expect(raw.status).toBe(200);

      // Gateway traffic: the bootstrap key (cached) and the never-seen key (looked up on the reader).
      const results = await Promise.all([chat(), chat(SECOND_KEY), ...Array.from({ length: 8 }, () => chat())]);
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
      const answer = (await results[1]!.json()) as { choices: { message: { content: string } }[] };
      expect(answer.choices[0]?.message.content).toBe('You said: hello');

      // Admin reads: a list (reader), a fresh read of one note (falls back to the reader), the audit log.
      const list = await call('/v1/test-notes');
      expect(list.status).toBe(200);
      expect(((await list.json()) as { data: { id: string }[] }).data.map((n) => n.id)).toEqual([noteId]);
      const one = await call(`/v1/test-notes/${noteId}`, { key: SECOND_KEY });
      expect(one.status).toBe(200);
      const audit = await call('/v1/audit-logs?resource=test_note');
      expect(audit.status).toBe(200);
      const entries = ((await audit.json()) as { data: { action: string; resource_id: string }[] }).data;
      expect(entries.map((e) => [e.action, e.resource_id])).toEqual([['create', noteId]]);

      // Admin writes: 503 database_writer_unavailable, without waiting on the dead writer.
      for (const [method, path, body] of [
        ['POST', '/v1/test-notes', { title: 'during the outage' }],
        ['PUT', `/v1/test-notes/${noteId}`, { title: 'renamed during the outage' }],
        ['DELETE', `/v1/test-notes/${noteId}`, undefined],
      ] as const) {
        const started = performance.now();
        const res = await call(path, { method, body });
        expect(performance.now() - started).toBeLessThan(1_000);
        expect(res.status).toBe(503);
        const error = ((await res.json()) as { error: { code: string; type: string } }).error;
        expect(error).toMatchObject({ code: 'database_writer_unavailable', type: 'service_unavailable' });
      }
      expect(gw.proc.exitCode).toBeNull();
    }, T);

    test('writer restarted: health ok within seconds, writes and the request log work again, no restart', async () => {
      await writer.start();
      const ok = await until('/health ok', async () => ((await health()).status === 'ok' ? true : undefined), 15_000);
      expect(ok.ms).toBeLessThan(5_000);

      const created = await call('/v1/test-notes', { method: 'POST', body: { title: 'after the outage' }, key: SECOND_KEY });
      expect(created.status).toBe(201);
      const renamed = await call(`/v1/test-notes/${noteId}`, { method: 'PUT', body: { title: 'renamed after' } });
      expect(renamed.status).toBe(200);

      // The audit log has the changes made, none of the refused ones.
      const audit = (await (await call('/v1/audit-logs?resource=test_note')).json()) as { data: { action: string }[]; total: number };
      expect(audit.data.map((e) => e.action)).toEqual(['update', 'create', 'create']);

      // The request log's writer thread writes again (its rows of the outage were journaled and are replayed).
      const traceId = `hadr-after-${crypto.randomUUID()}`;
      expect((await chat(gw.adminKey, traceId)).status).toBe(200);
      await until(
        'the request log row of a call after the restart',
        async () => ((await writer.query(`SELECT id FROM gateway.request_logs WHERE trace_id = ?`, [traceId])).length > 0 ? true : undefined),
        15_000,
      );
      expect(gw.proc.exitCode).toBeNull();
      expect(gw.output()).toContain('writer database down');
      expect(gw.output()).toContain('writer database reachable again');
    }, T);
  },
);
