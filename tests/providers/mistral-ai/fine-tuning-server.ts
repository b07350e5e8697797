/**
 * Mistral's files and fine-tuning API for the local Mistral server (server.ts), in Mistral's wire format:
 *
 * - POST /v1/files: multipart `file` and `purpose` (`fine-tune` only) → UploadFileOut `{id, object: 'file', bytes,
 *   created_at, filename, purpose, sample_type, num_lines, source}`;
 * - POST /v1/fine_tuning/jobs: JobIn `{model, training_files: [{file_id, weight}], validation_files, hyperparameters
 *   {training_steps, learning_rate, weight_decay, warmup_fraction, epochs, seq_len, fim_ratio}, suffix (≤ 18),
 *   integrations, auto_start, …}`; fields outside it → 422 `extra_forbidden`; unknown file ids → 404;
 * - GET /v1/fine_tuning/jobs (`page`, `page_size`) → `{data, object: 'list', total}`;
 * - GET /v1/fine_tuning/jobs/{id} → the detailed job with `events` `[{name, data, created_at}]` and `checkpoints`
 *   `[{metrics: {train_loss, valid_loss, valid_mean_token_accuracy}, step_number, created_at}]`;
 * - POST /v1/fine_tuning/jobs/{id}/cancel → the job, CANCELLATION_REQUESTED.
 *
 * Jobs move only when a test says so (`setStatus`, `addCheckpoint`), so every state is seen deterministically.
 */
import { isObj, type Obj, parseJson } from '../../mocks/harness.ts';

const JOB_FIELDS = new Set([
  'model', 'training_files', 'validation_files', 'hyperparameters', 'suffix', 'integrations', 'auto_start', 'invalid_sample_skip_percentage',
  'job_type', 'repositories', 'classifier_targets',
]);
const HYPER_FIELDS = new Set(['training_steps', 'learning_rate', 'weight_decay', 'warmup_fraction', 'epochs', 'seq_len', 'fim_ratio']);

export interface UploadedFile {
  id: string;
  filename: string;
  purpose: string;
  content: string;
}

export interface MistralFineTuning {
  files: Map<string, UploadedFile>;
  /** Mistral's detailed jobs by id. */
  jobs: Map<string, Obj>;
  /** Moves a job to a status as Mistral does: a `status-updated` event, `modified_at`, the model once SUCCESS. */
  setStatus(id: string, status: string): void;
  addCheckpoint(id: string, step: number, metrics: Obj): void;
}

type Detail = { type: string; loc: (string | number)[]; msg: string; input?: unknown };
const error = (status: number, message: unknown) => Response.json({ object: 'error', message, type: 'invalid_request_error', param: null, code: null }, { status });

export function createFineTuning(): MistralFineTuning {
  let clock = 1_750_000_000;
  const tick = () => ++clock;
  const jobs = new Map<string, Obj>();
  return {
    files: new Map(),
    jobs,
    setStatus(id, status) {
      const job = jobs.get(id)!;
      const at = tick();
      job.status = status;
      job.modified_at = at;
      (job.events as Obj[]).push({ name: 'status-updated', data: { status }, created_at: at });
      if (status === 'SUCCESS') {
        job.fine_tuned_model = `ft:${String(job.model)}:${String(job.suffix ?? 'model')}:${id.slice(0, 8)}`;
        job.trained_tokens = 4096;
      }
    },
    addCheckpoint(id, step, metrics) {
      (jobs.get(id)!.checkpoints as Obj[]).push({ metrics, step_number: step, created_at: tick() });
    },
  };
}

async function upload(state: MistralFineTuning, request: Request, bytes: Uint8Array): Promise<Response> {
  const type = request.headers.get('content-type') ?? '';
  if (!type.startsWith('multipart/form-data')) return error(422, { detail: [{ type: 'missing', loc: ['body', 'file'], msg: 'Field required' }] });
  const form = await new Response(bytes, { headers: { 'content-type': type } }).formData();
  const file = form.get('file');
  const purpose = form.get('purpose') ?? 'fine-tune';
  if (!(file instanceof Blob)) return error(422, { detail: [{ type: 'missing', loc: ['body', 'file'], msg: 'Field required' }] });
  if (purpose !== 'fine-tune') return error(422, { detail: [{ type: 'enum', loc: ['body', 'purpose'], msg: "Input should be 'fine-tune'", input: purpose }] });
  const content = await file.text();
  const id = crypto.randomUUID();
  const filename = (file as File).name || 'upload.jsonl';
  state.files.set(id, { id, filename, purpose, content });
  const lines = content.split('\n').filter((l) => l.trim() !== '').length;
  return Response.json({ id, object: 'file', bytes: file.size, created_at: Math.floor(Date.now() / 1000), filename, purpose, sample_type: 'instruct', num_lines: lines, source: 'upload' });
}

