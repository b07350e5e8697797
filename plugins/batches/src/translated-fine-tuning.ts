/**
 * Fine-tuning translated to the provider's own fine-tuning API (sdk native-fine-tuning.ts; docs/batches.md): the
 * config is one target whose adapter has a fine-tuning translator. The caller uploads the training and validation
 * files to the gateway (purpose `fine-tune`); the translator sends them to the provider and creates the job there;
 * the gateway keeps a gateway_fine_tuning_jobs row naming the provider's job under its own id (`ftjob-…`), per
 * workspace; its calls need a config whose provider has such a translator (any other is refused, as before). Each
 * job's upstream calls use the config it was created with. There is no poller: GET (and cancel) of an open job asks the provider and records what it says; the list
 * shows each job as last seen; events and checkpoints are read from the provider's job each time.
 */
import type { SecretBox } from '@gateway/admin-kit';
import {
  and,
  type DatabaseHelpers,
  desc,
  eq,
  Errors,
  type GatewayConfig,
  type JobCall,
  type JsonObject,
  lt,
  type NativeFineTuningContext,
  type NativeFineTuningFile,
  type NativeFineTuningJob,
  type NativeFineTuningTarget,
  or,
  type Row,
} from '@gateway/sdk';
import { checkFineTuningJob } from './fine-tuning.ts';
import type { GatewayFiles } from './files.ts';
import { json, listPage, newId, nowSeconds, parseBody, queryInt, segments } from './respond.ts';
import { gatewayFineTuningJobs } from './tables.ts';

type JobRow = Row<typeof gatewayFineTuningJobs>;

export interface TranslatedFineTuningDeps {
  database: DatabaseHelpers;
  files: GatewayFiles;
  box: SecretBox;
}

const configPlace = (id: string) => ({ table: 'gateway_fine_tuning_jobs', id, field: 'config' });
const num = (v: number | null): number | null => (v === null ? null : Number(v));

/** OpenAI's fine_tuning.job of a stored row. */
export function fineTuningJobObject(row: JobRow): JsonObject {
  const hyperparameters = row.hyperparameters as JsonObject;
  return {
    object: 'fine_tuning.job',
    id: row.id,
    created_at: Number(row.created_at),
    error: (row.error ?? null) as JsonObject | null,
    fine_tuned_model: row.fine_tuned_model,
    finished_at: num(row.finished_at),
    hyperparameters,
    method: { type: 'supervised', supervised: { hyperparameters } },
    model: row.model,
    organization_id: row.organisation_id,
    result_files: [],
    seed: null,
    status: row.status,
    trained_tokens: num(row.trained_tokens),
    training_file: row.training_file,
    validation_file: row.validation_file,
    integrations: null,
    metadata: row.metadata,
    estimated_finish: null,
    suffix: row.suffix,
  } as JsonObject;
}

/** One page of items listed newest first: those after the `after` id, at most `limit`. */
function page<T extends JsonObject & { id: string }>(items: T[], query: URLSearchParams, fallback: number): JsonObject {
  const limit = queryInt(query, 'limit', fallback, 1, 100);
  const after = query.get('after');
  let start = 0;
  if (after) {
    const at = items.findIndex((i) => i.id === after);
    if (at < 0) throw Errors.badRequest(`No such item to list after: ${after}`, 'after');
    start = at + 1;
  }
  return listPage(items.slice(start, start + limit + 1), limit);
}

export class TranslatedFineTuning {
  constructor(private readonly deps: TranslatedFineTuningDeps) {}

