// Batches translated to Bedrock batch inference (docs/batches.md, providers/bedrock/README.md): through the openai SDK
// against the real gateway process on SQLite and MariaDB, the local Bedrock server's control plane and the local
// object store (both check every SigV4 signature): a job completed with one failed record (its output and error files
// translated back to OpenAI's shapes in input order), a stopped one, and another workspace's 404.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type E2EStack, useStack } from '../helpers/e2e-stack.ts';
import { startS3Mock } from '../mocks/s3-server.ts';
import { KEY, REGION, startBedrockServer } from '../providers/bedrock/server.ts';
import { jsonl, statusOf, uploadBatchFile, waitForBatch } from './batches-helpers.ts';

const CLAUDE = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const BUCKET = 'gateway-batch-records';
const ROLE = 'arn:aws:iam::123456789012:role/bedrock-batch';

const FILES_DIR = mkdtempSync(join(tmpdir(), 'gw-bedrock-batch-files-'));
const s3 = startS3Mock({ bucket: BUCKET, region: REGION, accessKeyId: KEY.id, secretAccessKey: KEY.secret });
const bedrock = await startBedrockServer({ s3 });
afterAll(async () => {
  await bedrock.stop();
  await s3.stop();
  rmSync(FILES_DIR, { recursive: true, force: true });
});

const target = (extra: Record<string, unknown> = {}) => ({
  provider: 'bedrock',
  svcA_access_key_id: KEY.id,
  svcA_secret_access_key: KEY.secret,
  svcA_region: REGION,
  svcA_batch_bucket: BUCKET,
  svcA_batch_prefix: 'gateway/',
  svcA_batch_role_arn: ROLE,
  ...extra,
});

const configHeaders = (extra: Record<string, unknown> = {}) => ({ 'x-gateway-provider': null, 'x-gateway-custom-host': null, 'x-gateway-config': JSON.stringify(target(extra)) });

/** Chat lines `req-1…` asking `Question N`; `extra(n)` adds to a line's body. */
function lines(count: number, extra: (n: number) => Record<string, unknown> = () => ({})): string {
  const out: string[] = [];
  for (let n = 1; n <= count; n++)
    out.push(JSON.stringify({ custom_id: `req-${n}`, method: 'POST', url: '/v1/chat/completions', body: { model: CLAUDE, messages: [{ role: 'user', content: `Question ${n}` }], ...extra(n) } }));
  return `${out.join('\n')}\n`;
}

async function otherWorkspaceClient(stack: E2EStack): Promise<OpenAI> {
  const { gw, client } = stack;
  const admin = { 'x-gateway-api-key': gw.adminKey, 'content-type': 'application/json' };
  const run = crypto.randomUUID().slice(0, 8);
  const ws = (await (await fetch(`${gw.url}/v1/workspaces`, { method: 'POST', headers: admin, body: JSON.stringify({ name: `Other ${run}`, slug: `other-${run}` }) })).json()) as { id: string };
  const made = await fetch(`${gw.url}/v1/api-keys`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ name: `other ${run}`, type: 'workspace-service', workspace_id: ws.id, scopes: ['completions.write'] }),
  });
  return client({ ...configHeaders(), 'x-gateway-api-key': String(((await made.json()) as { key: string }).key) });
}

/** The job the local Bedrock server holds for a batch (named after it). */
const jobOf = (batchId: string) => [...bedrock.jobs.values()].find((j) => j.jobName === `gateway-${batchId.replace(/_/g, '-')}`);

