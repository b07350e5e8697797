/**
 * OpenAI's /v1/fine_tuning/jobs over Mistral's fine-tuning API (sdk native-fine-tuning.ts). The training and
 * validation files are uploaded to Mistral's POST /v1/files (multipart, `purpose: fine-tune`); the job is created
 * with POST /v1/fine_tuning/jobs `{model, training_files: [{file_id, weight}], validation_files, hyperparameters,
 * suffix, auto_start: true}`; GET /v1/fine_tuning/jobs/{id} gives its status, events and checkpoints; POST
 * …/{id}/cancel cancels it.
 *
 * Hyperparameters: `n_epochs` is Mistral's `epochs`; `learning_rate_multiplier` multiplies Mistral's default learning
 * rate (1e-4) into its absolute `learning_rate`; `batch_size` has no equivalent (400 unless `auto`). Mistral takes no
 * `seed`, runs supervised fine-tuning only, and its W&B integration needs an API key OpenAI's shape does not carry:
 * each of these is a 400 naming the parameter, before anything is uploaded.
 */
import {
  Errors,
  type FineTuningStatus,
  type JsonObject,
  type NativeFineTuningCheckpoint,
  type NativeFineTuningContext,
  type NativeFineTuningCreated,
  type NativeFineTuningEvent,
  type NativeFineTuningJob,
  type NativeFineTuningRequest,
  type NativeFineTuningTranslator,
} from '@gateway/sdk';
import { mistralError } from './errors.ts';

/** Mistral's default learning rate: `learning_rate_multiplier` 1 is this rate. */
export const DEFAULT_LEARNING_RATE = 1e-4;
/** Mistral's longest fine-tuned model suffix. */
const MAX_SUFFIX = 18;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const given = (v: unknown): boolean => v !== undefined && v !== null;
const numeric = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Mistral's job status → OpenAI's. A cancel asked shows `cancelled` at once, as OpenAI's cancel answers. */
const STATUS: Readonly<Record<string, FineTuningStatus>> = {
  QUEUED: 'queued',
  STARTED: 'running',
  VALIDATING: 'validating_files',
  VALIDATED: 'queued',
  RUNNING: 'running',
  FAILED_VALIDATION: 'failed',
  FAILED: 'failed',
  SUCCESS: 'succeeded',
  CANCELLED: 'cancelled',
  CANCELLATION_REQUESTED: 'cancelled',
};
/** The states after which a Mistral job no longer changes. */
const ENDED = new Set(['FAILED_VALIDATION', 'FAILED', 'SUCCESS', 'CANCELLED']);

/** Reads an answer's JSON, or throws Mistral's error (status and message kept). */
async function answer(response: Response): Promise<JsonObject> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!response.ok || !isObject(json)) {
    const info = mistralError(json);
    throw Errors.provider('mistral-ai', response.ok ? 502 : response.status, info?.message ?? (text.slice(0, 500) || `Mistral answered ${response.status}`), info?.type);
  }
  return json;
}

/** OpenAI's hyperparameters of the request (`method.supervised`'s, else the top-level ones), as Mistral's. */
export function mistralHyperparameters(body: JsonObject): JsonObject {
  const method = isObject(body.method) ? body.method : undefined;
  if (method && given(method.type) && method.type !== 'supervised')
    throw Errors.badRequest(`Mistral runs supervised fine-tuning only, not ${String(method.type)}`, 'method.type');
  const supervised = method && isObject(method.supervised) ? method.supervised : undefined;
  const fromMethod = supervised && isObject(supervised.hyperparameters);
  const hyper = fromMethod ? (supervised.hyperparameters as JsonObject) : isObject(body.hyperparameters) ? body.hyperparameters : {};
  const param = fromMethod ? 'method.supervised.hyperparameters' : 'hyperparameters';
  const out: JsonObject = {};
  if (numeric(hyper.batch_size)) throw Errors.badRequest('Mistral fine-tuning has no batch size: leave batch_size out or auto', `${param}.batch_size`);
  if (numeric(hyper.n_epochs)) out.epochs = hyper.n_epochs;
  if (numeric(hyper.learning_rate_multiplier)) out.learning_rate = Number((hyper.learning_rate_multiplier * DEFAULT_LEARNING_RATE).toPrecision(12));
  return out;
}

/** Mistral's job body for an OpenAI request, its files already uploaded; 400 for what Mistral cannot take. */
export function mistralJobBody(body: JsonObject, trainingFileId: string, validationFileId: string | null): JsonObject {
  if (given(body.seed)) throw Errors.badRequest('Mistral fine-tuning takes no seed', 'seed');
  if (Array.isArray(body.integrations) && body.integrations.length)
    throw Errors.badRequest("Integrations are not translated for Mistral: its Weights & Biases integration needs an API key that OpenAI's request does not carry", 'integrations');
  if (typeof body.suffix === 'string' && body.suffix.length > MAX_SUFFIX)
    throw Errors.badRequest(`Mistral takes a suffix of at most ${MAX_SUFFIX} characters`, 'suffix');
  const out: JsonObject = {
    model: body.model as string,
    training_files: [{ file_id: trainingFileId, weight: 1 }],
    hyperparameters: mistralHyperparameters(body),
    // OpenAI's jobs start on their own once the files are validated.
    auto_start: true,
  };
  if (validationFileId) out.validation_files = [validationFileId];
  if (typeof body.suffix === 'string') out.suffix = body.suffix;
  return out;
}

