// Gateway-run batches cancelled mid-way, and a gateway process stopped mid-way whose batch another process (or the
// same one restarted) finishes without sending a line twice: the lease and the recorded lines (docs/batches.md).
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { freePort } from '../helpers/e2e-database.ts';
import { useStack } from '../helpers/e2e-stack.ts';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { chatLines, jsonl, receivedPerLine, uploadBatchFile, waitForBatch } from './batches-helpers.ts';

const FILES_DIR = mkdtempSync(join(tmpdir(), 'gw-batch-files-'));
afterAll(() => rmSync(FILES_DIR, { recursive: true, force: true }));
// Slow enough lines (the mock waits 5 ms each, 4 at a time) that a batch is still running when the test acts.
const ENV = { BATCH_CONCURRENCY: '4', BATCH_POLL_INTERVAL_MS: '100', BATCH_LEASE_MS: '3000', FILES_DIR };
const CREATE = { endpoint: '/v1/chat/completions', completion_window: '24h' } as const;

for (const dialect of E2E_DIALECTS) {
  describe(`batch lifecycle (${dialect})`, () => {
    const stack = useStack(dialect, { env: ENV });

    test('cancelled mid-way: cancelling then cancelled with its timestamps, the finished lines in the output file, the rest never sent', async () => {
      const { client, mock } = stack();
      const gw = client({ 'x-gateway-provider': 'vllm' });
      mock.reset();
      mock.setBehavior({ kind: 'default', delayMs: 5 });
      const input = await uploadBatchFile(gw, chatLines(1000));
      const batch = await gw.batches.create({ input_file_id: input.id, ...CREATE });
      await waitForBatch(gw, batch.id, (b) => (b.request_counts?.completed ?? 0) >= 40);
      const cancelling = await gw.batches.cancel(batch.id);
      expect(['cancelling', 'cancelled']).toContain(cancelling.status);
      expect(cancelling.cancelling_at).toBeGreaterThanOrEqual(batch.created_at);
      const cancelled = await waitForBatch(gw, batch.id);
      mock.setBehavior(null);
      expect(cancelled.status).toBe('cancelled');
      expect(cancelled.cancelled_at).toBeGreaterThanOrEqual(cancelled.cancelling_at!);
      expect(cancelled.completed_at ?? null).toBeNull();
      const { completed, failed, total } = cancelled.request_counts!;
      expect(total).toBe(1000);
      expect(failed).toBe(0);
      expect(completed).toBeGreaterThanOrEqual(40);
      expect(completed).toBeLessThan(1000);
      const output = jsonl(await (await gw.files.content(cancelled.output_file_id!)).text());
      expect(output).toHaveLength(completed);
      const perLine = receivedPerLine(mock.requests);
      expect(perLine.size).toBe(completed);
      expect([...perLine.values()].every((n) => n === 1)).toBe(true);
      // A cancelled batch stays so; a second cancel answers it as it is.
      expect((await gw.batches.cancel(batch.id)).status).toBe('cancelled');
    }, 60_000);

    test('a gateway stopped mid-way: a second process takes the batch over when the lease is given back, each line sent once', async () => {
      const { mock, db, gw: first, providerKey } = stack();
      mock.reset();
      mock.setBehavior({ kind: 'default', delayMs: 5 });
      const started: GatewayProcess[] = [];
      try {
        const clientOf = (gw: GatewayProcess) =>
          new OpenAI({
            baseURL: `${gw.url}/v1`,
            apiKey: providerKey,
            maxRetries: 0,
            timeout: 15_000,
            defaultHeaders: { 'x-gateway-api-key': gw.adminKey, 'x-gateway-provider': 'vllm', 'x-gateway-custom-host': mock.url },
          });
        // A second process on the same database and file store, up before the first one stops.
        const second = await startGatewayProcess({ DATABASE_URL: db.url, PORT: String(await freePort()), GATEWAY_ADMIN_API_KEY: first.adminKey, ...ENV });
        started.push(second);
        const a = clientOf(first);
        const input = await uploadBatchFile(a, chatLines(1000));
        const batch = await a.batches.create({ input_file_id: input.id, ...CREATE });
        await waitForBatch(a, batch.id, (b) => (b.request_counts?.completed ?? 0) >= 100);
        expect(await first.stop()).toBe(0);
        const b = clientOf(second);
        // Stopped mid-way: the first process had not finished it.
        expect((await b.batches.retrieve(batch.id)).request_counts!.completed).toBeLessThan(1000);
        const done = await waitForBatch(b, batch.id);
        expect(done.status).toBe('completed');
        expect(done.request_counts).toEqual({ total: 1000, completed: 1000, failed: 0 });
        expect(jsonl(await (await b.files.content(done.output_file_id!)).text()).map((l) => l.custom_id)).toEqual(
          Array.from({ length: 1000 }, (_, i) => `req-${i + 1}`),
        );
        const perLine = receivedPerLine(mock.requests);
        expect(perLine.size).toBe(1000);
        expect([...perLine.entries()].filter(([, n]) => n !== 1)).toEqual([]);
        // The first process really ran part of it: the second one did not start from the beginning.
        const owners = await db.query(`SELECT lease_owner FROM gateway_batches WHERE id = '${batch.id}'`);
        expect(owners[0]!.lease_owner).toBeNull();
      } finally {
        mock.setBehavior(null);
        for (const gw of started) await gw.stop();
      }
    }, 90_000);

    test('the only gateway restarted mid-way: the new process resumes from the recorded lines and finishes, each line sent once', async () => {
      const { mock, db, providerKey, gw: stackGateway } = stack();
      // Alone on the database: the stack's own process is stopped (the previous test stopped it already).
      await stackGateway.stop();
      mock.reset();
      mock.setBehavior({ kind: 'default', delayMs: 5 });
      const started: GatewayProcess[] = [];
      const start = async () => {
        const gw = await startGatewayProcess({ DATABASE_URL: db.url, PORT: String(await freePort()), ...ENV });
        started.push(gw);
        return gw;
      };
      const clientOf = (gw: GatewayProcess) =>
        new OpenAI({
          baseURL: `${gw.url}/v1`,
          apiKey: providerKey,
          maxRetries: 0,
          timeout: 15_000,
          defaultHeaders: { 'x-gateway-api-key': gw.adminKey, 'x-gateway-provider': 'vllm', 'x-gateway-custom-host': mock.url },
        });
      try {
        const before = await start();
        const a = clientOf(before);
        const input = await uploadBatchFile(a, chatLines(1000));
        const batch = await a.batches.create({ input_file_id: input.id, ...CREATE });
        await waitForBatch(a, batch.id, (b) => (b.request_counts?.completed ?? 0) >= 100);
        expect(await before.stop()).toBe(0);
        const [stopped] = await db.query(`SELECT status, lease_owner FROM gateway_batches WHERE id = '${batch.id}'`);
        expect(stopped).toEqual({ status: 'in_progress', lease_owner: null });
        const recorded = Number((await db.query(`SELECT COUNT(*) AS n FROM gateway_batch_results WHERE batch_id = '${batch.id}'`))[0]!.n);
        expect(recorded).toBeGreaterThanOrEqual(100);
        expect(recorded).toBeLessThan(1000);
        expect(receivedPerLine(mock.requests).size).toBe(recorded);

        const after = await start();
        const done = await waitForBatch(clientOf(after), batch.id);
        expect(done.status).toBe('completed');
        expect(done.request_counts).toEqual({ total: 1000, completed: 1000, failed: 0 });
        const perLine = receivedPerLine(mock.requests);
        expect(perLine.size).toBe(1000);
        expect([...perLine.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      } finally {
        mock.setBehavior(null);
        for (const gw of started) await gw.stop();
      }
    }, 90_000);
  });
}
