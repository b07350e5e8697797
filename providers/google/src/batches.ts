/**
 * OpenAI's /v1/batches over the Gemini API's batch mode (sdk native-batches.ts): the chat lines become inlined
 * requests of POST /v1beta/models/{model}:batchGenerateContent (`{batch: {displayName, inputConfig: {requests:
 * {requests: [{request, metadata: {key}}]}}}}`), each request the line's body translated as a chat call is
 * (toGeminiRequest). The answer is a long-running operation named `batches/{id}`; GET /v1beta/batches/{id} gives its
 * `metadata.state` (BATCH_STATE_PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED, EXPIRED) and `batchStats`, and once
 * done the inlined responses (`response.inlinedResponses.inlinedResponses[]`, in input order, each `{response |
 * error, metadata}`), each answer translated back as a chat answer is (fromGeminiResponse). POST …:cancel cancels.
 * A Gemini batch runs one model (it is in the URL): every line must name the same one.
 */
import {
  type BatchStatus,
  Errors,
  type JsonObject,
  type NativeBatchContext,
  type NativeBatchLine,
  type NativeBatchLineError,
  type NativeBatchResult,
  type NativeBatchState,
  type NativeBatchTranslator,
  type TranslateContext,
} from '@gateway/sdk';
import { toGeminiRequest } from './request.ts';
import { fromGeminiResponse, geminiError } from './response.ts';

const API = '/v1beta';

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

const STATES: Record<string, BatchStatus> = {
  BATCH_STATE_PENDING: 'validating',
  BATCH_STATE_RUNNING: 'in_progress',
  BATCH_STATE_SUCCEEDED: 'completed',
  BATCH_STATE_FAILED: 'failed',
  BATCH_STATE_CANCELLED: 'cancelled',
  BATCH_STATE_EXPIRED: 'expired',
};

/** google.rpc.Code → HTTP status, for a request's error inside the batch. */
const HTTP_OF_CODE: Record<number, number> = { 1: 499, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 16: 401 };

const GRPC_NAMES: Record<number, string> = {
  1: 'CANCELLED',
  3: 'INVALID_ARGUMENT',
  4: 'DEADLINE_EXCEEDED',
  5: 'NOT_FOUND',
  6: 'ALREADY_EXISTS',
  7: 'PERMISSION_DENIED',
  8: 'RESOURCE_EXHAUSTED',
  9: 'FAILED_PRECONDITION',
  10: 'ABORTED',
  11: 'OUT_OF_RANGE',
  12: 'UNIMPLEMENTED',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
  16: 'UNAUTHENTICATED',
};

/** `batches/abc` only: the id is put in a URL path. */
function batchName(id: string): string {
  if (!/^batches\/[A-Za-z0-9_-]+$/.test(id)) throw Errors.badRequest(`${JSON.stringify(id.slice(0, 100))} is not a Gemini batch name`);
  return id;
}

/** A model name safe in a URL path, as `models/<m>`. */
function modelResource(model: unknown): string | undefined {
  if (typeof model !== 'string' || !/^[A-Za-z0-9._@/-]+$/.test(model) || model.split('/').some((s) => s === '' || s === '.' || s === '..')) return undefined;
  return model.includes('/') ? model : `models/${model}`;
}

function translateContext(model: unknown, ctx: NativeBatchContext): TranslateContext {
  return { endpoint: 'chatComplete', model: typeof model === 'string' ? model : undefined, strictWireCompliance: ctx.strictWireCompliance, now: Math.floor(Date.now() / 1000) };
}

const seconds = (time: unknown): number | undefined => {
  const ms = typeof time === 'string' ? Date.parse(time) : Number.NaN;
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
};

/** int64 fields come as strings in JSON. */
const count = (value: unknown): number => (typeof value === 'string' || typeof value === 'number' ? Number(value) || 0 : 0);

async function answer(response: Response): Promise<JsonObject> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!response.ok || !isObject(json)) {
    const info = geminiError(json);
    throw Errors.provider('google', response.ok ? 502 : response.status, info?.message ?? (text.slice(0, 500) || `Gemini answered ${response.status}`), info?.type, info?.code ?? null);
  }
  return json;
}

/** The batch of an operation (its `metadata`, a GenerateContentBatch) as the gateway's batch state. */
export function fromBatchOperation(operation: JsonObject): NativeBatchState & { id: string } {
  const batch = isObject(operation.metadata) ? operation.metadata : {};
  const stats = isObject(batch.batchStats) ? batch.batchStats : {};
  const state = typeof batch.state === 'string' ? batch.state.replace(/^JOB_STATE_/, 'BATCH_STATE_') : '';
  let status: BatchStatus = STATES[state] ?? 'validating';
  // A done operation with an error and no final state: failed.
  if (operation.done === true && !['completed', 'cancelled', 'expired', 'failed'].includes(status)) status = 'failed';
  const at: NativeBatchState['at'] = {};
  const ended = seconds(batch.endTime);
  if (status === 'in_progress') at.in_progress_at = seconds(batch.updateTime);
  if (ended !== undefined && (status === 'completed' || status === 'cancelled' || status === 'expired' || status === 'failed')) at[`${status}_at` as 'completed_at'] = ended;
  const out: NativeBatchState & { id: string } = {
    id: String(operation.name ?? batch.name),
    status,
    counts: { total: count(stats.requestCount), completed: count(stats.successfulRequestCount), failed: count(stats.failedRequestCount) },
    at,
  };
  const error = isObject(operation.error) ? operation.error : undefined;
  if (status === 'failed')
    out.errors = [{ line: 0, code: 'batch_failed', message: typeof error?.message === 'string' ? error.message : 'The batch failed at Gemini.', param: null }];
  return out;
}

