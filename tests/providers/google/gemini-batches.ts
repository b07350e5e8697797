/**
 * The Gemini API's batch mode, as the local Gemini server speaks it: POST /v1beta/models/{model}:batchGenerateContent
 * with `{batch: {displayName, inputConfig: {requests: {requests: [{request, metadata}]}}}}` (proto JSON: the
 * snake_case names are accepted too) answers a long-running Operation `{name: 'batches/<id>', metadata:
 * GenerateContentBatch}`; GET /v1beta/batches/{id} answers the Operation again — `metadata.state` BATCH_STATE_PENDING,
 * RUNNING, SUCCEEDED, CANCELLED; `metadata.batchStats` with int64 counts as strings — and once done `done: true` with
 * `response: GenerateContentBatchOutput {inlinedResponses: {inlinedResponses: [{response | error, metadata}]}}` in
 * input order (also in `metadata.output`), or, cancelled, `error: {code: 1, message}`. POST
 * /v1beta/batches/{id}:cancel answers `{}`. Each inlined request is answered as generateContent would answer it, a
 * refusal becoming that request's `error` (google.rpc.Status).
 *
 * Driven by the tests: the first GET sees the batch RUNNING, the one after `endAfterPolls` more SUCCEEDED (never
 * while `hold` is set); a cancelled batch is CANCELLED at once.
 */
import { isObj, type Obj, parseJson } from '../../mocks/harness.ts';
import { answerGemini, googleError } from './gemini-wire.ts';

const BATCH_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch';
const OUTPUT_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput';

interface Batch {
  name: string;
  model: string;
  displayName: string;
  requests: { request: Obj; metadata?: Obj }[];
  state: 'BATCH_STATE_PENDING' | 'BATCH_STATE_RUNNING' | 'BATCH_STATE_SUCCEEDED' | 'BATCH_STATE_CANCELLED';
  polls: number;
  createTime: string;
  updateTime: string;
  endTime?: string;
  responses?: Obj[];
}

const GRPC_CODES: Record<string, number> = { INVALID_ARGUMENT: 3, NOT_FOUND: 5, PERMISSION_DENIED: 7, RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, INTERNAL: 13, UNAVAILABLE: 14 };

const field = (o: Obj, camel: string, snake: string): unknown => o[camel] ?? o[snake];

export class GeminiBatches {
  hold = false;
  endAfterPolls = 1;
  readonly all = new Map<string, Batch>();

  /** POST models/{model}:batchGenerateContent. */
  async create(model: string, text: string): Promise<Response> {
    const body = parseJson(text)?.value;
    if (!isObj(body) || !isObj(body.batch)) return googleError(400, 'INVALID_ARGUMENT', '* BatchGenerateContentRequest.batch: batch is required');
    const batch = body.batch;
    for (const key of Object.keys(batch))
      if (!['displayName', 'display_name', 'inputConfig', 'input_config', 'priority', 'model'].includes(key))
        return googleError(400, 'INVALID_ARGUMENT', `Invalid JSON payload received. Unknown name "${key}" at 'batch': Cannot find field.`);
    const displayName = field(batch, 'displayName', 'display_name');
    if (typeof displayName !== 'string' || !displayName) return googleError(400, 'INVALID_ARGUMENT', '* GenerateContentBatch.display_name: display_name is required');
    const input = field(batch, 'inputConfig', 'input_config');
    const holder = isObj(input) ? input.requests : undefined;
    const requests = isObj(holder) ? holder.requests : undefined;
    if (!Array.isArray(requests) || !requests.length) return googleError(400, 'INVALID_ARGUMENT', '* GenerateContentBatch.input_config.requests: requests must not be empty');
    for (const [i, r] of requests.entries()) {
      if (!isObj(r) || !isObj(r.request)) return googleError(400, 'INVALID_ARGUMENT', `* InlinedRequests.requests[${i}].request: request is required`);
      for (const key of Object.keys(r))
        if (key !== 'request' && key !== 'metadata')
          return googleError(400, 'INVALID_ARGUMENT', `Invalid JSON payload received. Unknown name "${key}" at 'batch.input_config.requests.requests[${i}]': Cannot find field.`);
    }
    const now = new Date().toISOString();
    const name = `batches/${crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`;
    const created: Batch = { name, model: `models/${model}`, displayName, requests: requests as Batch['requests'], state: 'BATCH_STATE_PENDING', polls: 0, createTime: now, updateTime: now };
    this.all.set(name, created);
    return Response.json(this.operation(created));
  }

