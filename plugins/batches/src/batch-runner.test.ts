// The lease: two runners (two "processes", each with its own connections to one database) started on the same
// batches at the same moment send every line once and finish each batch once; a claim held by a live owner is not
// taken, an expired one is. The lines go to a counting stand-in for the gateway's pipeline (the e2e suites run the
// real one: tests/e2e/batches*.test.ts).
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBox } from '@gateway/admin-kit';
import { createDatabase } from '@gateway/db';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { type Caller, type Database, eq, type GatewayCalls, type Logger } from '@gateway/sdk';
import { BatchRunner, configPlace } from './batch-runner.ts';
import { LocalFileStore } from './file-store.ts';
import { GatewayFiles } from './files.ts';
import { gatewayBatches, gatewayBatchResults, MIGRATIONS } from './tables.ts';

const dir = mkdtempSync(join(tmpdir(), 'gw-batch-runner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const box = new SecretBox('batch-runner-test-key-0123456789');
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger;
const caller: Caller = { apiKeyId: 'k1', organisationId: 'o1', workspaceId: 'ws1', scopes: ['*'], keyType: 'workspace-service', userId: null };

function countingCalls(sent: Map<string, number>): GatewayCalls {
  return {
    resolveConfig: () => ({}),
    async call(call) {
      const content = (call.body.messages as { content: string }[])[0]!.content;
      const key = `${call.spanName?.split(' ')[1]}:${content}`;
      sent.set(key, (sent.get(key) ?? 0) + 1);
      await Bun.sleep(1);
      return Response.json({ object: 'chat.completion', choices: [] });
    },
  };
}

function runnerOn(database: Database, sent: Map<string, number>, leaseMs = 5_000): BatchRunner {
  const files = new GatewayFiles({ database, store: new LocalFileStore(dir) });
  return new BatchRunner({ database, files, box, logger: silent, calls: () => countingCalls(sent) }, { concurrency: 4, leaseMs, pollMs: 60_000 });
}

async function createBatch(database: Database, lines: number): Promise<string> {
  const files = new GatewayFiles({ database, store: new LocalFileStore(dir) });
  const text = Array.from({ length: lines }, (_, i) =>
    JSON.stringify({ custom_id: `c${i + 1}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [{ role: 'user', content: `line ${i + 1}` }] } }),
  ).join('\n');
  const file = await files.create({ caller }, 'in.jsonl', 'batch', text);
  const id = `batch_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
  const now = Math.floor(Date.now() / 1000);
  await database.insert(gatewayBatches, {
    id,
    organisation_id: 'o1',
    workspace_id: 'ws1',
    endpoint: '/v1/chat/completions',
    input_file_id: file.id,
    completion_window: '24h',
    status: 'validating',
    created_at: now,
    expires_at: now + 86_400,
    caller: { ...caller, scopes: ['*'] },
    config: box.sealJson({ provider: 'openai' }, configPlace(id)),
    trace_id: 't1',
  });
  return id;
}

for (const dialect of DIALECTS) {
  describe(`batch runner lease [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('two processes started on the same batches: each line sent once, each batch completed once', async () => {
      await t.database.migrate(MIGRATIONS);
      const other = await createDatabase(t.url);
      try {
        const sent = new Map<string, number>();
        const a = runnerOn(t.database, sent);
        const b = runnerOn(other, sent);
        const ids = await Promise.all(Array.from({ length: 6 }, () => createBatch(t.database, 50)));
        await Promise.all(ids.flatMap((id) => [a.run(id), b.run(id), a.poll(), b.poll()]));
        await Promise.all([a.idle(), b.idle()]);
        expect(sent.size).toBe(6 * 50);
        expect([...sent.values()].filter((n) => n !== 1)).toEqual([]);
        for (const id of ids) {
          const row = await t.database.findOne(gatewayBatches, 'id', id, { fresh: true });
          expect({ status: row?.status, completed: row?.completed, owner: row?.lease_owner }).toEqual({ status: 'completed', completed: 50, owner: null });
        }
        await Promise.all([a.close(), b.close()]);
      } finally {
        await other.close();
      }
    });

    test('a live lease is not taken; an expired one is, and the taker skips the lines already recorded', async () => {
      await t.database.migrate(MIGRATIONS);
      const sent = new Map<string, number>();
      const id = await createBatch(t.database, 10);
      // Another owner holds it, alive.
      await t.database.update(gatewayBatches, { lease_owner: 'elsewhere', lease_expires_at: Date.now() + 60_000 }, (c) => eq(c.id, id));
      const runner = runnerOn(t.database, sent);
      await runner.run(id);
      expect(sent.size).toBe(0);
      expect((await t.database.findOne(gatewayBatches, 'id', id, { fresh: true }))?.status).toBe('validating');
      // Its owner died: the lease expires and the batch is taken over.
      // It had recorded lines 1-3 before it died.
      await t.database.update(gatewayBatches, { status: 'in_progress', total: 10, lease_expires_at: Date.now() - 1 }, (c) => eq(c.id, id));
      await t.database.insert(gatewayBatchResults, [1, 2, 3].map((line) => ({ batch_id: id, line, ok: true, result: JSON.stringify({ custom_id: `c${line}` }) })));
      await runner.poll();
      await runner.idle();
      expect([...sent.keys()].sort()).toEqual([4, 5, 6, 7, 8, 9, 10].map((n) => `${id}:line ${n}`).sort());
      const row = await t.database.findOne(gatewayBatches, 'id', id, { fresh: true });
      expect({ status: row?.status, completed: row?.completed }).toEqual({ status: 'completed', completed: 10 });
      await runner.close();
    });

    test('past its completion window: expired, with the lines done in the output file and no line sent after', async () => {
      await t.database.migrate(MIGRATIONS);
      const sent = new Map<string, number>();
      const id = await createBatch(t.database, 5);
      await t.database.update(gatewayBatches, { status: 'in_progress', total: 5, expires_at: Math.floor(Date.now() / 1000) - 1 }, (c) => eq(c.id, id));
      await t.database.insert(gatewayBatchResults, { batch_id: id, line: 1, ok: true, result: JSON.stringify({ custom_id: 'c1' }) });
      const runner = runnerOn(t.database, sent);
      await runner.run(id);
      expect(sent.size).toBe(0);
      const row = await t.database.findOne(gatewayBatches, 'id', id, { fresh: true });
      expect({ status: row?.status, completed: row?.completed, expired: (row?.expired_at ?? 0) > 0, output: row?.output_file_id !== null }).toEqual({
        status: 'expired',
        completed: 1,
        expired: true,
        output: true,
      });
      await runner.close();
    });

    test('a database error mid-way: the lines in flight finish before the lease is given back, and the batch goes on later', async () => {
      await t.database.migrate(MIGRATIONS);
      const id = await createBatch(t.database, 40);
      let inFlight = 0;
      let sentCount = 0;
      const calls: GatewayCalls = {
        resolveConfig: () => ({}),
        async call() {
          inFlight++;
          sentCount++;
          await Bun.sleep(5);
          inFlight--;
          return Response.json({ object: 'chat.completion', choices: [] });
        },
      };
      let inserts = 0;
      const failing = new Proxy(t.database, {
        get(target, key, receiver) {
          if (key === 'insert')
            return (table: unknown, ...rest: unknown[]) => {
              if (table === gatewayBatchResults && ++inserts === 6) return Promise.reject(new Error('database gone'));
              return (target.insert as (...a: unknown[]) => Promise<number>)(table, ...rest);
            };
          const value = Reflect.get(target, key, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }) as Database;
      const files = new GatewayFiles({ database: failing, store: new LocalFileStore(dir) });
      const runner = new BatchRunner({ database: failing, files, box, logger: silent, calls: () => calls }, { concurrency: 4, leaseMs: 5_000, pollMs: 60_000 });
      await runner.run(id);
      expect(inFlight).toBe(0);
      const row = await t.database.findOne(gatewayBatches, 'id', id, { fresh: true });
      expect({ status: row?.status, owner: row?.lease_owner }).toEqual({ status: 'in_progress', owner: null });
      const recorded = await t.database.count(gatewayBatchResults, (c) => eq(c.batch_id, id));
      expect(recorded).toBe(sentCount - 1);
      expect(sentCount).toBeLessThan(40);
      // Taken up again: the rest is sent (the line whose result was lost, once more), and the batch completes.
      await runner.run(id);
      expect((await t.database.findOne(gatewayBatches, 'id', id, { fresh: true }))?.status).toBe('completed');
      expect(sentCount).toBe(41);
      await runner.close();
    });

    test('BATCH_CONCURRENCY bounds the lines in flight', async () => {
      await t.database.migrate(MIGRATIONS);
      const id = await createBatch(t.database, 30);
      let inFlight = 0;
      let most = 0;
      const calls: GatewayCalls = {
        resolveConfig: () => ({}),
        async call() {
          most = Math.max(most, ++inFlight);
          await Bun.sleep(2);
          inFlight--;
          return Response.json({ object: 'chat.completion', choices: [] });
        },
      };
      const files = new GatewayFiles({ database: t.database, store: new LocalFileStore(dir) });
      const runner = new BatchRunner({ database: t.database, files, box, logger: silent, calls: () => calls }, { concurrency: 3, leaseMs: 5_000, pollMs: 60_000 });
      await runner.run(id);
      expect(most).toBeLessThanOrEqual(3);
      expect(most).toBeGreaterThan(1);
      expect((await t.database.findOne(gatewayBatches, 'id', id, { fresh: true }))?.completed).toBe(30);
      await runner.close();
    });
  });
}
