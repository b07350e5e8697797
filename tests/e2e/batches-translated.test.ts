// Batches translated to the provider's own batch API (docs/batches.md, "Batches run by the provider"): Anthropic's
// Message Batches and Gemini's batch mode, through the openai SDK against the local Anthropic and Gemini servers
// (which speak those wire formats), on SQLite and MariaDB: create, retrieve until done, list, the output and error
// files translated back to OpenAI's shapes in input order, cancel, line checks, and another workspace's 404.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type E2EStack, useStack } from '../helpers/e2e-stack.ts';
import { type AnthropicTestServer, startAnthropicServer } from '../providers/anthropic/server.ts';
import { GEMINI_KEY, type GeminiTestServer, startGeminiServer } from '../providers/google/server.ts';
import { jsonl, statusOf, uploadBatchFile, waitForBatch } from './batches-helpers.ts';

const FILES_DIR = mkdtempSync(join(tmpdir(), 'gw-native-batch-files-'));
let claude: AnthropicTestServer;
let gemini: GeminiTestServer;
beforeAll(() => {
  claude = startAnthropicServer();
  gemini = startGeminiServer();
});
afterAll(async () => {
  await claude?.stop();
  gemini?.stop();
  rmSync(FILES_DIR, { recursive: true, force: true });
});

/** Chat lines `req-1…`, each asking `line N` of `model(n)`; `body(n)` replaces a line's body. */
function lines(count: number, model: (n: number) => string, body: (n: number) => Record<string, unknown> | undefined = () => undefined): string {
  const out: string[] = [];
  for (let n = 1; n <= count; n++)
    out.push(JSON.stringify({ custom_id: `req-${n}`, method: 'POST', url: '/v1/chat/completions', body: body(n) ?? { model: model(n), messages: [{ role: 'user', content: `line ${n}` }], max_tokens: 50 } }));
  return `${out.join('\n')}\n`;
}

const body = (line: Record<string, unknown>) => (line.response as { body: Record<string, unknown> }).body;
const content = (line: Record<string, unknown>) => ((body(line).choices as { message: { content: string } }[])[0] as { message: { content: string } }).message.content;

async function otherWorkspaceClient(stack: E2EStack, headers: Record<string, string>): Promise<OpenAI> {
  const { gw, client } = stack;
  const admin = { 'x-gateway-api-key': gw.adminKey, 'content-type': 'application/json' };
  const run = crypto.randomUUID().slice(0, 8);
  const ws = (await (await fetch(`${gw.url}/v1/workspaces`, { method: 'POST', headers: admin, body: JSON.stringify({ name: `Other ${run}`, slug: `other-${run}` }) })).json()) as { id: string };
  const made = await fetch(`${gw.url}/v1/api-keys`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ name: `other ${run}`, type: 'workspace-service', workspace_id: ws.id, scopes: ['completions.write'] }),
  });
  return client({ ...headers, 'x-gateway-api-key': String(((await made.json()) as { key: string }).key) });
}