function create(state: MistralFineTuning, body: Obj): Response {
  const details: Detail[] = [];
  for (const [key, value] of Object.entries(body)) if (!JOB_FIELDS.has(key)) details.push({ type: 'extra_forbidden', loc: ['body', key], msg: 'Extra inputs are not permitted', input: value });
  if (typeof body.model !== 'string') details.push({ type: 'missing', loc: ['body', 'model'], msg: 'Field required' });
  if (!isObj(body.hyperparameters)) details.push({ type: 'missing', loc: ['body', 'hyperparameters'], msg: 'Field required' });
  else
    for (const [key, value] of Object.entries(body.hyperparameters))
      if (!HYPER_FIELDS.has(key)) details.push({ type: 'extra_forbidden', loc: ['body', 'hyperparameters', key], msg: 'Extra inputs are not permitted', input: value });
  const training = Array.isArray(body.training_files) ? body.training_files : [];
  training.forEach((f, i) => {
    if (!isObj(f) || typeof f.file_id !== 'string') details.push({ type: 'missing', loc: ['body', 'training_files', i, 'file_id'], msg: 'Field required' });
    else for (const key of Object.keys(f)) if (key !== 'file_id' && key !== 'weight') details.push({ type: 'extra_forbidden', loc: ['body', 'training_files', i, key], msg: 'Extra inputs are not permitted' });
  });
  if (typeof body.suffix === 'string' && body.suffix.length > 18)
    details.push({ type: 'string_too_long', loc: ['body', 'suffix'], msg: 'String should have at most 18 characters', input: body.suffix });
  if (details.length) return error(422, { detail: details });
  const ids = [...training.map((f) => String((f as Obj).file_id)), ...((body.validation_files as string[] | undefined) ?? [])];
  const missing = ids.find((id) => !state.files.has(id));
  if (missing) return error(404, `File ${missing} not found`);
  const id = crypto.randomUUID();
  const now = Math.floor(Date.now() / 1000);
  const job: Obj = {
    id,
    auto_start: body.auto_start === true,
    model: body.model,
    status: 'QUEUED',
    job_type: 'completion',
    created_at: now,
    modified_at: now,
    training_files: training.map((f) => (f as Obj).file_id),
    validation_files: body.validation_files ?? [],
    object: 'job',
    fine_tuned_model: null,
    suffix: body.suffix ?? null,
    integrations: body.integrations ?? [],
    trained_tokens: null,
    hyperparameters: body.hyperparameters,
    events: [],
    checkpoints: [],
  };
  state.jobs.set(id, job);
  state.setStatus(id, 'QUEUED');
  return Response.json(job);
}

/** Mistral's list shows jobs without their events and checkpoints. */
function summary(job: Obj): Obj {
  const { events: _e, checkpoints: _c, ...rest } = job;
  return rest;
}

/** Answers a files or fine-tuning request, or undefined for any other path. */
export async function handleFineTuning(state: MistralFineTuning, request: Request, path: string, bytes: Uint8Array): Promise<Response | undefined> {
  if (path === '/v1/files' && request.method === 'POST') return upload(state, request, bytes);
  if (path === '/v1/fine_tuning/jobs') {
    if (request.method === 'GET') {
      const query = new URL(request.url).searchParams;
      const size = Number(query.get('page_size') ?? 100);
      const pageNo = Number(query.get('page') ?? 0);
      const all = [...state.jobs.values()].reverse();
      return Response.json({ data: all.slice(pageNo * size, (pageNo + 1) * size).map(summary), object: 'list', total: all.length });
    }
    if (request.method !== 'POST') return undefined;
    const parsed = parseJson(new TextDecoder().decode(bytes));
    if (!parsed || !isObj(parsed.value)) return error(422, { detail: [{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary' }] });
    return create(state, parsed.value);
  }
  const match = /^\/v1\/fine_tuning\/jobs\/([^/]+)(\/cancel)?$/.exec(path);
  if (!match) return undefined;
  const job = state.jobs.get(decodeURIComponent(match[1]!));
  if (!job) return error(404, 'Job not found');
  if (match[2] && request.method === 'POST') {
    if (['SUCCESS', 'FAILED', 'FAILED_VALIDATION', 'CANCELLED'].includes(String(job.status))) return error(400, `Job is already ${String(job.status)}`);
    state.setStatus(String(job.id), 'CANCELLATION_REQUESTED');
    return Response.json(job);
  }
  if (!match[2] && request.method === 'GET') return Response.json(job);
  return undefined;
}
