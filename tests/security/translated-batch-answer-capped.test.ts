/**
 * A key holder runs a batch translated to Anthropic's Message Batches against a custom host of their own, which
 * accepts the batch and then answers every retrieve with an endless body, hoping the gateway holds it whole (memory
 * exhaustion of the shared process). The provider's answers a translated batch reads are held to FILES_MAX_BYTES:
 * past it the retrieve is a 502 and the gateway stops reading.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useStack } from '../helpers/e2e-stack.ts';
import { uploadBatchFile } from '../e2e/batches-helpers.ts';
import { endlessJson } from './endless-json.ts';

const LIMIT = 1024 * 1024;
const TOTAL = 64 * 1024 * 1024;
const CHUNK = 64 * 1024;
const FILES_DIR = mkdtempSync(join(tmpdir(), 'gw-capped-batch-files-'));

let server: ReturnType<typeof Bun.serve>;
/** Every retrieve's answer: what the gateway read of them all is the sum of their pulled(). */
const answers: ReturnType<typeof endlessJson>[] = [];
const served = () => answers.reduce((sum, a) => sum + a.pulled(), 0);
let retrieves = 0;
beforeAll(() => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => {
      const path = new URL(req.url).pathname;
      const batch = { id: 'msgbatch_endless', type: 'message_batch', processing_status: 'in_progress', request_counts: { processing: 1, succeeded: 0, errored: 0, canceled: 0, expired: 0 }, created_at: new Date().toISOString(), expires_at: new Date(Date.now() + 86_400_000).toISOString(), ended_at: null, cancel_initiated_at: null, archived_at: null, results_url: null };
      if (req.method === 'POST' && path === '/v1/messages/batches') return Response.json(batch);
      retrieves++;
      const answer = endlessJson('{"id":"', TOTAL, CHUNK);
      answers.push(answer);
      return new Response(answer.body, { headers: { 'content-type': 'application/json' } });
    },
  });
});
afterAll(() => {
  server?.stop(true);
  rmSync(FILES_DIR, { recursive: true, force: true });
});

describe('a translated batch whose provider answers an endless body [sqlite]', () => {
  const stack = useStack('sqlite', { env: { FILES_DIR, FILES_MAX_BYTES: String(LIMIT) } });

  test('the retrieve is a 502 after about FILES_MAX_BYTES, not read to its end', async () => {
    const gw = stack().client({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `http://127.0.0.1:${server.port}/v1` });
    const line = JSON.stringify({ custom_id: 'req-1', method: 'POST', url: '/v1/chat/completions', body: { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] } });
    const input = await uploadBatchFile(gw, `${line}\n`);
    const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(created.status).toBe('in_progress');

    const error = (await gw.batches.retrieve(created.id).catch((e: unknown) => e)) as { status?: number; message?: string };
    expect(error.status).toBe(502);
    expect(String(error.message)).toContain('FILES_MAX_BYTES');
    expect(retrieves).toBeGreaterThan(0);
    // Read no further than the limit and what was in flight: well under the 64 MiB the server would send.
    expect(served()).toBeLessThan(16 * 1024 * 1024);
  });
});
