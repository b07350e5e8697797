// Files, batches and fine-tuning forwarded to a provider that keeps them itself (OpenAI: `nativeJobs`), through the
// openai SDK and the local OpenAI server: SPEC.md's checks before anything is sent, the provider's answers unchanged,
// every forwarded call in the request log; a target without fine-tuning is refused; the scopes of each kind.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toFile } from 'openai';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { useStack } from '../helpers/e2e-stack.ts';
import type { Behavior, RecordedRequest } from '../mocks/openai-server.ts';
import { chatLines, statusOf, uploadBatchFile, waitForBatch } from './batches-helpers.ts';

const JOB = {
  object: 'fine_tuning.job',
  id: 'ftjob-abc123',
  model: 'gpt-4o-mini-2024-07-18',
  created_at: 1721764800,
  finished_at: null,
  fine_tuned_model: null,
  organization_id: 'org-123',
  result_files: [],
  status: 'queued',
  validation_file: null,
  training_file: 'file-abc123',
  hyperparameters: { n_epochs: 'auto', batch_size: 'auto', learning_rate_multiplier: 'auto' },
  trained_tokens: null,
  error: null,
  seed: 42,
  estimated_finish: null,
  integrations: [],
};
const CHECKPOINT = {
  object: 'fine_tuning.job.checkpoint' as const,
  id: 'ftckpt_qtZ5Gyk4BLq1SfLFWp3RtO3P',
  created_at: 1721764867,
  fine_tuned_model_checkpoint: 'ft:gpt-4o-mini-2024-07-18:my-org:custom-suffix:96olL566:ckpt-step-2000',
  metrics: { full_valid_loss: 0.134, full_valid_mean_token_accuracy: 0.874 },
  fine_tuning_job_id: 'ftjob-abc123',
  step_number: 2000,
};
const BATCH = { id: 'batch_native1', object: 'batch', endpoint: '/v1/chat/completions', input_file_id: 'file-native', completion_window: '24h', status: 'validating', created_at: 1721764800 };

/** The local OpenAI server answers the fine-tuning and batch paths it does not implement as OpenAI does. */
function jobsApi(req: RecordedRequest): Behavior | undefined {
  const page = (data: unknown[]) => ({ kind: 'respond' as const, body: { object: 'list', data, has_more: false } });
  if (req.path === '/v1/fine_tuning/jobs' && req.method === 'POST') return { kind: 'respond', body: { ...JOB, ...(JSON.parse(req.body) as object) } };
  if (req.path === '/v1/fine_tuning/jobs' && req.method === 'GET') return page([JOB]);
  if (req.path === '/v1/fine_tuning/jobs/ftjob-abc123' && req.method === 'GET') return { kind: 'respond', body: JOB };
  if (req.path === '/v1/fine_tuning/jobs/ftjob-abc123/cancel') return { kind: 'respond', body: { ...JOB, status: 'cancelled' } };
  if (req.path === '/v1/fine_tuning/jobs/ftjob-abc123/checkpoints') return page([CHECKPOINT]);
  if (req.path === '/v1/fine_tuning/jobs/ftjob-abc123/events') return page([{ object: 'fine_tuning.job.event', id: 'ev1', created_at: 1, level: 'info', message: 'queued' }]);
  if (req.path === '/v1/batches' && req.method === 'POST') return { kind: 'respond', body: { ...BATCH, ...(JSON.parse(req.body) as object) } };
  if (req.path === '/v1/batches' && req.method === 'GET') return page([BATCH]);
  if (req.path === '/v1/batches/batch_native1/cancel') return { kind: 'respond', body: { ...BATCH, status: 'cancelling', cancelling_at: 2 } };
  return undefined;
}

const FILES_DIR = mkdtempSync(join(tmpdir(), 'gw-ft-files-'));
afterAll(() => rmSync(FILES_DIR, { recursive: true, force: true }));

