// Fine-tuning translated to the provider's own fine-tuning API (docs/batches.md, "Fine-tuning"): Mistral's, through
// the openai SDK against the local Mistral server (which speaks Mistral's files and fine-tuning wire format), on
// SQLite and MariaDB: the gateway's files uploaded to Mistral, the job body mapped, OpenAI's job, event and checkpoint
// shapes with after / limit / has_more, states mapped as Mistral moves the job, cancel, what Mistral cannot take
// refused before anything is sent, the calls in the request log, and another workspace's 404.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type E2EStack, useStack } from '../helpers/e2e-stack.ts';
import { type MistralTestServer, startMistralServer } from '../providers/mistral-ai/server.ts';
import { statusOf } from './batches-helpers.ts';

const FILES_DIR = mkdtempSync(join(tmpdir(), 'gw-ft-translated-files-'));
let mistral: MistralTestServer;
beforeAll(() => {
  mistral = startMistralServer();
});
afterAll(() => {
  mistral?.stop();
  rmSync(FILES_DIR, { recursive: true, force: true });
});

const TRAINING = `${JSON.stringify({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] })}\n`;
const VALIDATION = `${JSON.stringify({ messages: [{ role: 'user', content: 'bye' }, { role: 'assistant', content: 'goodbye' }] })}\n`;

async function upload(gw: OpenAI, text: string, name: string, purpose: 'fine-tune' | 'batch' = 'fine-tune') {
  return gw.files.create({ file: await toFile(Buffer.from(text), name), purpose });
}

/** The Mistral job behind a gateway job (from the gateway's link row). */
async function upstreamId(stack: E2EStack, id: string): Promise<string> {
  const [link] = await stack.db.query(`SELECT provider, upstream_id FROM gateway_fine_tuning_jobs WHERE id = '${id}'`);
  expect(link).toMatchObject({ provider: 'mistral-ai' });
  return String(link!.upstream_id);
}

/** A key of a new workspace. */
async function otherWorkspaceClient(stack: E2EStack, headers: Record<string, string>): Promise<OpenAI> {
  const { gw, client } = stack;
  const admin = { 'x-gateway-api-key': gw.adminKey, 'content-type': 'application/json' };
  const run = crypto.randomUUID().slice(0, 8);
  const ws = (await (await fetch(`${gw.url}/v1/workspaces`, { method: 'POST', headers: admin, body: JSON.stringify({ name: `Other ${run}`, slug: `other-${run}` }) })).json()) as { id: string };
  const made = await fetch(`${gw.url}/v1/api-keys`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ name: `other ${run}`, type: 'workspace-service', workspace_id: ws.id, scopes: ['proxy.write'] }),
  });
  return client({ ...headers, 'x-gateway-api-key': String(((await made.json()) as { key: string }).key) });
}

