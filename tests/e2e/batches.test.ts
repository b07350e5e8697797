// Gateway-run batches (docs/batches.md) through the openai SDK against the local OpenAI server, reached as `vllm`
// (an OpenAI-compatible provider without a native batch API), on SQLite and MariaDB.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { useStack } from '../helpers/e2e-stack.ts';
import { chatLines, jsonl, receivedPerLine, statusOf, uploadBatchFile, waitForBatch } from './batches-helpers.ts';

const VLLM = { 'x-gateway-provider': 'vllm' };
const FILES_DIR = mkdtempSync(join(tmpdir(), 'gw-batch-files-'));
afterAll(() => rmSync(FILES_DIR, { recursive: true, force: true }));

for (const dialect of E2E_DIALECTS) {
  describe(`gateway-run batches (${dialect})`, () => {
    const stack = useStack(dialect, { env: { BATCH_CONCURRENCY: '16', BATCH_POLL_INTERVAL_MS: '200', FILES_DIR } });

    test('1,000 lines with failing ones: every state and timestamp, the counts, the output and error files, each line sent once', async () => {
      const { client, mock, db } = stack();
      const gw = client(VLLM);
      mock.reset();
      const failing = new Set([7, 500, 1000]);
      const input = await uploadBatchFile(gw, chatLines(1000, failing));
      expect(input.purpose).toBe('batch');
      const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
      expect(created).toMatchObject({ object: 'batch', endpoint: '/v1/chat/completions', input_file_id: input.id, completion_window: '24h', metadata: { job: 'nightly' } });
      expect(['validating', 'in_progress']).toContain(created.status);
      expect(created.expires_at).toBe(created.created_at + 24 * 3600);

      const done = await waitForBatch(gw, created.id);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: 1000, completed: 997, failed: 3 });
      for (const at of [done.in_progress_at, done.finalizing_at, done.completed_at]) expect(at).toBeGreaterThanOrEqual(created.created_at);
      expect(done.failed_at ?? null).toBeNull();
      expect(done.cancelled_at ?? null).toBeNull();

      const output = jsonl(await (await gw.files.content(done.output_file_id!)).text());
      expect(output).toHaveLength(997);
      expect(output[0]).toMatchObject({ custom_id: 'req-1', response: { status_code: 200 }, error: null });
      expect((output[0]!.response as { body: { object: string } }).body.object).toBe('chat.completion');
      const errors = jsonl(await (await gw.files.content(done.error_file_id!)).text());
      expect(errors.map((e) => e.custom_id)).toEqual(['req-7', 'req-500', 'req-1000']);
      expect(errors[0]).toMatchObject({ response: { status_code: 404 } });

      const perLine = receivedPerLine(mock.requests);
      expect(perLine.size).toBe(1000);
      expect([...perLine.values()].every((n) => n === 1)).toBe(true);

      // Each line went through the pipeline as the caller's call: one request-log row each, in the batch's trace.
      const spans = `SELECT COUNT(*) AS n FROM request_logs WHERE span_name LIKE 'batch ${created.id} line %'`;
      const deadline = Date.now() + 30_000;
      while (Number((await db.query(spans))[0]!.n) < 1000 && Date.now() < deadline) await Bun.sleep(100);
      expect(Number((await db.query(spans))[0]!.n)).toBe(1000);
    }, 120_000);

    test('files: upload, list, retrieve, content, delete, stored under FILES_DIR', async () => {
      const { client } = stack();
      const gw = client(VLLM);
      const text = chatLines(3);
      const file = await uploadBatchFile(gw, text, 'three.jsonl');
      expect(file).toMatchObject({ object: 'file', filename: 'three.jsonl', purpose: 'batch', bytes: Buffer.byteLength(text), status: 'processed' });
      expect(await gw.files.retrieve(file.id)).toMatchObject({ id: file.id, bytes: file.bytes });
      expect(await (await gw.files.content(file.id)).text()).toBe(text);
      expect((readdirSync(FILES_DIR, { recursive: true }) as string[]).some((p) => p.endsWith(file.id))).toBe(true);
      const listed = await gw.files.list({ purpose: 'batch' });
      expect(listed.data.map((f) => f.id)).toContain(file.id);
      expect(await gw.files.delete(file.id)).toMatchObject({ id: file.id, deleted: true });
      expect(await statusOf(gw.files.retrieve(file.id))).toBe(404);
      expect(await statusOf(gw.files.content(file.id))).toBe(404);
      expect((readdirSync(FILES_DIR, { recursive: true }) as string[]).some((p) => p.endsWith(file.id))).toBe(false);
    });

    test('batch checks: endpoint, completion window, metadata, unknown file, list limit, a malformed input file fails with its line numbers', async () => {
      const { client } = stack();
      const gw = client(VLLM);
      const file = await uploadBatchFile(gw, chatLines(2));
      const base = { input_file_id: file.id, endpoint: '/v1/chat/completions' as const, completion_window: '24h' as const };
      expect(await statusOf(gw.batches.create({ ...base, endpoint: '/v1/nope' as '/v1/chat/completions' }))).toBe(400);
      expect(await statusOf(gw.batches.create({ ...base, completion_window: '1h' as '24h' }))).toBe(400);
      const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
      expect(await statusOf(gw.batches.create({ ...base, metadata }))).toBe(400);
      expect(await statusOf(gw.batches.create({ ...base, metadata: { k: 'x'.repeat(513) } }))).toBe(400);
      expect(await statusOf(gw.batches.create({ ...base, input_file_id: 'file-missing' }))).toBe(400);
      expect(await statusOf(gw.batches.list({ limit: 101 }))).toBe(400);
      expect(await statusOf(gw.batches.list({ limit: 0 }))).toBe(400);

      const bad = `${chatLines(1).trim()}\nnot json\n${JSON.stringify({ custom_id: 'req-1', method: 'POST', url: '/v1/chat/completions', body: {} })}\n${JSON.stringify({ custom_id: 'x', method: 'POST', url: '/v1/embeddings', body: {} })}\n`;
      const badFile = await uploadBatchFile(gw, bad);
      const batch = await gw.batches.create({ ...base, input_file_id: badFile.id });
      const failed = await waitForBatch(gw, batch.id);
      expect(failed.status).toBe('failed');
      expect(failed.failed_at).toBeGreaterThan(0);
      expect(failed.errors?.data?.map((e) => [e.line, e.code])).toEqual([
        [2, 'invalid_json_line'],
        [3, 'duplicate_custom_id'],
        [4, 'mismatched_url'],
      ]);
    });

    test('list: newest first, limit and after, has_more', async () => {
      const { client } = stack();
      const gw = client(VLLM);
      const file = await uploadBatchFile(gw, chatLines(1));
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await gw.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id);
      const page = await gw.batches.list({ limit: 2 });
      expect(page.data).toHaveLength(2);
      expect(page.has_more).toBe(true);
      const all: string[] = [];
      for await (const b of gw.batches.list({ limit: 2 })) all.push(b.id);
      for (const id of ids) expect(all).toContain(id);
      expect(new Set(all).size).toBe(all.length);
      for (const id of ids) await waitForBatch(gw, id);
    });

    test("another workspace's key sees none of the files and batches: 404, and its lists are empty", async () => {
      const { client, gw: proc } = stack();
      const gw = client(VLLM);
      const file = await uploadBatchFile(gw, chatLines(1));
      const batch = await gw.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      await waitForBatch(gw, batch.id);
      const headers = { 'x-gateway-api-key': proc.adminKey, 'content-type': 'application/json' };
      const run = crypto.randomUUID().slice(0, 8);
      const ws = (await (await fetch(`${proc.url}/v1/workspaces`, { method: 'POST', headers, body: JSON.stringify({ name: `Other ${run}`, slug: `other-${run}` }) })).json()) as { id: string };
      const made = await fetch(`${proc.url}/v1/api-keys`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `other ${run}`, type: 'workspace-service', workspace_id: ws.id, scopes: ['completions.write'] }),
      });
      const other = client({ ...VLLM, 'x-gateway-api-key': String(((await made.json()) as { key: string }).key) });
      expect(await statusOf(other.files.retrieve(file.id))).toBe(404);
      expect(await statusOf(other.files.content(file.id))).toBe(404);
      expect(await statusOf(other.files.delete(file.id))).toBe(404);
      expect(await statusOf(other.batches.retrieve(batch.id))).toBe(404);
      expect(await statusOf(other.batches.cancel(batch.id))).toBe(404);
      expect(await statusOf(other.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }))).toBe(400);
      expect((await other.files.list()).data).toEqual([]);
      expect((await other.batches.list()).data).toEqual([]);
      // Still there for its own workspace; a finished batch cannot be cancelled.
      expect((await gw.files.retrieve(file.id)).id).toBe(file.id);
      expect(await statusOf(gw.batches.cancel(batch.id))).toBe(409);
    });
  });
}