  /** GET batches/{id} and POST batches/{id}:cancel; undefined for another path. */
  async handle(request: Request, path: string): Promise<Response | undefined> {
    const m = /^\/v1beta\/(batches\/[^/:]+)(:cancel)?$/.exec(path);
    if (!m) return undefined;
    const batch = this.all.get(m[1] as string);
    if (!batch) return googleError(404, 'NOT_FOUND', `Requested entity was not found.`);
    if (m[2]) {
      if (request.method !== 'POST') return googleError(405, 'INVALID_ARGUMENT', `Method ${request.method} not allowed`);
      if (batch.state === 'BATCH_STATE_PENDING' || batch.state === 'BATCH_STATE_RUNNING') this.finish(batch, 'BATCH_STATE_CANCELLED');
      return Response.json({});
    }
    if (request.method !== 'GET') return googleError(405, 'INVALID_ARGUMENT', `Method ${request.method} not allowed`);
    if (batch.state === 'BATCH_STATE_PENDING') {
      batch.state = 'BATCH_STATE_RUNNING';
      batch.updateTime = new Date().toISOString();
    } else if (batch.state === 'BATCH_STATE_RUNNING' && !this.hold && ++batch.polls >= this.endAfterPolls) await this.run(batch);
    return Response.json(this.operation(batch));
  }

  private async run(batch: Batch): Promise<void> {
    const model = batch.model.slice('models/'.length);
    batch.responses = [];
    for (const r of batch.requests) {
      const answered = await answerGemini('generateContent', model, r.request, false);
      const json = (await answered.json()) as Obj;
      // A request's error is a google.rpc.Status: its code the gRPC one, not the HTTP status.
      const failure = isObj(json.error) ? json.error : {};
      const item: Obj = answered.ok ? { response: json } : { error: { code: GRPC_CODES[String(failure.status)] ?? 13, message: failure.message } };
      if (r.metadata) item.metadata = r.metadata;
      batch.responses.push(item);
    }
    this.finish(batch, 'BATCH_STATE_SUCCEEDED');
  }

  private finish(batch: Batch, state: Batch['state']): void {
    batch.state = state;
    batch.endTime = batch.updateTime = new Date().toISOString();
  }

  operation(batch: Batch): Obj {
    const total = batch.requests.length;
    const failed = batch.responses?.filter((r) => r.error).length ?? 0;
    const succeeded = batch.responses ? total - failed : 0;
    const stats: Obj = { requestCount: String(total) };
    if (batch.state === 'BATCH_STATE_SUCCEEDED') Object.assign(stats, { successfulRequestCount: String(succeeded), failedRequestCount: String(failed) });
    else if (batch.state !== 'BATCH_STATE_CANCELLED') stats.pendingRequestCount = String(total);
    const output = batch.responses ? { inlinedResponses: { inlinedResponses: batch.responses } } : undefined;
    const metadata: Obj = {
      '@type': BATCH_TYPE,
      model: batch.model,
      displayName: batch.displayName,
      ...(output ? { output } : {}),
      createTime: batch.createTime,
      ...(batch.endTime ? { endTime: batch.endTime } : {}),
      updateTime: batch.updateTime,
      batchStats: stats,
      state: batch.state,
      name: batch.name,
    };
    const op: Obj = { name: batch.name, metadata };
    if (batch.state === 'BATCH_STATE_SUCCEEDED') Object.assign(op, { done: true, response: { '@type': OUTPUT_TYPE, ...output } });
    if (batch.state === 'BATCH_STATE_CANCELLED') Object.assign(op, { done: true, error: { code: 1, message: 'CANCELLED' } });
    return op;
  }
}
