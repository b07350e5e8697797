/**
 * /v1/fine_tuning/jobs: forwarded to a target whose provider runs fine-tuning (its adapter's `nativeJobs.fineTuning`),
 * through the pipeline, so every call is in the request log; translated for a provider whose adapter has a
 * fine-tuning translator (translated-fine-tuning.ts). The gateway checks what SPEC.md and OpenAI state before
 * anything is sent: a job's required fields, at most 5 integrations, the hyperparameters' ranges, metadata, and the
 * checkpoints list's `limit`.
 */
import { Errors, type JobCall, type JsonObject } from '@gateway/sdk';
import { checkMetadata, parseBody, queryInt, segments } from './respond.ts';
import type { TranslatedFineTuning } from './translated-fine-tuning.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `auto`, or an integer in [min, max] (a number > 0 when `integer` is false). */
function checkHyper(value: unknown, param: string, integer: boolean, min: number, max: number): void {
  if (value === undefined || value === 'auto') return;
  const ok = typeof value === 'number' && Number.isFinite(value) && (integer ? Number.isInteger(value) && value >= min && value <= max : value > 0);
  if (!ok) throw Errors.badRequest(`${param} must be auto or ${integer ? `an integer from ${min} to ${max}` : 'a number above 0'}`, param);
}

function checkHyperparameters(value: unknown, param: string): void {
  if (value === undefined) return;
  if (!isObject(value)) throw Errors.badRequest(`${param} must be an object`, param);
  checkHyper(value.n_epochs, `${param}.n_epochs`, true, 1, 50);
  checkHyper(value.batch_size, `${param}.batch_size`, true, 1, 256);
  checkHyper(value.learning_rate_multiplier, `${param}.learning_rate_multiplier`, false, 0, Number.POSITIVE_INFINITY);
  if (value.beta !== undefined) checkHyper(value.beta, `${param}.beta`, false, 0, Number.POSITIVE_INFINITY);
}

function checkIntegrations(value: unknown): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value)) throw Errors.badRequest('integrations must be an array', 'integrations');
  if (value.length > 5) throw Errors.badRequest('integrations may hold at most 5 entries', 'integrations');
  value.forEach((entry, i) => {
    const param = `integrations[${i}]`;
    if (!isObject(entry) || typeof entry.type !== 'string') throw Errors.badRequest(`${param} must be an object with a type`, `${param}.type`);
    // The experiment tracker's settings sit under its kind's key: project (required), name, entity, tags.
    const settings = entry[entry.type];
    if (!isObject(settings)) throw Errors.badRequest(`${param}.${entry.type} must be an object`, `${param}.${entry.type}`);
    if (typeof settings.project !== 'string' || settings.project === '')
      throw Errors.badRequest(`${param}.${entry.type}.project must be a non-empty string`, `${param}.${entry.type}.project`);
    for (const key of ['name', 'entity'] as const)
      if (settings[key] !== undefined && settings[key] !== null && typeof settings[key] !== 'string')
        throw Errors.badRequest(`${param}.${entry.type}.${key} must be a string`, `${param}.${entry.type}.${key}`);
    if (settings.tags !== undefined && (!Array.isArray(settings.tags) || settings.tags.some((t) => typeof t !== 'string')))
      throw Errors.badRequest(`${param}.${entry.type}.tags must be an array of strings`, `${param}.${entry.type}.tags`);
  });
}

/** POST /v1/fine_tuning/jobs's body. */
export function checkFineTuningJob(body: JsonObject): void {
  if (typeof body.model !== 'string' || body.model === '') throw Errors.badRequest("Missing required parameter: 'model'", 'model');
  if (typeof body.training_file !== 'string' || body.training_file === '')
    throw Errors.badRequest("Missing required parameter: 'training_file'", 'training_file');
  if (body.validation_file !== undefined && body.validation_file !== null && typeof body.validation_file !== 'string')
    throw Errors.badRequest('validation_file must be a string', 'validation_file');
  if (body.suffix !== undefined && body.suffix !== null && (typeof body.suffix !== 'string' || body.suffix.length < 1 || body.suffix.length > 64))
    throw Errors.badRequest('suffix must be a string of 1 to 64 characters', 'suffix');
  if (body.seed !== undefined && body.seed !== null && (typeof body.seed !== 'number' || !Number.isInteger(body.seed) || body.seed < 0 || body.seed > 2147483647))
    throw Errors.badRequest('seed must be an integer from 0 to 2147483647', 'seed');
  checkHyperparameters(body.hyperparameters, 'hyperparameters');
  const method = body.method;
  if (method !== undefined) {
    if (!isObject(method)) throw Errors.badRequest('method must be an object', 'method');
    for (const kind of ['supervised', 'dpo', 'reinforcement'])
      if (isObject(method[kind])) checkHyperparameters((method[kind] as Record<string, unknown>).hyperparameters, `method.${kind}.hyperparameters`);
  }
  checkIntegrations(body.integrations);
  checkMetadata(body.metadata);
}

export async function handleFineTuning(call: JobCall, translated: TranslatedFineTuning): Promise<Response> {
  // Any other config: the gateway's jobs translated to a provider's own fine-tuning API (or a 400 at creation).
  if (!call.native) return translated.handle(call);
  const [id, sub] = segments(call.path, '/fine_tuning/jobs');
  const query = new URLSearchParams(call.search);
  if (!id && call.method === 'POST') checkFineTuningJob(parseBody(call.body));
  if (!id && call.method === 'GET') queryInt(query, 'limit', 20, 1, 100);
  if (id && (sub === 'checkpoints' || sub === 'events') && call.method === 'GET') queryInt(query, 'limit', 10, 1, 100);
  return call.forward();
}