for (const dialect of E2E_DIALECTS) {
  describe(`batches on Bedrock batch inference (${dialect})`, () => {
    const stack = useStack(dialect, { env: { FILES_DIR, AWS_ENDPOINT_URL_BEDROCK: bedrock.url, AWS_ENDPOINT_URL_S3: s3.url } });
    const client = () => stack().client(configHeaders());

    test('a job of three records, one refused by Bedrock: states, counts, output and error files in input order', async () => {
      const gw = client();
      // Record 2 asks a temperature Bedrock refuses (above 1): the job ends PartiallyCompleted.
      const input = await uploadBatchFile(gw, lines(3, (n) => (n === 2 ? { temperature: 1.5 } : { max_tokens: 64 })));
      const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { run: 'nightly' } });
      expect(created).toMatchObject({ object: 'batch', status: 'validating', input_file_id: input.id, metadata: { run: 'nightly' }, request_counts: { total: 3 } });

      // The records in the bucket, as Converse bodies; the job created for them.
      const records = jsonl(new TextDecoder().decode(s3.objects.get(`${BUCKET}/gateway/${created.id}/records.jsonl`)));
      expect(records).toEqual([
        { recordId: 'R0000000001', modelInput: { messages: [{ role: 'user', content: [{ text: 'Question 1' }] }], inferenceConfig: { maxTokens: 64 } } },
        { recordId: 'R0000000002', modelInput: { messages: [{ role: 'user', content: [{ text: 'Question 2' }] }], inferenceConfig: { temperature: 1.5 } } },
        { recordId: 'R0000000003', modelInput: { messages: [{ role: 'user', content: [{ text: 'Question 3' }] }], inferenceConfig: { maxTokens: 64 } } },
      ]);
      const job = jobOf(created.id)!;
      expect(job).toMatchObject({ modelId: CLAUDE, roleArn: ROLE, modelInvocationType: 'Converse', timeoutDurationInHours: 24 });
      expect(job.inputDataConfig).toEqual({ s3InputDataConfig: { s3InputFormat: 'JSONL', s3Uri: `s3://${BUCKET}/gateway/${created.id}/records.jsonl` } });

      const seen = new Set<string>();
      const done = await waitForBatch(gw, created.id, (b) => {
        seen.add(b.status);
        return b.status === 'completed';
      });
      expect(seen.has('in_progress')).toBe(true);
      expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
      expect(done.completed_at).toBeNumber();
      expect(done.in_progress_at).toBeNumber();

      const output = jsonl(await (await gw.files.content(done.output_file_id!)).text());
      expect(output.map((l) => l.custom_id)).toEqual(['req-1', 'req-3']);
      for (const line of output) {
        const response = line.response as { status_code: number; body: Record<string, unknown> };
        expect(response.status_code).toBe(200);
        expect(response.body).toMatchObject({ object: 'chat.completion', model: CLAUDE, choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' }] });
        expect(line.error).toBeNull();
      }
      const errors = jsonl(await (await gw.files.content(done.error_file_id!)).text());
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({
        custom_id: 'req-2',
        response: { status_code: 400, body: { error: { message: 'inferenceConfig.temperature must be between 0 and 1', type: 'invalid_request_error' } } },
      });

      // Every S3 and control-plane call was signed with the target's keys (the local servers checked each signature).
      expect(s3.requests.length).toBeGreaterThan(0);
      expect(s3.requests.every((r) => r.headers.authorization?.startsWith(`AWS4-HMAC-SHA256 Credential=${KEY.id}/`))).toBe(true);

      // A final batch is as stored: no further call to Bedrock.
      const calls = bedrock.requests.length;
      expect((await gw.batches.retrieve(created.id)).status).toBe('completed');
      expect(bedrock.requests.length).toBe(calls);
    });

    test('cancel stops the job: cancelling, then cancelled, each request in the error file as batch_cancelled', async () => {
      const gw = client();
      const input = await uploadBatchFile(gw, lines(2));
      const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const cancelling = await gw.batches.cancel(created.id);
      expect(cancelling.status).toBe('cancelling');
      expect(cancelling.cancelling_at).toBeNumber();
      const job = jobOf(created.id)!;
      expect(bedrock.requests.some((r) => r.method === 'POST' && r.path === `/model-invocation-job/${encodeURIComponent(job.jobArn)}/stop`)).toBe(true);
      const done = await waitForBatch(gw, created.id);
      expect(done.status).toBe('cancelled');
      expect(done.cancelled_at).toBeNumber();
      expect(done.output_file_id).toBeNull();
      expect(job.status).toBe('Stopped');
      const errors = jsonl(await (await gw.files.content(done.error_file_id!)).text());
      expect(errors.map((l) => [l.custom_id, l.response, l.error])).toEqual([
        ['req-1', null, { code: 'batch_cancelled', message: 'The batch was cancelled before this request ran.' }],
        ['req-2', null, { code: 'batch_cancelled', message: 'The batch was cancelled before this request ran.' }],
      ]);
    });

    test("another workspace gets 404 for the batch, its cancel and its output file", async () => {
      const gw = client();
      const input = await uploadBatchFile(gw, lines(1));
      const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const done = await waitForBatch(gw, created.id);
      expect(done.status).toBe('completed');
      const other = await otherWorkspaceClient(stack());
      const calls = bedrock.requests.length;
      expect(await statusOf(other.batches.retrieve(created.id))).toBe(404);
      expect(await statusOf(other.batches.cancel(created.id))).toBe(404);
      expect(await statusOf(other.files.content(done.output_file_id!))).toBe(404);
      expect(bedrock.requests.length).toBe(calls);
    });

    test('a target without the batch bucket and role runs in the gateway, line by line through Converse; nothing goes to S3 or the control plane', async () => {
      const gw = stack().client(configHeaders({ svcA_batch_bucket: undefined, svcA_batch_role_arn: undefined, custom_host: bedrock.url }));
      const input = await uploadBatchFile(gw, lines(2));
      const objects = s3.objects.size;
      const jobs = bedrock.jobs.size;
      const created = await gw.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const done = await waitForBatch(gw, created.id);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
      const output = jsonl(await (await gw.files.content(done.output_file_id!)).text());
      expect(output.map((l) => l.custom_id)).toEqual(['req-1', 'req-2']);
      expect(output[0]).toMatchObject({ response: { status_code: 200, body: { object: 'chat.completion', model: CLAUDE } } });
      expect(bedrock.requests.filter((r) => r.path.endsWith('/converse')).length).toBeGreaterThanOrEqual(2);
      expect(s3.objects.size).toBe(objects);
      expect(bedrock.jobs.size).toBe(jobs);
    });
  });
}