function event(e: JsonObject): NativeFineTuningEvent {
  const data = isObject(e.data) ? e.data : null;
  const status = typeof data?.status === 'string' ? data.status : undefined;
  const name = typeof e.name === 'string' ? e.name : 'event';
  const failed = status === 'FAILED' || status === 'FAILED_VALIDATION' || /fail|error/i.test(name);
  return { createdAt: numeric(e.created_at) ? e.created_at : 0, level: failed ? 'error' : 'info', message: status ? `${name}: ${status}` : name, data };
}

function checkpoint(c: JsonObject): NativeFineTuningCheckpoint {
  const metrics: Record<string, number> = {};
  if (isObject(c.metrics)) for (const key of ['train_loss', 'valid_loss', 'valid_mean_token_accuracy']) if (numeric(c.metrics[key])) metrics[key] = c.metrics[key];
  return { stepNumber: numeric(c.step_number) ? c.step_number : 0, createdAt: numeric(c.created_at) ? c.created_at : 0, metrics, model: null };
}

/** A Mistral job (its detail) as OpenAI's fine_tuning.job sees it. */
export function fromMistralJob(job: JsonObject): NativeFineTuningCreated {
  const raw = String(job.status);
  const status = STATUS[raw] ?? 'running';
  const hyper = isObject(job.hyperparameters) ? job.hyperparameters : {};
  const events = (Array.isArray(job.events) ? job.events.filter(isObject) : []).map(event).sort((a, b) => a.createdAt - b.createdAt);
  const checkpoints = (Array.isArray(job.checkpoints) ? job.checkpoints.filter(isObject) : []).map(checkpoint).sort((a, b) => a.stepNumber - b.stepNumber);
  const trained = numeric(job.trained_tokens) ? job.trained_tokens : isObject(job.metadata) && numeric(job.metadata.trained_tokens) ? job.metadata.trained_tokens : null;
  let error: NativeFineTuningJob['error'] = null;
  if (raw === 'FAILED_VALIDATION')
    error = { code: 'invalid_training_file', message: 'Mistral could not validate the training or validation file.', param: 'training_file' };
  else if (raw === 'FAILED') error = { code: 'job_failed', message: 'The fine-tuning job failed at Mistral.', param: null };
  const ended = ENDED.has(raw);
  return {
    id: String(job.id),
    status,
    ended,
    fineTunedModel: typeof job.fine_tuned_model === 'string' ? job.fine_tuned_model : null,
    finishedAt: ended && numeric(job.modified_at) ? job.modified_at : null,
    trainedTokens: trained,
    hyperparameters: {
      n_epochs: numeric(hyper.epochs) ? hyper.epochs : 'auto',
      batch_size: 'auto',
      learning_rate_multiplier: numeric(hyper.learning_rate) ? Number((hyper.learning_rate / DEFAULT_LEARNING_RATE).toPrecision(12)) : 'auto',
    },
    error,
    events,
    checkpoints,
  };
}

/** Uploads one gateway file to Mistral for fine-tuning; Mistral's file id. */
async function upload(file: NativeFineTuningRequest['trainingFile'], ctx: NativeFineTuningContext): Promise<string> {
  const uploaded = await answer(
    await ctx.send({
      method: 'POST',
      path: '/files',
      multipart: { fields: { purpose: 'fine-tune' }, files: [{ field: 'file', filename: file.filename, contentType: 'application/jsonl', content: file.content }] },
    }),
  );
  if (typeof uploaded.id !== 'string') throw Errors.provider('mistral-ai', 502, 'Mistral answered a file upload without an id');
  return uploaded.id;
}

const jobPath = (id: string) => `/fine_tuning/jobs/${encodeURIComponent(id)}`;

export const mistralFineTuning: NativeFineTuningTranslator = {
  async create(request, ctx) {
    // Checked before anything is uploaded.
    mistralJobBody(request.body, '', null);
    const training = await upload(request.trainingFile, ctx);
    const validation = request.validationFile ? await upload(request.validationFile, ctx) : null;
    const body = mistralJobBody(request.body, training, validation);
    return fromMistralJob(await answer(await ctx.send({ method: 'POST', path: '/fine_tuning/jobs', body })));
  },
  async retrieve(id, ctx) {
    return fromMistralJob(await answer(await ctx.send({ method: 'GET', path: jobPath(id) })));
  },
  async cancel(id, ctx) {
    return fromMistralJob(await answer(await ctx.send({ method: 'POST', path: `${jobPath(id)}/cancel` })));
  },
};