for (const dialect of E2E_DIALECTS) {
  describe(`batches translated to the provider's batch API (${dialect})`, () => {
    const stack = useStack(dialect, { env: { FILES_DIR } });
    const anthropic = () => stack().client({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': claude.baseUrl });
    // The Gemini key in the config (the SDK's bearer token is the stack's provider key).
    const google = () =>
      stack().client({
        'x-gateway-provider': null,
        'x-gateway-custom-host': null,
        'x-gateway-config': JSON.stringify({ provider: 'google', api_key: GEMINI_KEY, custom_host: gemini.baseUrl }),
      });

    test('Anthropic: a Message Batch of four lines, one failing: states, counts, translated output and error files in input order', async () => {
      const gw = anthropic();
      claude.batches.hold = false;
      const sent = claude.requests.length;
      const input = await uploadBatchFile(gw, lines(4, (n) => (n === 3 ? 'conformance-error' : 'claude-sonnet-4-5')));
      const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
      expect(created).toMatchObject({ object: 'batch', status: 'in_progress', input_file_id: input.id, metadata: { job: 'nightly' }, request_counts: { total: 4, completed: 0, failed: 0 } });
      expect(created.id).toStartWith('batch_');

      // One Message Batch upstream, each line's body translated to Messages params, the key as x-api-key.
      const creates = claude.requests.slice(sent).filter((r) => r.method === 'POST' && r.path === '/v1/messages/batches');
      expect(creates).toHaveLength(1);
      expect(creates[0]!.headers['x-api-key']).toBe(stack().providerKey);
      expect(creates[0]!.headers['anthropic-version']).toBe('2023-06-01');
      const upstream = JSON.parse(creates[0]!.body) as { requests: { custom_id: string; params: Record<string, unknown> }[] };
      expect(upstream.requests.map((r) => r.custom_id)).toEqual(['req-1', 'req-2', 'req-3', 'req-4']);
      expect(upstream.requests[0]!.params).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'line 1' }] });
      const [link] = await stack().db.query(`SELECT provider, upstream_id FROM gateway_native_batches WHERE id = '${created.id}'`);
      expect(link).toMatchObject({ provider: 'anthropic' });
      expect(claude.batches.all.has(String(link!.upstream_id))).toBe(true);

      const done = await waitForBatch(gw, created.id);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: 4, completed: 3, failed: 1 });
      for (const at of [done.in_progress_at, done.finalizing_at, done.completed_at]) expect(at).toBeGreaterThan(0);

      const output = jsonl(await (await gw.files.content(done.output_file_id!)).text());
      expect(output.map((l) => l.custom_id)).toEqual(['req-1', 'req-2', 'req-4']);
      expect(output[0]).toMatchObject({ response: { status_code: 200 }, error: null });
      expect(body(output[0]!)).toMatchObject({ object: 'chat.completion', model: 'claude-sonnet-4-5', choices: [{ finish_reason: 'stop' }] });
      expect(content(output[0]!)).toBe('You said: line 1');
      expect(content(output[2]!)).toBe('You said: line 4');
      expect(body(output[0]!).usage).toMatchObject({ completion_tokens: 4 });
      const errors = jsonl(await (await gw.files.content(done.error_file_id!)).text());
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ custom_id: 'req-3', response: { status_code: 400, body: { error: { message: 'conformance: bad request', type: 'invalid_request_error' } } } });
      expect((await gw.files.retrieve(done.output_file_id!)).purpose).toBe('batch_output');

      // Ended and recorded: the results were read once, and listing shows the batch as last seen.
      const reads = () => claude.requests.filter((r) => r.path.endsWith(`/${link!.upstream_id}/results`)).length;
      expect(reads()).toBe(1);
      expect((await gw.batches.retrieve(created.id)).status).toBe('completed');
      expect(reads()).toBe(1);
      const listed = (await gw.batches.list()).data.find((b) => b.id === created.id);
      expect(listed?.status).toBe('completed');
    }, 60_000);

    test('Anthropic: cancel a running batch; it ends cancelled with each line in the error file as batch_cancelled', async () => {
      const gw = anthropic();
      claude.batches.hold = true;
      try {
        const input = await uploadBatchFile(gw, lines(2, () => 'claude-sonnet-4-5'));
        const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
        expect((await gw.batches.retrieve(created.id)).status).toBe('in_progress');
        const cancelling = await gw.batches.cancel(created.id);
        expect(cancelling.status).toBe('cancelling');
        expect(cancelling.cancelling_at).toBeGreaterThan(0);
        expect(claude.requests.some((r) => r.method === 'POST' && /^\/v1\/messages\/batches\/msgbatch_\w+\/cancel$/.test(r.path))).toBe(true);
        const done = await waitForBatch(gw, created.id);
        expect(done.status).toBe('cancelled');
        expect(done.cancelled_at).toBeGreaterThan(0);
        expect(done.output_file_id ?? null).toBeNull();
        const errors = jsonl(await (await gw.files.content(done.error_file_id!)).text());
        expect(errors.map((e) => [e.custom_id, (e.error as { code: string }).code, e.response])).toEqual([
          ['req-1', 'batch_cancelled', null],
          ['req-2', 'batch_cancelled', null],
        ]);
        expect(await statusOf(gw.batches.cancel(created.id))).toBe('resolved');
      } finally {
        claude.batches.hold = false;
      }
    }, 60_000);

    test('Anthropic: a custom_id Anthropic refuses fails the batch before anything is sent', async () => {
      const gw = anthropic();
      const sent = claude.requests.length;
      const input = await uploadBatchFile(gw, `${JSON.stringify({ custom_id: 'has space', method: 'POST', url: '/v1/chat/completions', body: { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] } })}\n`);
      const batch = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      expect(batch.status).toBe('failed');
      expect(batch.errors?.data?.map((e) => [e.line, e.code])).toEqual([[1, 'invalid_custom_id']]);
      expect(claude.requests.length).toBe(sent);
    });

    test('Gemini: an inlined batch of three lines, one refused by Gemini: translated output and error files, states and counts', async () => {
      const gw = google();
      gemini.batches.hold = false;
      const sent = gemini.requests.length;
      const input = await uploadBatchFile(
        gw,
        lines(
          3,
          () => 'gemini-2.5-flash',
          // Only a system message: Gemini refuses a request without contents.
          (n) => (n === 2 ? { model: 'gemini-2.5-flash', messages: [{ role: 'system', content: 'line 2' }] } : undefined),
        ),
      );
      const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      expect(created.status).toBe('validating');
      const creates = gemini.requests.slice(sent).filter((r) => r.path === '/v1beta/models/gemini-2.5-flash:batchGenerateContent');
      expect(creates).toHaveLength(1);
      expect(creates[0]!.headers['x-goog-api-key']).toBe(GEMINI_KEY);
      const upstream = JSON.parse(creates[0]!.body) as { batch: { displayName: string; inputConfig: { requests: { requests: { request: Record<string, unknown>; metadata: { key: string } }[] } } } };
      expect(upstream.batch.displayName).toBe(created.id);
      expect(upstream.batch.inputConfig.requests.requests.map((r) => r.metadata.key)).toEqual(['req-1', 'req-2', 'req-3']);
      expect(upstream.batch.inputConfig.requests.requests[0]!.request).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'line 1' }] }], generationConfig: { maxOutputTokens: 50 } });

      expect((await gw.batches.retrieve(created.id)).status).toBe('in_progress');
      const done = await waitForBatch(gw, created.id);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
      const output = jsonl(await (await gw.files.content(done.output_file_id!)).text());
      expect(output.map((l) => l.custom_id)).toEqual(['req-1', 'req-3']);
      expect(body(output[0]!)).toMatchObject({ object: 'chat.completion', model: 'gemini-2.5-flash' });
      expect(content(output[0]!)).toBe('You said: line 1');
      expect(content(output[1]!)).toBe('You said: line 3');
      const errors = jsonl(await (await gw.files.content(done.error_file_id!)).text());
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ custom_id: 'req-2', response: { status_code: 400, body: { error: { code: 'INVALID_ARGUMENT' } } } });
      expect(String((body(errors[0]!).error as { message: string }).message)).toContain('contents is not specified');
    }, 60_000);

    test('Gemini: cancel a running batch; lines naming different models fail the batch before anything is sent', async () => {
      const gw = google();
      gemini.batches.hold = true;
      try {
        const input = await uploadBatchFile(gw, lines(2, () => 'gemini-2.5-flash'));
        const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
        const cancelled = await gw.batches.cancel(created.id);
        expect(cancelled.status).toBe('cancelled');
        expect(cancelled.cancelled_at).toBeGreaterThan(0);
        expect(gemini.requests.some((r) => r.method === 'POST' && /^\/v1beta\/batches\/\w+:cancel$/.test(r.path))).toBe(true);
        expect(await statusOf(gw.batches.cancel(created.id))).toBe('resolved');
      } finally {
        gemini.batches.hold = false;
      }
      const sent = gemini.requests.length;
      const mixed = await uploadBatchFile(gw, lines(2, (n) => (n === 1 ? 'gemini-2.5-flash' : 'gemini-2.5-pro')));
      const failed = await gw.batches.create({ input_file_id: mixed.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      expect(failed.status).toBe('failed');
      expect(failed.errors?.data?.map((e) => [e.line, e.code])).toEqual([[2, 'mismatched_model']]);
      expect(gemini.requests.length).toBe(sent);
    }, 60_000);

    test("a provider that refuses the batch: the create fails with the provider's status and message, and no batch is kept", async () => {
      const wrongKey = stack().client({
        'x-gateway-provider': null,
        'x-gateway-custom-host': null,
        'x-gateway-config': JSON.stringify({ provider: 'google', api_key: 'not-the-key', custom_host: gemini.baseUrl }),
      });
      const input = await uploadBatchFile(wrongKey, lines(1, () => 'gemini-2.5-flash'));
      const before = (await stack().db.query('SELECT COUNT(*) AS n FROM gateway_batches'))[0]!.n;
      const error = (await wrongKey.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' }).catch((e: unknown) => e)) as {
        status: number;
        message: string;
      };
      expect(error.status).toBe(400);
      expect(error.message).toContain('API key not valid');
      expect((await stack().db.query('SELECT COUNT(*) AS n FROM gateway_batches'))[0]!.n).toBe(before);
    });

    test('an endpoint the translator does not take (embeddings to Gemini) runs in the gateway, line by line', async () => {
      const gw = google();
      const sent = gemini.requests.length;
      const line = (n: number) => JSON.stringify({ custom_id: `e-${n}`, method: 'POST', url: '/v1/embeddings', body: { model: 'text-embedding-004', input: `text ${n}` } });
      const input = await uploadBatchFile(gw, `${line(1)}\n${line(2)}\n`);
      const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/embeddings', completion_window: '24h' });
      const done = await waitForBatch(gw, created.id);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
      const paths = gemini.requests.slice(sent).map((r) => r.path);
      expect(paths.filter((p) => p.endsWith(':batchEmbedContents'))).toHaveLength(2);
      expect(paths.some((p) => p.includes(':batchGenerateContent'))).toBe(false);
      expect(await stack().db.query(`SELECT id FROM gateway_native_batches WHERE id = '${created.id}'`)).toEqual([]);
    }, 60_000);

    test('a config with a targets list (the opt-out) runs a chat batch for Anthropic in the gateway, line by line', async () => {
      const gw = stack().client({
        'x-gateway-provider': null,
        'x-gateway-custom-host': null,
        'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ provider: 'anthropic', api_key: 'sk-ant-x', custom_host: claude.baseUrl }] }),
      });
      const sent = claude.requests.length;
      const input = await uploadBatchFile(gw, lines(2, () => 'claude-sonnet-4-5'));
      const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const done = await waitForBatch(gw, created.id);
      expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
      const paths = claude.requests.slice(sent).map((r) => r.path);
      expect(paths).toEqual(['/v1/messages', '/v1/messages']);
      expect(content(jsonl(await (await gw.files.content(done.output_file_id!)).text())[0]!)).toBe('You said: line 1');
    }, 60_000);

    test("another workspace's key gets 404 for a translated batch, and its list is empty", async () => {
      const gw = anthropic();
      claude.batches.hold = true;
      try {
        const input = await uploadBatchFile(gw, lines(1, () => 'claude-sonnet-4-5'));
        const batch = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
        const other = await otherWorkspaceClient(stack(), { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': claude.baseUrl });
        const calls = claude.requests.length;
        expect(await statusOf(other.batches.retrieve(batch.id))).toBe(404);
        expect(await statusOf(other.batches.cancel(batch.id))).toBe(404);
        expect((await other.batches.list()).data).toEqual([]);
        expect(claude.requests.length).toBe(calls);
        expect((await gw.batches.retrieve(batch.id)).status).toBe('in_progress');
        await gw.batches.cancel(batch.id);
      } finally {
        claude.batches.hold = false;
      }
    }, 60_000);
  });
}