for (const dialect of E2E_DIALECTS) {
  describe(`forwarded files, batches and fine-tuning (${dialect})`, () => {
    const stack = useStack(dialect, { env: { FILES_DIR } });

    test('fine-tuning: create, list, retrieve, cancel, checkpoints (after, limit) and events reach the provider and come back unchanged, each logged', async () => {
      const { client, mock, db } = stack();
      mock.reset();
      mock.setBehavior(jobsApi);
      try {
        const trace = `ft-${crypto.randomUUID()}`;
        const gw = client({ 'x-gateway-trace-id': trace });
        const integrations = [{ type: 'wandb' as const, wandb: { project: 'p', name: 'n', entity: 'e', tags: ['a'] } }];
        const job = await gw.fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: 'file-abc123', seed: 42, suffix: 'custom-suffix', integrations, hyperparameters: { n_epochs: 3 } });
        expect(job).toMatchObject({ id: 'ftjob-abc123', object: 'fine_tuning.job', seed: 42, suffix: 'custom-suffix' });
        expect((await gw.fineTuning.jobs.list({ limit: 5 })).data[0]!.id).toBe('ftjob-abc123');
        expect((await gw.fineTuning.jobs.retrieve('ftjob-abc123')).status).toBe('queued');
        expect((await gw.fineTuning.jobs.cancel('ftjob-abc123')).status).toBe('cancelled');
        const checkpoints = await gw.fineTuning.jobs.checkpoints.list('ftjob-abc123', { after: 'ftckpt_0', limit: 3 });
        expect(checkpoints.data[0]).toEqual(CHECKPOINT);
        expect((await gw.fineTuning.jobs.listEvents('ftjob-abc123')).data[0]!.message).toBe('queued');
        const sent = mock.requests.map((r) => `${r.method} ${r.path}${r.search}`);
        expect(sent).toEqual([
          'POST /v1/fine_tuning/jobs',
          'GET /v1/fine_tuning/jobs?limit=5',
          'GET /v1/fine_tuning/jobs/ftjob-abc123',
          'POST /v1/fine_tuning/jobs/ftjob-abc123/cancel',
          'GET /v1/fine_tuning/jobs/ftjob-abc123/checkpoints?after=ftckpt_0&limit=3',
          'GET /v1/fine_tuning/jobs/ftjob-abc123/events',
        ]);
        expect(JSON.parse(mock.requests[0]!.body)).toMatchObject({ integrations, hyperparameters: { n_epochs: 3 } });
        const rows = `SELECT COUNT(*) AS n FROM request_logs WHERE trace_id = '${trace}'`;
        const deadline = Date.now() + 20_000;
        while (Number((await db.query(rows))[0]!.n) < 6 && Date.now() < deadline) await Bun.sleep(100);
        expect(Number((await db.query(rows))[0]!.n)).toBe(6);
      } finally {
        mock.setBehavior(null);
      }
    });

    test('fine-tuning checks before anything is sent: 6 integrations, hyperparameters, suffix, seed, required fields, checkpoint limit', async () => {
      const { client, mock } = stack();
      mock.reset();
      const gw = client();
      const base = { model: 'gpt-4o-mini', training_file: 'file-abc123' };
      const wandb = { type: 'wandb' as const, wandb: { project: 'p' } };
      expect(await statusOf(gw.fineTuning.jobs.create({ ...base, integrations: Array.from({ length: 6 }, () => wandb) }))).toBe(400);
      expect(await statusOf(gw.fineTuning.jobs.create({ ...base, integrations: [{ type: 'wandb', wandb: {} as { project: string } }] }))).toBe(400);
      expect(await statusOf(gw.fineTuning.jobs.create({ ...base, hyperparameters: { n_epochs: 0 } }))).toBe(400);
      expect(await statusOf(gw.fineTuning.jobs.create({ ...base, hyperparameters: { batch_size: 1.5 } }))).toBe(400);
      expect(await statusOf(gw.fineTuning.jobs.create({ ...base, hyperparameters: { learning_rate_multiplier: -1 } }))).toBe(400);
      expect(await statusOf(gw.fineTuning.jobs.create({ ...base, suffix: 'x'.repeat(65) }))).toBe(400);
      expect(await statusOf(gw.fineTuning.jobs.create({ ...base, seed: 1.5 }))).toBe(400);
      expect(await statusOf(gw.fineTuning.jobs.create({ model: 'gpt-4o-mini' } as typeof base))).toBe(400);
      expect(await statusOf(gw.fineTuning.jobs.checkpoints.list('ftjob-abc123', { limit: 0 }))).toBe(400);
      expect(mock.requests).toEqual([]);
      // Five integrations are allowed (the provider answers).
      mock.setBehavior(jobsApi);
      try {
        expect((await gw.fineTuning.jobs.create({ ...base, integrations: Array.from({ length: 5 }, () => wandb) })).id).toBe('ftjob-abc123');
      } finally {
        mock.setBehavior(null);
      }
    });

    test('a target without fine-tuning or a native batch API: fine-tuning refused, batches and files kept by the gateway', async () => {
      const { client, mock } = stack();
      mock.reset();
      const gw = client({ 'x-gateway-provider': 'vllm' });
      expect(await statusOf(gw.fineTuning.jobs.create({ model: 'm', training_file: 'f' }))).toBe(400);
      expect(await statusOf(gw.fineTuning.jobs.list())).toBe(400);
      const file = await uploadBatchFile(gw, chatLines(1));
      const batch = await gw.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      expect((await waitForBatch(gw, batch.id)).status).toBe('completed');
      expect(mock.requests.map((r) => r.path)).toEqual(['/v1/chat/completions']);
    });

    test('OpenAI keeps files and batches: uploads, lists and batches go to the provider, checked first', async () => {
      const { client, mock } = stack();
      mock.reset();
      mock.setBehavior(jobsApi);
      try {
        const gw = client();
        const file = await gw.files.create({ file: await toFile(Buffer.from(chatLines(2)), 'in.jsonl'), purpose: 'batch' });
        expect(file.id).toStartWith('file-mock');
        expect((await gw.files.list()).data.map((f) => f.id)).toContain(file.id);
        expect(await (await gw.files.content(file.id)).text()).toBe(chatLines(2));
        const batch = await gw.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
        expect(batch).toMatchObject({ id: 'batch_native1', input_file_id: file.id });
        expect((await gw.batches.list()).data[0]!.id).toBe('batch_native1');
        expect((await gw.batches.cancel('batch_native1')).status).toBe('cancelling');
        mock.reset();
        mock.setBehavior(jobsApi);
        expect(await statusOf(gw.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '48h' as '24h' }))).toBe(400);
        expect(mock.requests).toEqual([]);
      } finally {
        mock.setBehavior(null);
      }
    });

    test('scopes: a passthrough-only key stores files but may not run chat lines; a chat key may not forward to the provider', async () => {
      const { gw: proc, mock, client } = stack();
      mock.reset();
      const key = async (scopes: string[]) => {
        const headers = { 'x-gateway-api-key': proc.adminKey, 'content-type': 'application/json' };
        const workspaces = (await (await fetch(`${proc.url}/v1/workspaces`, { headers })).json()) as { data: { id: string; slug: string }[] };
        const workspace = workspaces.data.find((w) => w.slug === 'default')!.id;
        const made = await fetch(`${proc.url}/v1/api-keys`, { method: 'POST', headers, body: JSON.stringify({ name: `k ${scopes}`, type: 'workspace-service', workspace_id: workspace, scopes }) });
        return String(((await made.json()) as { key: string }).key);
      };
      const proxyOnly = client({ 'x-gateway-provider': 'vllm', 'x-gateway-api-key': await key(['proxy.write']) });
      const file = await uploadBatchFile(proxyOnly, chatLines(1));
      expect(await statusOf(proxyOnly.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }))).toBe(403);
      const chatOnly = client({ 'x-gateway-api-key': await key(['completions.write']) });
      expect(await statusOf(chatOnly.files.list())).toBe(403);
      expect(await statusOf(chatOnly.fineTuning.jobs.list())).toBe(403);
      const logsOnly = client({ 'x-gateway-provider': 'vllm', 'x-gateway-api-key': await key(['logs.read']) });
      expect(await statusOf(logsOnly.files.list())).toBe(403);
      expect(await statusOf(logsOnly.batches.list())).toBe(403);
      expect(mock.requests).toEqual([]);
    });
  });
}