  /** /v1/fine_tuning/jobs of a config without a provider that runs OpenAI's fine-tuning API as it is. */
  async handle(call: JobCall): Promise<Response> {
    // As before translators existed: a config whose provider has no fine-tuning at all is refused on every route.
    const native = await call.nativeFineTuning();
    if (!native)
      throw Errors.badRequest(
        "Fine-tuning runs at the provider: name one whose provider runs fine-tuning jobs (OpenAI's API, or one the gateway translates, such as Mistral) as the only target",
        'provider',
      );
    const [id, sub, ...extra] = segments(call.path, '/fine_tuning/jobs');
    const query = new URLSearchParams(call.search);
    if (extra.length) throw Errors.notFound('No such route');
    if (!id) {
      if (call.method === 'POST') return json(fineTuningJobObject(await this.create(call, native)));
      if (call.method === 'GET') return json(await this.list(call.caller.workspaceId, query));
    } else if (!sub && call.method === 'GET') return json(fineTuningJobObject((await this.refresh(call, await this.find(call, id))).row));
    else if (sub === 'cancel' && call.method === 'POST') return json(fineTuningJobObject(await this.cancel(call, await this.find(call, id))));
    else if (sub === 'events' && call.method === 'GET') return json(await this.events(call, await this.find(call, id), query));
    else if (sub === 'checkpoints' && call.method === 'GET') return json(await this.checkpoints(call, await this.find(call, id), query));
    throw Errors.notFound('No such route');
  }

  private async find(call: JobCall, id: string): Promise<JobRow> {
    const [row] = await this.deps.database.select(gatewayFineTuningJobs, { where: (c) => and(eq(c.id, id), eq(c.workspace_id, call.caller.workspaceId)), fresh: true });
    if (!row) throw Errors.notFound(`No such fine-tuning job: ${id}`);
    return row;
  }

  /** A gateway file of the workspace with purpose fine-tune, read. */
  private async file(call: JobCall, id: string, param: string): Promise<NativeFineTuningFile> {
    const row = await this.deps.files.find(call.caller.workspaceId, id).catch(() => undefined);
    if (!row) throw Errors.badRequest(`No such File object: ${id}`, param);
    if (row.purpose !== 'fine-tune') throw Errors.badRequest(`The file's purpose must be fine-tune, not ${row.purpose}`, param);
    return { id: row.id, filename: row.filename, content: await this.deps.files.content(call.caller.workspaceId, id) };
  }

  private context(call: JobCall, native: NativeFineTuningTarget, config: GatewayConfig): NativeFineTuningContext {
    return { target: native.target, send: (request) => call.send(request, config) };
  }

  private async create(call: JobCall, native: NativeFineTuningTarget): Promise<JobRow> {
    const body = parseBody(call.body);
    checkFineTuningJob(body);
    const trainingFile = await this.file(call, body.training_file as string, 'training_file');
    const validationFile = typeof body.validation_file === 'string' ? await this.file(call, body.validation_file, 'validation_file') : null;
    const id = newId('ftjob-');
    const job = await native.translator.create({ jobId: id, body, trainingFile, validationFile }, this.context(call, native, call.config));
    const row: JobRow = {
      id,
      organisation_id: call.caller.organisationId,
      workspace_id: call.caller.workspaceId,
      provider: native.providerId,
      upstream_id: job.id,
      model: body.model as string,
      training_file: trainingFile.id,
      validation_file: validationFile?.id ?? null,
      suffix: typeof body.suffix === 'string' ? body.suffix : null,
      metadata: (body.metadata ?? null) as Record<string, string> | null,
      created_at: nowSeconds(),
      config: this.deps.box.sealJson(call.config, configPlace(id)),
      ...this.state(job),
    };
    await this.deps.database.insert(gatewayFineTuningJobs, row);
    return row;
  }

  /** The columns that follow the provider's job. */
  private state(job: NativeFineTuningJob) {
    return {
      status: job.status,
      ended: job.ended,
      fine_tuned_model: job.fineTunedModel,
      finished_at: job.finishedAt,
      trained_tokens: job.trainedTokens,
      hyperparameters: job.hyperparameters,
      error: job.error as JsonObject | null,
    };
  }

  /** The provider's side of a job: the translator of the job's own config and a context; undefined if it is gone. */
  private async open(call: JobCall, row: JobRow) {
    const config = this.deps.box.openJson<GatewayConfig>(row.config, configPlace(row.id));
    const native = await call.nativeFineTuning(config);
    // The provider's plugin is no longer loaded (or the config names another): the job stays as last seen.
    if (!native || native.providerId !== row.provider) return undefined;
    return { native, ctx: this.context(call, native, config) };
  }

