/**
 * The Bedrock batch translator against the local Bedrock server's batch inference control plane and the local object
 * store, both of which check every SigV4 signature (service bedrock and s3): the records uploaded, the job created,
 * its states mapped, a stop, and the output records translated back into OpenAI batch lines.
 */
import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import { GatewayError, type JsonObject, type NativeBatchContext, type NativeBatchLine, type NativeBatchResult, type TargetConfig } from '@gateway/sdk';
import { KEY, REGION, startBedrockServer } from '../../../tests/providers/bedrock/server.ts';
import { startS3Mock } from '../../../tests/mocks/s3-server.ts';
import { createSigner } from './auth.ts';
import { bedrockBatches, jobStatus, notRun } from './batch.ts';

const CLAUDE = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const ROLE = 'arn:aws:iam::123456789012:role/bedrock-batch';
const BUCKET = 'gateway-batches';

const s3 = startS3Mock({ bucket: BUCKET, region: REGION, accessKeyId: KEY.id, secretAccessKey: KEY.secret });
const bedrock = await startBedrockServer({ s3 });
afterAll(async () => {
  await bedrock.stop();
  await s3.stop();
});
beforeEach(() => {
  bedrock.requests.length = 0;
  s3.requests.length = 0;
});

const translator = bedrockBatches(createSigner(), { bedrock: bedrock.url, s3: s3.url });

const target = (extra: Record<string, unknown> = {}): TargetConfig =>
  ({
    provider: 'bedrock',
    svcA_access_key_id: KEY.id,
    svcA_secret_access_key: KEY.secret,
    svcA_region: REGION,
    svcA_batch_bucket: BUCKET,
    svcA_batch_prefix: 'jobs',
    svcA_batch_role_arn: ROLE,
    ...extra,
  }) as TargetConfig;

const ctx = (t: TargetConfig = target()): NativeBatchContext => ({
  target: t,
  endpoint: '/v1/chat/completions',
  strictWireCompliance: true,
  send: () => Promise.reject(new Error('the Bedrock translator makes its own calls')),
});

const line = (n: number, body: JsonObject = {}): NativeBatchLine => ({
  line: n,
  customId: `req-${n}`,
  body: { model: CLAUDE, messages: [{ role: 'user', content: `Question number ${n}` }], ...body },
});

async function collect(results: AsyncIterable<NativeBatchResult>): Promise<NativeBatchResult[]> {
  const out: NativeBatchResult[] = [];
  for await (const r of results) out.push(r);
  return out;
}

