// Nebius speaks OpenAI's files, batches and fine-tuning APIs at the same paths and in the same shape (its docs use the
// openai SDK at https://api.studio.nebius.com/v1): its adapter declares them (`nativeJobs`), so through the gateway
// they are forwarded to Nebius, checked first, instead of kept by the gateway or refused (docs/batches.md). Against
// the local OpenAI server as Nebius's host, through the openai SDK.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Gateway } from '@gateway/server';
import OpenAI, { toFile } from 'openai';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type Behavior, type OpenAIMock, type RecordedRequest, startOpenAIMock } from '../mocks/openai-server.ts';
import { statusOf } from './batches-helpers.ts';

const NEBIUS_KEY = 'sk-nebius-0123456789abcdef';
const FILES_DIR = mkdtempSync(join(tmpdir(), 'gw-nebius-files-'));

// A job as Nebius's API reference shows one: OpenAI's fields, and Nebius's own hyperparameters (learning_rate, LoRA).
const HYPERPARAMETERS = { batch_size: 8, learning_rate: 0.00001, n_epochs: 3, lora: true, lora_r: 8, lora_alpha: 8 };
const JOB = {
  id: 'ftjob-nebius1',
  object: 'fine_tuning.job',
  created_at: 1730723835,
  model: 'meta-llama/Llama-3.1-8B-Instruct',
  status: 'validating_files',
  training_file: 'file-123',
  hyperparameters: HYPERPARAMETERS,
  result_files: [],
  seed: 42,
  trained_steps: 0,
  total_steps: 120,
};
const BATCH = { id: 'batch_123', object: 'batch', endpoint: '/v1/chat/completions', input_file_id: 'file-123', completion_window: '24h', status: 'validating', created_at: 1730723835 };

function nebiusApi(req: RecordedRequest): Behavior | undefined {
  const page = (data: unknown[]) => ({ kind: 'respond' as const, body: { object: 'list', data, has_more: false } });
  if (req.path === '/v1/fine_tuning/jobs' && req.method === 'POST') return { kind: 'respond', body: { ...JOB, ...(JSON.parse(req.body) as object) } };
  if (req.path === '/v1/fine_tuning/jobs' && req.method === 'GET') return page([JOB]);
  if (req.path === '/v1/fine_tuning/jobs/ftjob-nebius1' && req.method === 'GET') return { kind: 'respond', body: JOB };
  if (req.path === '/v1/fine_tuning/jobs/ftjob-nebius1/cancel') return { kind: 'respond', body: { ...JOB, status: 'cancelled' } };
  if (req.path === '/v1/batches' && req.method === 'POST') return { kind: 'respond', body: { ...BATCH, ...(JSON.parse(req.body) as object) } };
  return undefined;
}

let gateway: Gateway;
let mock: OpenAIMock;
let client: OpenAI;
beforeAll(async () => {
  mock = await startOpenAIMock({ apiKey: NEBIUS_KEY });
  gateway = await startInProcessGateway({ FILES_DIR });
  client = new OpenAI({
    baseURL: 'http://gateway.test/v1',
    apiKey: NEBIUS_KEY,
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-provider': 'nebius', 'x-gateway-custom-host': mock.url },
    fetch: (url: string | URL | Request, init?: RequestInit) =>
      gateway.handle(url instanceof Request ? new Request(url, init) : new Request(url instanceof URL ? url.href : url, init)),
  });
}, 30_000);
afterAll(async () => {
  await gateway?.close();
  await mock?.stop();
  rmSync(FILES_DIR, { recursive: true, force: true });
});

describe('nebius: files, batches and fine-tuning forwarded to the provider', () => {
  test('fine-tuning: create (with Nebius hyperparameters), list, retrieve and cancel reach Nebius with its key and come back unchanged', async () => {
    mock.reset();
    mock.setBehavior(nebiusApi);
    const job = await client.fineTuning.jobs.create({
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      training_file: 'file-123',
      seed: 42,
      hyperparameters: HYPERPARAMETERS as OpenAI.FineTuning.JobCreateParams.Hyperparameters,
    });
    expect(job).toMatchObject({ id: 'ftjob-nebius1', object: 'fine_tuning.job', status: 'validating_files' });
    expect((await client.fineTuning.jobs.list({ limit: 5 })).data[0]!.id).toBe('ftjob-nebius1');
    expect((await client.fineTuning.jobs.retrieve('ftjob-nebius1')).model).toBe('meta-llama/Llama-3.1-8B-Instruct');
    expect((await client.fineTuning.jobs.cancel('ftjob-nebius1')).status).toBe('cancelled');
    expect(mock.requests.map((r) => `${r.method} ${r.path}${r.search}`)).toEqual([
      'POST /v1/fine_tuning/jobs',
      'GET /v1/fine_tuning/jobs?limit=5',
      'GET /v1/fine_tuning/jobs/ftjob-nebius1',
      'POST /v1/fine_tuning/jobs/ftjob-nebius1/cancel',
    ]);
    expect(JSON.parse(mock.requests[0]!.body)).toEqual({ model: 'meta-llama/Llama-3.1-8B-Instruct', training_file: 'file-123', seed: 42, hyperparameters: HYPERPARAMETERS });
    expect(mock.requests.every((r) => r.headers.authorization === `Bearer ${NEBIUS_KEY}`)).toBe(true);
  });

  test("fine-tuning is checked before anything is sent", async () => {
    mock.reset();
    mock.setBehavior(nebiusApi);
    expect(await statusOf(client.fineTuning.jobs.create({ model: 'm', training_file: 'f', hyperparameters: { n_epochs: 0 } }))).toBe(400);
    expect(await statusOf(client.fineTuning.jobs.create({ model: 'm' } as OpenAI.FineTuning.JobCreateParams))).toBe(400);
    expect(mock.requests).toEqual([]);
  });

  test('a training file and a batch are Nebius\'s: the upload and the batch go to Nebius, whose ids come back', async () => {
    mock.reset();
    mock.setBehavior(nebiusApi);
    const file = await client.files.create({ file: await toFile(Buffer.from('{"messages": []}\n'), 'train.jsonl'), purpose: 'fine-tune' });
    expect(file.purpose).toBe('fine-tune');
    expect((await client.files.retrieve(file.id)).id).toBe(file.id);
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(batch).toMatchObject({ id: 'batch_123', input_file_id: file.id });
    expect(mock.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/files', `GET /v1/files/${file.id}`, 'POST /v1/batches']);
  });
});
