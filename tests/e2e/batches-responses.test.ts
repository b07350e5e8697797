// Gateway-run batches of Responses calls (endpoint /v1/responses, docs/batches.md) through the openai SDK, on SQLite
// and MariaDB: each line goes through the pipeline as POST /v1/responses does, translated for a provider without the
// Responses API (the local Anthropic server) and forwarded to one that speaks it (the local OpenAI server as `groq`).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { useStack } from '../helpers/e2e-stack.ts';
import { type AnthropicTestServer, startAnthropicServer } from '../providers/anthropic/server.ts';
import { jsonl, uploadBatchFile, waitForBatch } from './batches-helpers.ts';

const FILES_DIR = mkdtempSync(join(tmpdir(), 'gw-batch-responses-'));
afterAll(() => rmSync(FILES_DIR, { recursive: true, force: true }));

/** Responses lines; every third asks for a stream, which a batch drops. */
function responsesLines(count: number, model: string): string {
  const lines = Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      custom_id: `resp-${i + 1}`,
      method: 'POST',
      url: '/v1/responses',
      body: { model, instructions: 'Be brief.', input: `line ${i + 1}`, max_output_tokens: 64, ...(i % 3 === 0 ? { stream: true } : {}) },
    }),
  );
  return `${lines.join('\n')}\n`;
}

interface ResponseLine {
  custom_id: string;
  response: { status_code: number; body: { object: string; status: string; output: { type: string; content?: { type: string; text: string }[] }[] } };
}

/** Every line answered 200 with a completed Response holding output text, in input order. */
function expectResponses(output: Record<string, unknown>[], count: number): void {
  const lines = output as unknown as ResponseLine[];
  expect(lines.map((l) => l.custom_id)).toEqual(Array.from({ length: count }, (_, i) => `resp-${i + 1}`));
  for (const { response } of lines) {
    expect(response.status_code).toBe(200);
    expect(response.body.object).toBe('response');
    expect(response.body.status).toBe('completed');
    const message = response.body.output.find((item) => item.type === 'message');
    expect(message?.content?.[0]?.type).toBe('output_text');
    expect(message?.content?.[0]?.text.length).toBeGreaterThan(0);
  }
}

for (const dialect of E2E_DIALECTS) {
  describe(`gateway-run batches of /v1/responses (${dialect})`, () => {
    const stack = useStack(dialect, { env: { BATCH_CONCURRENCY: '4', BATCH_POLL_INTERVAL_MS: '200', FILES_DIR } });
    let anthropic: AnthropicTestServer;
    beforeAll(() => {
      anthropic = startAnthropicServer();
    });
    afterAll(() => anthropic?.stop());

    test('translated: each line a Responses call to the Anthropic Messages API, without stream, one request per line', async () => {
      const { client } = stack();
      const gw = client({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': anthropic.baseUrl });
      anthropic.requests.length = 0;
      const input = await uploadBatchFile(gw, responsesLines(6, 'claude-sonnet-4-5'));
      const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/responses', completion_window: '24h' });
      expect(created.endpoint).toBe('/v1/responses');
      const done = await waitForBatch(gw, created.id);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: 6, completed: 6, failed: 0 });
      expect(done.error_file_id ?? null).toBeNull();
      expectResponses(jsonl(await (await gw.files.content(done.output_file_id!)).text()), 6);

      const sent = anthropic.requests.filter((r) => r.path.endsWith('/messages'));
      expect(sent).toHaveLength(6);
      for (const r of sent) expect((JSON.parse(r.body) as Record<string, unknown>).stream ?? false).toBe(false);
      const inputs = sent.map((r) => /line (\d+)/.exec(r.body)?.[1]).sort((a, b) => Number(a) - Number(b));
      expect(inputs).toEqual(['1', '2', '3', '4', '5', '6']);
    }, 60_000);

    test('native: each line forwarded to a provider that speaks the Responses API, without stream', async () => {
      const { client, mock } = stack();
      // groq: an OpenAI-format provider that speaks Responses itself but keeps no batches (the stack's mock as its host).
      const gw = client({ 'x-gateway-provider': 'groq' });
      mock.reset();
      const input = await uploadBatchFile(gw, responsesLines(5, 'gpt-4o-mini'));
      const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/responses', completion_window: '24h' });
      const done = await waitForBatch(gw, created.id);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: 5, completed: 5, failed: 0 });
      expectResponses(jsonl(await (await gw.files.content(done.output_file_id!)).text()), 5);

      const sent = mock.requests.filter((r) => r.path.endsWith('/responses'));
      expect(sent).toHaveLength(5);
      expect(mock.requests.filter((r) => r.path.endsWith('/chat/completions') || r.path.includes('/batches'))).toEqual([]);
      for (const r of sent) expect((JSON.parse(r.body) as Record<string, unknown>).stream ?? false).toBe(false);
    }, 60_000);

    test('a line whose url is not the batch endpoint fails the batch before any line is sent', async () => {
      const { client } = stack();
      anthropic.requests.length = 0;
      const gw = client({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': anthropic.baseUrl });
      const mixed = `${responsesLines(1, 'claude-sonnet-4-5').trim()}\n${JSON.stringify({ custom_id: 'x', method: 'POST', url: '/v1/chat/completions', body: {} })}\n`;
      const bad = await gw.batches.create({ input_file_id: (await uploadBatchFile(gw, mixed)).id, endpoint: '/v1/responses', completion_window: '24h' });
      const failed = await waitForBatch(gw, bad.id);
      expect(failed.status).toBe('failed');
      expect(failed.errors?.data?.map((e) => [e.line, e.code])).toEqual([[2, 'mismatched_url']]);
      expect(anthropic.requests).toEqual([]);
    }, 60_000);
  });
}