  private async record(row: JobRow, job: NativeFineTuningJob): Promise<JobRow> {
    const values = this.state(job);
    await this.deps.database.update(gatewayFineTuningJobs, values, (c) => eq(c.id, row.id));
    return { ...row, ...values };
  }

  /** The job as the provider shows it now (an ended job is as stored, without its events). */
  private async refresh(call: JobCall, row: JobRow): Promise<{ row: JobRow; job?: NativeFineTuningJob }> {
    if (row.ended) return { row };
    return this.read(call, row);
  }

  /** Asks the provider, whatever the stored state, and records the answer. */
  private async read(call: JobCall, row: JobRow): Promise<{ row: JobRow; job?: NativeFineTuningJob }> {
    const found = await this.open(call, row);
    if (!found) return { row };
    const job = await found.native.translator.retrieve(row.upstream_id, found.ctx);
    return { row: await this.record(row, job), job };
  }

  private async cancel(call: JobCall, row: JobRow): Promise<JobRow> {
    const current = (await this.refresh(call, row)).row;
    if (current.status === 'succeeded' || current.status === 'failed' || current.status === 'cancelled')
      throw Errors.conflict(`A fine-tuning job that is ${current.status} cannot be cancelled`, 'fine_tuning_job_id');
    const found = await this.open(call, current);
    if (!found) return current;
    return this.record(current, await found.native.translator.cancel(current.upstream_id, found.ctx));
  }

  private async list(workspaceId: string, query: URLSearchParams): Promise<JsonObject> {
    const limit = queryInt(query, 'limit', 20, 1, 100);
    const after = query.get('after');
    const [cursor] = after
      ? await this.deps.database.select(gatewayFineTuningJobs, { where: (c) => and(eq(c.id, after), eq(c.workspace_id, workspaceId)), fresh: true })
      : [];
    if (after && !cursor) throw Errors.badRequest(`No such fine-tuning job: ${after}`, 'after');
    const rows = await this.deps.database.select(gatewayFineTuningJobs, {
      where: (c) =>
        and(
          eq(c.workspace_id, workspaceId),
          cursor ? or(lt(c.created_at, cursor.created_at), and(eq(c.created_at, cursor.created_at), lt(c.id, cursor.id))) : undefined,
        ),
      orderBy: (c) => [desc(c.created_at), desc(c.id)],
      limit: limit + 1,
      fresh: true,
    });
    return listPage(rows.map(fineTuningJobObject) as (JsonObject & { id: string })[], limit);
  }

  /** OpenAI's fine_tuning.job.event list, newest first; ids follow the provider's order of events. */
  private async events(call: JobCall, row: JobRow, query: URLSearchParams): Promise<JsonObject> {
    const { job } = await this.read(call, row);
    const key = row.id.slice('ftjob-'.length);
    const items = (job?.events ?? []).map((e, i) => ({
      object: 'fine_tuning.job.event',
      id: `ftevent-${key}-${i}`,
      created_at: e.createdAt,
      level: e.level,
      message: e.message,
      data: e.data ?? {},
      type: 'message',
    }));
    return page(items.reverse() as (JsonObject & { id: string })[], query, 20);
  }

  /** OpenAI's fine_tuning.job.checkpoint list, newest step first. */
  private async checkpoints(call: JobCall, row: JobRow, query: URLSearchParams): Promise<JsonObject> {
    const { job } = await this.read(call, row);
    const key = row.id.slice('ftjob-'.length);
    const items = (job?.checkpoints ?? []).map((c) => ({
      object: 'fine_tuning.job.checkpoint',
      id: `ftckpt-${key}-${c.stepNumber}`,
      created_at: c.createdAt,
      fine_tuned_model_checkpoint: c.model,
      fine_tuning_job_id: row.id,
      step_number: c.stepNumber,
      metrics: { step: c.stepNumber, ...c.metrics },
    }));
    return page(items.reverse() as (JsonObject & { id: string })[], query, 10);
  }
}