/** The inlined responses of a done operation (in `response`, or in the batch's `output`). */
function inlinedResponses(operation: JsonObject): unknown[] {
  const batch = isObject(operation.metadata) ? operation.metadata : {};
  for (const output of [operation.response, batch.output]) {
    const holder = isObject(output) && isObject(output.inlinedResponses) ? output.inlinedResponses : undefined;
    if (holder && Array.isArray(holder.inlinedResponses)) return holder.inlinedResponses;
  }
  return [];
}

/** One inlined response as an OpenAI batch line's outcome; `fallbackId`: the custom_id of its place in the input. */
export function fromInlinedResponse(item: JsonObject, fallbackId: string | undefined, ctx: NativeBatchContext, model: unknown): NativeBatchResult | undefined {
  const key = isObject(item.metadata) && typeof item.metadata.key === 'string' ? item.metadata.key : fallbackId;
  if (key === undefined) return undefined;
  if (isObject(item.response)) return { customId: key, response: { statusCode: 200, body: fromGeminiResponse(item.response, translateContext(model, ctx)) } };
  // A google.rpc.Status `{code, message}`: the gRPC code, named for the client as Google names it in HTTP errors.
  const error = isObject(item.error) ? item.error : {};
  const code = typeof error.code === 'number' ? error.code : 13;
  const info = geminiError({ error: { status: GRPC_NAMES[code], ...error } });
  return {
    customId: key,
    response: {
      statusCode: HTTP_OF_CODE[code] ?? 500,
      body: { error: { message: info?.message ?? 'The request failed at Gemini.', type: info?.type ?? 'provider_error', param: null, code: info?.code ?? null } },
    },
  };
}

export const geminiBatches: NativeBatchTranslator = {
  endpoints: ['/v1/chat/completions'],

  check(lines: readonly NativeBatchLine[], ctx: NativeBatchContext): NativeBatchLineError[] {
    const errors: NativeBatchLineError[] = [];
    const model = lines[0]?.body.model;
    for (const l of lines) {
      if (!modelResource(l.body.model)) {
        errors.push({ line: l.line, code: 'invalid_request', message: 'model must be a Gemini model name.', param: 'body.model' });
        continue;
      }
      if (l.body.model !== model) {
        errors.push({ line: l.line, code: 'mismatched_model', message: `A Gemini batch runs one model: every line must name ${String(model)}.`, param: 'body.model' });
        continue;
      }
      try {
        toGeminiRequest(l.body, { model: String(l.body.model), includeThoughts: !ctx.strictWireCompliance });
      } catch (error) {
        const e = error as { message?: string; param?: string | null };
        errors.push({ line: l.line, code: 'invalid_request', message: e.message ?? 'This request cannot be sent to Gemini.', param: e.param ?? null });
      }
    }
    return errors;
  },

  async create(lines, ctx, options) {
    const model = lines[0]?.body.model;
    const resource = modelResource(model);
    if (!resource) throw Errors.badRequest('model must be a Gemini model name', 'model');
    const requests = lines.map((l) => ({
      request: toGeminiRequest(l.body, { model: String(model), includeThoughts: !ctx.strictWireCompliance }),
      metadata: { key: l.customId },
    }));
    const body = { batch: { displayName: options.batchId, inputConfig: { requests: { requests } } } };
    const created = fromBatchOperation(await answer(await ctx.send({ method: 'POST', path: `${API}/${resource}:batchGenerateContent`, body })));
    return { ...created, ref: { model: String(model) } };
  },

  async retrieve(id, ctx) {
    return fromBatchOperation(await answer(await ctx.send({ method: 'GET', path: `${API}/${batchName(id)}` })));
  },

  async cancel(id, ctx) {
    // The answer is `{}`: the state after asking is read back.
    await answer(await ctx.send({ method: 'POST', path: `${API}/${batchName(id)}:cancel` }));
    const state = fromBatchOperation(await answer(await ctx.send({ method: 'GET', path: `${API}/${batchName(id)}` })));
    return state.status === 'validating' || state.status === 'in_progress' ? { ...state, status: 'cancelling' } : state;
  },

  async *results(id, ctx, ref, customIds) {
    const operation = await answer(await ctx.send({ method: 'GET', path: `${API}/${batchName(id)}` }));
    const model = ref?.model ?? (isObject(operation.metadata) ? operation.metadata.model : undefined);
    const items = inlinedResponses(operation);
    for (const [i, item] of items.entries()) {
      const result = isObject(item) ? fromInlinedResponse(item, customIds[i], ctx, model) : undefined;
      if (result) yield result;
    }
  },
};
