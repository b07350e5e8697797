// A gateway process killed outright (SIGKILL) while batch lines are in flight (docs/batches.md, "Restarts and several
// processes"): it records nothing of those lines, its lease stays until it expires, then a second process takes the
// batch over and sends them again. At most BATCH_CONCURRENCY lines are sent twice, none is lost, and each custom_id is
// in the output file exactly once.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { createE2EDatabase, E2E_DIALECTS, freePort } from '../helpers/e2e-database.ts';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { startOpenAIMock } from '../mocks/openai-server.ts';
import { chatLines, jsonl, receivedPerLine, uploadBatchFile, waitForBatch } from './batches-helpers.ts';

const FILES_DIR = mkdtempSync(join(tmpdir(), 'gw-batch-sigkill-'));
afterAll(() => rmSync(FILES_DIR, { recursive: true, force: true }));

const LINES = 30;
/** The provider answers lines 1..ANSWERED at once and holds every later one open while the first process runs. */
const ANSWERED = 10;
const CONCURRENCY = 3;
const ENV = { BATCH_CONCURRENCY: String(CONCURRENCY), BATCH_POLL_INTERVAL_MS: '100', FILES_DIR };

const lineOf = (body: string) => Number(/"line (\d+)"/.exec(body)?.[1] ?? 0);

for (const dialect of E2E_DIALECTS) {
  describe(`batch lines in flight at a SIGKILL (${dialect})`, () => {
    test('a second process sends the lines in flight again once the lease expires: each line recorded once, only those sent twice', async () => {
      const db = await createE2EDatabase(dialect);
      const mock = await startOpenAIMock({ apiKey: null });
      const started: GatewayProcess[] = [];
      try {
        const adminKey = `gw-test-${crypto.randomUUID()}`;
        const start = async (leaseMs: number) => {
          const gw = await startGatewayProcess({ DATABASE_URL: db.url, PORT: String(await freePort()), GATEWAY_ADMIN_API_KEY: adminKey, BATCH_LEASE_MS: String(leaseMs), ...ENV });
          started.push(gw);
          return gw;
        };
        const clientOf = (gw: GatewayProcess) =>
          new OpenAI({
            baseURL: `${gw.url}/v1`,
            apiKey: 'sk-provider',
            maxRetries: 0,
            timeout: 15_000,
            defaultHeaders: { 'x-gateway-api-key': adminKey, 'x-gateway-provider': 'vllm', 'x-gateway-custom-host': mock.url },
          });

        let holding = true;
        mock.setBehavior((req) => (holding && lineOf(req.body) > ANSWERED ? { kind: 'hang' } : undefined));
        const first = await start(3_000);
        const a = clientOf(first);
        const input = await uploadBatchFile(a, chatLines(LINES));
        const batch = await a.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
        // Every worker of the first process ends up holding one of the lines after ANSWERED: exactly those are in flight.
        await mock.waitForRequests(ANSWERED + CONCURRENCY, 30_000);
        const inFlight = Array.from({ length: CONCURRENCY }, (_, i) => ANSWERED + 1 + i);
        expect(mock.requests.map((r) => lineOf(r.body)).sort((x, y) => x - y)).toEqual(Array.from({ length: ANSWERED + CONCURRENCY }, (_, i) => i + 1));

        first.proc.kill('SIGKILL');
        expect(await first.proc.exited).not.toBe(0);
        holding = false;
        // The dead process still holds the lease, and recorded the lines answered before it, not those in flight.
        const [row] = await db.query(`SELECT status, lease_owner FROM gateway_batches WHERE id = '${batch.id}'`);
        expect(row!.status).toBe('in_progress');
        expect(row!.lease_owner).not.toBeNull();
        const recorded = await db.query(`SELECT line FROM gateway_batch_results WHERE batch_id = '${batch.id}' ORDER BY line`);
        expect(recorded.map((r) => Number(r.line))).toEqual(Array.from({ length: ANSWERED }, (_, i) => i + 1));

        const second = await start(1_000);
        const b = clientOf(second);
        const done = await waitForBatch(b, batch.id);
        expect(done.status).toBe('completed');
        expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
        const output = jsonl(await (await b.files.content(done.output_file_id!)).text());
        expect(output.map((l) => l.custom_id)).toEqual(Array.from({ length: LINES }, (_, i) => `req-${i + 1}`));
        expect(done.error_file_id ?? null).toBeNull();

        // Sent twice: the lines in flight at the kill, and no other; every line reached the provider.
        const perLine = receivedPerLine(mock.requests);
        expect(perLine.size).toBe(LINES);
        expect([...perLine.entries()].filter(([, n]) => n !== 1).sort(([x], [y]) => x - y)).toEqual(inFlight.map((line) => [line, 2]));
        const rows = await db.query(`SELECT COUNT(*) AS n FROM gateway_batch_results WHERE batch_id = '${batch.id}'`);
        expect(Number(rows[0]!.n)).toBe(LINES);
      } finally {
        mock.setBehavior(null);
        for (const gw of started) await gw.stop();
        await mock.stop();
        await db.drop();
      }
    }, 120_000);
  });
}
