/**
 * OpenAI's /v1/batches over Anthropic's Message Batches API (sdk native-batches.ts): each chat line becomes a request
 * `{custom_id, params}` of POST /v1/messages/batches, its params the line's body translated as a chat call is
 * (toAnthropicRequest); GET /v1/messages/batches/{id} gives `processing_status` (in_progress, canceling, ended) and
 * `request_counts`; POST …/cancel cancels; the results are JSONL lines `{custom_id, result: {type: succeeded |
 * errored | canceled | expired, …}}`, each message translated back as a chat answer is (fromAnthropicResponse).
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
import { anthropicErrorInfo, statusOfErrorType } from './errors.ts';
import { toAnthropicRequest } from './request.ts';
import { fromAnthropicResponse } from './response.ts';
import { isObject, num, str } from './shared.ts';

/** Anthropic's rule for a batch request's custom_id. */
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/** A chat translation's context: of a line's request (`body`), or of an answer (the model it names). */
function translateContext(model: unknown, ctx: NativeBatchContext, body?: JsonObject): TranslateContext {
  const out: TranslateContext = { endpoint: 'chatComplete', model: str(model), strictWireCompliance: ctx.strictWireCompliance, now: Math.floor(Date.now() / 1000) };
  if (body) out.body = body;
  return out;
}

const seconds = (iso: unknown): number | undefined => {
  const ms = typeof iso === 'string' ? Date.parse(iso) : Number.NaN;
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
};

/** Reads an answer's JSON, or throws the provider's error (status and message kept). */
async function answer(response: Response): Promise<JsonObject> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!response.ok || !isObject(json)) {
    const info = anthropicErrorInfo(json);
    throw Errors.provider('anthropic', response.ok ? 502 : response.status, info?.message ?? (text.slice(0, 500) || `Anthropic answered ${response.status}`), info?.type);
  }
  return json;
}

/** A MessageBatch object as the gateway's batch state. */
export function fromMessageBatch(batch: JsonObject): NativeBatchState & { id: string } {
  const counts = isObject(batch.request_counts) ? batch.request_counts : {};
  const [processing, succeeded, errored, canceled, expired] = ['processing', 'succeeded', 'errored', 'canceled', 'expired'].map((k) => num(counts[k])) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const cancelAsked = seconds(batch.cancel_initiated_at);
  const ended = seconds(batch.ended_at);
  let status: BatchStatus = 'in_progress';
  if (batch.processing_status === 'canceling') status = 'cancelling';
  else if (batch.processing_status === 'ended') status = cancelAsked !== undefined ? 'cancelled' : expired > 0 ? 'expired' : 'completed';
  const at: NativeBatchState['at'] = { in_progress_at: seconds(batch.created_at) };
  if (cancelAsked !== undefined) at.cancelling_at = cancelAsked;
  if (ended !== undefined && status !== 'in_progress' && status !== 'cancelling') at[`${status}_at` as 'completed_at'] = ended;
  const ref: JsonObject = {};
  if (typeof batch.results_url === 'string') ref.results_url = batch.results_url;
  return {
    id: String(batch.id),
    status,
    counts: { total: processing + succeeded + errored + canceled + expired, completed: succeeded, failed: errored + canceled + expired },
    at,
    ...(Object.keys(ref).length ? { ref } : {}),
  };
}

/** One results line as an OpenAI batch line's outcome. */
export function fromResultLine(entry: JsonObject, ctx: NativeBatchContext): NativeBatchResult | undefined {
  const customId = str(entry.custom_id);
  const result = isObject(entry.result) ? entry.result : undefined;
  if (customId === undefined || !result) return undefined;
  switch (result.type) {
    case 'succeeded': {
      const message = isObject(result.message) ? result.message : {};
      return { customId, response: { statusCode: 200, body: fromAnthropicResponse(message, translateContext(message.model, ctx)) } };
    }
    case 'errored': {
      // `error` is Anthropic's error body `{type: 'error', error: {type, message}}`.
      const info = anthropicErrorInfo(result.error) ?? { message: 'The request failed at Anthropic.', type: 'api_error' };
      return { customId, response: { statusCode: statusOfErrorType(info.type), body: { error: { message: info.message, type: info.type ?? 'api_error', param: null, code: null } } } };
    }
    case 'canceled':
      return { customId, error: { code: 'batch_cancelled', message: 'The batch was cancelled before this request ran.' } };
    case 'expired':
      return { customId, error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' } };
    default:
      return undefined;
  }
}

/** The path of a results URL under the API's base (`…/v1`), so that it goes to the target's host and nowhere else. */
function resultsPath(id: string, ref: JsonObject | undefined): string {
  const url = typeof ref?.results_url === 'string' ? URL.parse(ref.results_url) : null;
  const path = url?.pathname.startsWith('/v1/') ? url.pathname.slice(3) + url.search : undefined;
  return path ?? `/messages/batches/${encodeURIComponent(id)}/results`;
}

/** The lines of a JSONL body as they arrive. */
async function* jsonLines(response: Response): AsyncGenerator<unknown> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let rest = '';
  const parse = (line: string) => {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      return undefined;
    }
  };
  for await (const chunk of response.body) {
    rest += decoder.decode(chunk, { stream: true });
    let end = rest.indexOf('\n');
    while (end >= 0) {
      const line = rest.slice(0, end).trim();
      rest = rest.slice(end + 1);
      if (line) yield parse(line);
      end = rest.indexOf('\n');
    }
  }
  rest += decoder.decode();
  if (rest.trim()) yield parse(rest.trim());
}

export const anthropicBatches: NativeBatchTranslator = {
  endpoints: ['/v1/chat/completions'],

  check(lines: readonly NativeBatchLine[], ctx: NativeBatchContext): NativeBatchLineError[] {
    const errors: NativeBatchLineError[] = [];
    for (const l of lines) {
      if (!CUSTOM_ID.test(l.customId)) {
        errors.push({ line: l.line, code: 'invalid_custom_id', message: "Anthropic's batches take a custom_id of 1 to 64 letters, digits, '_' and '-'.", param: 'custom_id' });
        continue;
      }
      try {
        toAnthropicRequest(l.body, ctx.target, translateContext(l.body.model, ctx, l.body));
      } catch (error) {
        const e = error as { message?: string; param?: string | null };
        errors.push({ line: l.line, code: 'invalid_request', message: e.message ?? 'This request cannot be sent to Anthropic.', param: e.param ?? null });
      }
    }
    return errors;
  },

  async create(lines, ctx) {
    const requests = lines.map((l) => ({ custom_id: l.customId, params: toAnthropicRequest(l.body, ctx.target, translateContext(l.body.model, ctx, l.body)) }));
    return fromMessageBatch(await answer(await ctx.send({ method: 'POST', path: '/messages/batches', body: { requests } })));
  },

  async retrieve(id, ctx) {
    return fromMessageBatch(await answer(await ctx.send({ method: 'GET', path: `/messages/batches/${encodeURIComponent(id)}` })));
  },

  async cancel(id, ctx) {
    return fromMessageBatch(await answer(await ctx.send({ method: 'POST', path: `/messages/batches/${encodeURIComponent(id)}/cancel` })));
  },

  async *results(id, ctx, ref) {
    const response = await ctx.send({ method: 'GET', path: resultsPath(id, ref) });
    if (!response.ok) await answer(response);
    for await (const entry of jsonLines(response)) {
      const result = isObject(entry) ? fromResultLine(entry, ctx) : undefined;
      if (result) yield result;
    }
  },
};