for (const dialect of E2E_DIALECTS) {
  describe(`fine-tuning translated to Mistral's fine-tuning API (${dialect})`, () => {
    const stack = useStack(dialect, { env: { FILES_DIR } });
    const headers = () => ({ 'x-gateway-provider': 'mistral-ai', 'x-gateway-custom-host': mistral.baseUrl });

    test('a job: files uploaded to Mistral, the body mapped, states, events and checkpoints in OpenAI shapes, logged', async () => {
      const trace = `ft-mistral-${crypto.randomUUID()}`;
      const gw = stack().client({ ...headers(), 'x-gateway-trace-id': trace });
      const training = await upload(gw, TRAINING, 'train.jsonl');
      const validation = await upload(gw, VALIDATION, 'valid.jsonl');
      expect(training.id).toStartWith('file-');
      const sent = mistral.requests.length;

      const created = await gw.fineTuning.jobs.create({
        model: 'open-mistral-7b',
        training_file: training.id,
        validation_file: validation.id,
        suffix: 'support',
        hyperparameters: { n_epochs: 3, learning_rate_multiplier: 2 },
        metadata: { team: 'search' },
      });
      expect(created.id).toStartWith('ftjob-');
      expect(created).toMatchObject({
        object: 'fine_tuning.job',
        model: 'open-mistral-7b',
        status: 'queued',
        training_file: training.id,
        validation_file: validation.id,
        fine_tuned_model: null,
        finished_at: null,
        hyperparameters: { n_epochs: 3, batch_size: 'auto', learning_rate_multiplier: 2 },
        metadata: { team: 'search' },
      });

      // Both files uploaded to Mistral (multipart, purpose fine-tune, the provider key), then one job of Mistral's shape.
      const upstream = mistral.requests.slice(sent);
      const uploads = upstream.filter((r) => r.method === 'POST' && r.path === '/v1/files');
      expect(uploads).toHaveLength(2);
      expect(uploads[0]!.headers['content-type']).toStartWith('multipart/form-data; boundary=');
      expect(uploads[0]!.headers.authorization).toBe(`Bearer ${stack().providerKey}`);
      // The two files Mistral stored last (the server is shared by the dialects' suites).
      const [trainingFile, validationFile] = [...mistral.fineTuning.files.values()].slice(-2);
      expect(trainingFile).toMatchObject({ filename: 'train.jsonl', purpose: 'fine-tune', content: TRAINING });
      expect(validationFile).toMatchObject({ filename: 'valid.jsonl', purpose: 'fine-tune', content: VALIDATION });
      const creates = upstream.filter((r) => r.method === 'POST' && r.path === '/v1/fine_tuning/jobs');
      expect(creates).toHaveLength(1);
      const trainingId = trainingFile!.id;
      const validationId = validationFile!.id;
      expect(JSON.parse(creates[0]!.body)).toEqual({
        model: 'open-mistral-7b',
        training_files: [{ file_id: trainingId, weight: 1 }],
        validation_files: [validationId],
        hyperparameters: { epochs: 3, learning_rate: 0.0002 },
        suffix: 'support',
        auto_start: true,
      });
      const id = await upstreamId(stack(), created.id);
      const ft = mistral.fineTuning;

      ft.setStatus(id, 'VALIDATING');
      expect((await gw.fineTuning.jobs.retrieve(created.id)).status).toBe('validating_files');
      ft.setStatus(id, 'VALIDATED');
      ft.setStatus(id, 'RUNNING');
      ft.addCheckpoint(id, 10, { train_loss: 1.5, valid_loss: 1.7, valid_mean_token_accuracy: 0.5 });
      ft.addCheckpoint(id, 20, { train_loss: 1.1, valid_loss: 1.3, valid_mean_token_accuracy: 0.6 });
      ft.addCheckpoint(id, 30, { train_loss: 0.9, valid_loss: 1.0, valid_mean_token_accuracy: 0.7 });
      expect((await gw.fineTuning.jobs.retrieve(created.id)).status).toBe('running');

      // Checkpoints, newest step first, paged by after and limit.
      const first = await gw.fineTuning.jobs.checkpoints.list(created.id, { limit: 2 });
      expect(first.data.map((c) => c.step_number)).toEqual([30, 20]);
      expect(first.has_more).toBe(true);
      expect(first.data[0]).toMatchObject({
        object: 'fine_tuning.job.checkpoint',
        fine_tuning_job_id: created.id,
        step_number: 30,
        metrics: { step: 30, train_loss: 0.9, valid_loss: 1.0, valid_mean_token_accuracy: 0.7 },
      });
      const rest = await gw.fineTuning.jobs.checkpoints.list(created.id, { after: first.data[1]!.id, limit: 2 });
      expect(rest.data.map((c) => c.step_number)).toEqual([10]);
      expect(rest.has_more).toBe(false);

      // Events, newest first: each of Mistral's status changes.
      const events = await gw.fineTuning.jobs.listEvents(created.id, { limit: 3 });
      expect(events.data.map((e) => e.message)).toEqual(['status-updated: RUNNING', 'status-updated: VALIDATED', 'status-updated: VALIDATING']);
      expect(events.data[0]).toMatchObject({ object: 'fine_tuning.job.event', level: 'info', data: { status: 'RUNNING' } });
      expect(events.has_more).toBe(true);
      const older = await gw.fineTuning.jobs.listEvents(created.id, { after: events.data[2]!.id });
      expect(older.data.map((e) => e.message)).toEqual(['status-updated: QUEUED']);
      expect(await statusOf(gw.fineTuning.jobs.listEvents(created.id, { limit: 101 }))).toBe(400);

      ft.setStatus(id, 'SUCCESS');
      const done = await gw.fineTuning.jobs.retrieve(created.id);
      expect(done).toMatchObject({ status: 'succeeded', fine_tuned_model: `ft:open-mistral-7b:support:${id.slice(0, 8)}`, trained_tokens: 4096 });
      expect(done.finished_at).toBeGreaterThan(0);
      // Ended: the job is as recorded, Mistral is not asked again.
      const gets = () => mistral.requests.filter((r) => r.method === 'GET' && r.path === `/v1/fine_tuning/jobs/${id}`).length;
      const before = gets();
      expect((await gw.fineTuning.jobs.retrieve(created.id)).status).toBe('succeeded');
      expect(gets()).toBe(before);
      const listed = await gw.fineTuning.jobs.list({ limit: 100 });
      expect(listed.data.find((j) => j.id === created.id)).toMatchObject({ status: 'succeeded', model: 'open-mistral-7b' });

      // Every call to Mistral is in the request log under the client's trace (the two uploads, the create, the reads).
      const toMistral = mistral.requests.slice(sent).filter((r) => r.path.startsWith('/v1/files') || r.path.startsWith('/v1/fine_tuning')).length;
      const rows = `SELECT COUNT(*) AS n FROM request_logs WHERE trace_id = '${trace}' AND provider = 'mistral-ai'`;
      const deadline = Date.now() + 20_000;
      while (Number((await stack().db.query(rows))[0]!.n) < toMistral && Date.now() < deadline) await Bun.sleep(100);
      expect(Number((await stack().db.query(rows))[0]!.n)).toBe(toMistral);
    }, 60_000);

    test('cancel: Mistral is asked to cancel, the job shows cancelled; an ended job cannot be cancelled again', async () => {
      const gw = stack().client(headers());
      const training = await upload(gw, TRAINING, 'train.jsonl');
      const created = await gw.fineTuning.jobs.create({ model: 'open-mistral-7b', training_file: training.id });
      const id = await upstreamId(stack(), created.id);
      mistral.fineTuning.setStatus(id, 'RUNNING');
      const cancelled = await gw.fineTuning.jobs.cancel(created.id);
      expect(cancelled.status).toBe('cancelled');
      expect(mistral.requests.filter((r) => r.method === 'POST' && r.path === `/v1/fine_tuning/jobs/${id}/cancel`)).toHaveLength(1);
      expect(mistral.fineTuning.jobs.get(id)!.status).toBe('CANCELLATION_REQUESTED');
      mistral.fineTuning.setStatus(id, 'CANCELLED');
      const ended = await gw.fineTuning.jobs.retrieve(created.id);
      expect(ended.status).toBe('cancelled');
      expect(ended.finished_at).toBeGreaterThan(0);
      expect(await statusOf(gw.fineTuning.jobs.cancel(created.id))).toBe(409);
    }, 60_000);

    test('what Mistral cannot take is refused with 400 before anything is sent; a failed validation maps to failed', async () => {
      const gw = stack().client(headers());
      const training = await upload(gw, TRAINING, 'train.jsonl');
      const batchFile = await upload(gw, TRAINING, 'batch.jsonl', 'batch');
      const sent = mistral.requests.length;
      const base = { model: 'open-mistral-7b', training_file: training.id };
      const refusal = async (call: PromiseLike<unknown>) => {
        try {
          await call;
          return undefined;
        } catch (error) {
          return { status: (error as { status?: number }).status, param: (error as { param?: string }).param };
        }
      };
      expect(await refusal(gw.fineTuning.jobs.create({ ...base, hyperparameters: { batch_size: 8 } }))).toEqual({ status: 400, param: 'hyperparameters.batch_size' });
      expect(await refusal(gw.fineTuning.jobs.create({ ...base, seed: 7 }))).toEqual({ status: 400, param: 'seed' });
      expect(await refusal(gw.fineTuning.jobs.create({ ...base, suffix: 'a-suffix-too-long-for-mistral' }))).toEqual({ status: 400, param: 'suffix' });
      expect(await refusal(gw.fineTuning.jobs.create({ ...base, integrations: [{ type: 'wandb', wandb: { project: 'p' } }] }))).toEqual({ status: 400, param: 'integrations' });
      expect(await refusal(gw.fineTuning.jobs.create({ ...base, method: { type: 'dpo', dpo: {} } }))).toEqual({ status: 400, param: 'method.type' });
      expect(await refusal(gw.fineTuning.jobs.create({ ...base, training_file: batchFile.id }))).toEqual({ status: 400, param: 'training_file' });
      expect(await refusal(gw.fineTuning.jobs.create({ ...base, training_file: 'file-nope' }))).toEqual({ status: 400, param: 'training_file' });
      expect(mistral.requests.length).toBe(sent);

      // method.supervised's hyperparameters are used as the top-level ones are.
      const job = await gw.fineTuning.jobs.create({ ...base, method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } } });
      expect(JSON.parse(mistral.requests.filter((r) => r.path === '/v1/fine_tuning/jobs').at(-1)!.body).hyperparameters).toEqual({ epochs: 2 });
      const id = await upstreamId(stack(), job.id);
      mistral.fineTuning.setStatus(id, 'FAILED_VALIDATION');
      const failed = await gw.fineTuning.jobs.retrieve(job.id);
      expect(failed).toMatchObject({ status: 'failed', error: { code: 'invalid_training_file', param: 'training_file' } });
      expect((await gw.fineTuning.jobs.listEvents(job.id)).data[0]).toMatchObject({ level: 'error', message: 'status-updated: FAILED_VALIDATION' });
    }, 60_000);

    test("another workspace's key gets 404 for a translated job, and its list does not show it", async () => {
      const gw = stack().client(headers());
      const training = await upload(gw, TRAINING, 'train.jsonl');
      const job = await gw.fineTuning.jobs.create({ model: 'open-mistral-7b', training_file: training.id });
      const other = await otherWorkspaceClient(stack(), headers());
      expect(await statusOf(other.fineTuning.jobs.retrieve(job.id))).toBe(404);
      expect(await statusOf(other.fineTuning.jobs.cancel(job.id))).toBe(404);
      expect(await statusOf(other.fineTuning.jobs.listEvents(job.id))).toBe(404);
      expect(await statusOf(other.fineTuning.jobs.checkpoints.list(job.id))).toBe(404);
      expect((await other.fineTuning.jobs.list()).data).toEqual([]);
      // Nor may it train on this workspace's file.
      expect(await statusOf(other.fineTuning.jobs.create({ model: 'open-mistral-7b', training_file: training.id }))).toBe(400);
      expect((await gw.fineTuning.jobs.retrieve(job.id)).id).toBe(job.id);
    }, 60_000);
  });
}