describe('a batch through Bedrock batch inference', () => {
  test('records uploaded, job created as Converse, states followed, one failed record in the results', async () => {
    // Line 3 asks a temperature Bedrock refuses (above 1): its record fails, the others are answered.
    const lines = [line(1), line(3, { temperature: 1.5, stream: true }), line(4)];
    expect(translator.check?.(lines, ctx())).toEqual([]);
    const created = await translator.create(lines, ctx(), { batchId: 'batch_abc123', completionWindow: '24h', metadata: null });
    expect(created.status).toBe('validating');
    expect(created.id).toMatch(/^arn:aws:bedrock:us-east-1:123456789012:model-invocation-job\/[a-z0-9]{12}$/);

    const records = new TextDecoder()
      .decode(s3.objects.get(`${BUCKET}/jobs/batch_abc123/records.jsonl`))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records.map((r) => r.recordId)).toEqual(['R0000000001', 'R0000000002', 'R0000000003']);
    expect(records[0].modelInput).toEqual({ messages: [{ role: 'user', content: [{ text: 'Question number 1' }] }] });
    expect(records[1].modelInput).toEqual({ messages: [{ role: 'user', content: [{ text: 'Question number 3' }] }], inferenceConfig: { temperature: 1.5 } });

    const createCall = bedrock.requests.find((r) => r.method === 'POST' && r.path === '/model-invocation-job');
    expect(JSON.parse(createCall!.body)).toEqual({
      jobName: 'gateway-batch-abc123',
      roleArn: ROLE,
      clientRequestToken: 'batchabc123',
      modelId: CLAUDE,
      modelInvocationType: 'Converse',
      inputDataConfig: { s3InputDataConfig: { s3InputFormat: 'JSONL', s3Uri: `s3://${BUCKET}/jobs/batch_abc123/records.jsonl` } },
      outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${BUCKET}/jobs/batch_abc123/output/` } },
      timeoutDurationInHours: 24,
    });
    expect(s3.requests.every((r) => r.headers.authorization?.includes('/us-east-1/s3/aws4_request'))).toBe(true);
    expect(createCall!.headers.authorization).toContain('/us-east-1/bedrock/aws4_request');

    // The local server moves a job one step per read: Validating, InProgress, then done.
    const states = [];
    for (let i = 0; i < 3; i++) states.push(await translator.retrieve(created.id, ctx(), created.ref));
    expect(states.map((s) => s.status)).toEqual(['validating', 'in_progress', 'completed']);
    expect(states[2]!.counts).toEqual({ total: 3, completed: 2, failed: 1 });
    expect(typeof states[2]!.at?.completed_at).toBe('number');

    const results = await collect(translator.results(created.id, ctx(), created.ref, ['req-1', 'req-3', 'req-4']));
    const byId = new Map(results.map((r) => [r.customId, r]));
    expect([...byId.keys()].sort()).toEqual(['req-1', 'req-3', 'req-4']);
    const ok = byId.get('req-1')!.response!;
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toMatchObject({ object: 'chat.completion', model: CLAUDE, choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' }] });
    expect((ok.body.usage as JsonObject).prompt_tokens).toBeGreaterThan(0);
    const failed = byId.get('req-3')!.response!;
    expect(failed.statusCode).toBe(400);
    expect(failed.body).toEqual({ error: { message: 'inferenceConfig.temperature must be between 0 and 1', type: 'invalid_request_error', param: null, code: null } });
  });

  test('cancel stops the job: cancelling, then cancelled, and every request reported as cancelled', async () => {
    const created = await translator.create([line(1), line(2)], ctx(), { batchId: 'batch_stop1', completionWindow: '24h', metadata: null });
    const cancelling = await translator.cancel(created.id, ctx(), created.ref);
    expect(cancelling.status).toBe('cancelling');
    expect(bedrock.requests.some((r) => r.method === 'POST' && r.path === `/model-invocation-job/${encodeURIComponent(created.id)}/stop`)).toBe(true);
    const stopped = await translator.retrieve(created.id, ctx(), created.ref);
    expect(stopped.status).toBe('cancelled');
    const cancelled = { code: 'batch_cancelled', message: 'The batch was cancelled before this request ran.' };
    expect(await collect(translator.results(created.id, ctx(), created.ref, ['req-1', 'req-2']))).toEqual([
      { customId: 'req-1', error: cancelled },
      { customId: 'req-2', error: cancelled },
    ]);
  });

  test('a refusal of the control plane is the provider error, with its status and message', async () => {
    const error = await translator.create([line(1)], ctx(target({ svcA_batch_role_arn: 'not-a-role' })), { batchId: 'batch_bad1', completionWindow: '24h', metadata: null }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(400);
    expect((error as GatewayError).message).toContain("CreateModelInvocationJob: Value at 'roleArn' failed to satisfy constraint");
  });

  test('a wrong secret: S3 refuses the upload (403) and no job is created', async () => {
    const error = await translator.create([line(1)], ctx(target({ svcA_secret_access_key: 'wrong' })), { batchId: 'batch_bad2', completionWindow: '24h', metadata: null }).catch((e: unknown) => e);
    expect((error as GatewayError).status).toBe(403);
    expect(bedrock.requests.some((r) => r.path === '/model-invocation-job')).toBe(false);
  });
});

describe('check', () => {
  test('every line must name the first line\'s model, and translate to Converse', () => {
    const errors = translator.check?.([line(1), line(2, { model: 'meta.llama3-70b-instruct-v1:0' }), line(5, { n: 3 })], ctx());
    expect(errors).toEqual([
      { line: 2, code: 'invalid_request', message: `A Bedrock batch inference job runs one model: this line names meta.llama3-70b-instruct-v1:0, the first ${CLAUDE}`, param: 'body.model' },
      { line: 5, code: 'invalid_request', message: 'Bedrock returns one choice per call; n must be 1', param: 'body.n' },
    ]);
  });

  test('without the bucket or the role, a 400 naming them', () => {
    const t = target({ svcA_batch_bucket: undefined, svcA_batch_role_arn: undefined });
    expect(() => translator.check?.([line(1)], ctx(t))).toThrow('Bedrock batch inference needs svcA_batch_bucket and svcA_batch_role_arn');
  });
});

describe('jobStatus', () => {
  test.each([
    ['Submitted', 'validating'],
    ['Validating', 'validating'],
    ['Scheduled', 'in_progress'],
    ['InProgress', 'in_progress'],
    ['Completed', 'completed'],
    ['PartiallyCompleted', 'completed'],
    ['Stopping', 'cancelling'],
    ['Stopped', 'cancelled'],
    ['Expired', 'expired'],
    ['Failed', 'failed'],
  ])('%s is %s', (status, expected) => {
    expect(jobStatus({ status }).status).toBe(expected as never);
  });

  test('a failed job: its message as the batch error, its end time as failed_at', () => {
    expect(jobStatus({ status: 'Failed', message: 'The role cannot read the bucket', endTime: '2026-01-02T03:04:05Z' })).toEqual({
      status: 'failed',
      at: { failed_at: Date.parse('2026-01-02T03:04:05Z') / 1000 },
      errors: [{ line: 0, code: 'batch_failed', message: 'The role cannot read the bucket', param: null }],
    });
  });

  test('a request an ended job did not run: cancelled, expired or failed, as the job ended', () => {
    expect(notRun({ status: 'Stopped' }).code).toBe('batch_cancelled');
    expect(notRun({ status: 'Expired' })).toEqual({ code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' });
    expect(notRun({ status: 'Failed', message: 'The role cannot read the bucket' })).toEqual({ code: 'batch_failed', message: 'The role cannot read the bucket' });
  });

  test('an unknown status is an invalid answer (502)', () => {
    expect(() => jobStatus({ status: 'Dreaming' })).toThrow('unknown status');
  });
});
