/**
 * Anthropic's Message Batches API, as the local Anthropic server speaks it: POST /v1/messages/batches (`{requests:
 * [{custom_id, params}]}`, 1..100,000 requests, custom_id `^[a-zA-Z0-9_-]{1,64}$` and unique), GET
 * /v1/messages/batches/{id}, POST /v1/messages/batches/{id}/cancel and GET /v1/messages/batches/{id}/results (JSONL,
 * once ended). The MessageBatch object: `{id, type: 'message_batch', processing_status: in_progress | canceling |
 * ended, request_counts: {processing, succeeded, errored, canceled, expired}, ended_at, created_at, expires_at,
 * archived_at, cancel_initiated_at, results_url}` with RFC 3339 times. Each request's params are checked and answered
 * as POST /v1/messages would be, when the batch is processed (Anthropic validates them asynchronously: a bad one ends
 * `errored`).
 *
 * Processing is driven by the tests: a batch ends when it is retrieved after `endAfterPolls` polls (default 1: the
 * second GET sees it ended), or never while `hold` is set; a cancelled one ends with its requests `canceled` at the
 * next GET. Results are written in reverse input order (Anthropic's are in any order).
 */
import { isObj, type Obj, parseJson } from '../../mocks/harness.ts';

type Answerer = (body: Obj, id: string) => { message: Obj } | { error: { status: number; type: string; message: string } };

interface Batch {
  id: string;
  requests: { custom_id: string; params: unknown }[];
  status: 'in_progress' | 'canceling' | 'ended';
  polls: number;
  createdAt: Date;
  cancelAt: Date | null;
  endedAt: Date | null;
  results: Obj[];
  origin: string;
}

const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

function error(status: number, type: string, message: string): Response {
  return Response.json({ type: 'error', error: { type, message }, request_id: 'req_batch_test' }, { status });
}

export class MessageBatches {
  /** While set, new and running batches stay in_progress (a cancel still ends them). */
  hold = false;
  endAfterPolls = 1;
  readonly all = new Map<string, Batch>();

  constructor(private readonly answer: Answerer) {}

  handle(request: Request, url: URL, text: string): Response {
    const rest = url.pathname.slice('/v1/messages/batches'.length).split('/').filter(Boolean);
    if (!rest.length) {
      if (request.method !== 'POST') return error(405, 'invalid_request_error', `Method ${request.method} not allowed`);
      if (!(request.headers.get('content-type') ?? '').includes('application/json')) return error(400, 'invalid_request_error', 'content-type must be application/json');
      return this.create(text, url.origin);
    }
    const batch = this.all.get(rest[0] as string);
    if (!batch) return error(404, 'not_found_error', `No batch found with id ${rest[0]}`);
    if (rest.length === 1 && request.method === 'GET') return Response.json(this.object(this.poll(batch)));
    if (rest[1] === 'cancel' && rest.length === 2 && request.method === 'POST') return Response.json(this.object(this.cancel(batch)));
    if (rest[1] === 'results' && rest.length === 2 && request.method === 'GET') {
      if (batch.status !== 'ended') return error(400, 'invalid_request_error', `Batch ${batch.id} is still ${batch.status}; results are available once it has ended.`);
      return new Response(`${[...batch.results].reverse().map((r) => JSON.stringify(r)).join('\n')}\n`, { headers: { 'content-type': 'application/binary' } });
    }
    return error(404, 'not_found_error', `Not found: ${request.method} ${url.pathname}`);
  }

  private create(text: string, origin: string): Response {
    const body = parseJson(text)?.value;
    if (!isObj(body)) return error(400, 'invalid_request_error', 'The request body must be a JSON object.');
    for (const key of Object.keys(body)) if (key !== 'requests') return error(400, 'invalid_request_error', `${key}: Extra inputs are not permitted`);
    if (!Array.isArray(body.requests) || body.requests.length < 1 || body.requests.length > 100_000)
      return error(400, 'invalid_request_error', 'requests: List should have at least 1 item after validation');
    const seen = new Set<string>();
    for (const [i, r] of body.requests.entries()) {
      if (!isObj(r)) return error(400, 'invalid_request_error', `requests.${i}: Input should be a valid dictionary`);
      for (const key of Object.keys(r)) if (key !== 'custom_id' && key !== 'params') return error(400, 'invalid_request_error', `requests.${i}.${key}: Extra inputs are not permitted`);
      if (typeof r.custom_id !== 'string' || !CUSTOM_ID.test(r.custom_id))
        return error(400, 'invalid_request_error', `requests.${i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
      if (seen.has(r.custom_id)) return error(400, 'invalid_request_error', `Duplicate custom_id ${r.custom_id}: custom_id must be unique within a batch.`);
      seen.add(r.custom_id);
      if (!isObj(r.params)) return error(400, 'invalid_request_error', `requests.${i}.params: Field required`);
      if (r.params.stream === true) return error(400, 'invalid_request_error', `requests.${i}.params.stream: streaming is not supported in batches`);
    }
    const id = `msgbatch_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const batch: Batch = {
      id,
      requests: body.requests as Batch['requests'],
      status: 'in_progress',
      polls: 0,
      createdAt: new Date(),
      cancelAt: null,
      endedAt: null,
      results: [],
      origin,
    };
    this.all.set(id, batch);
    return Response.json(this.object(batch));
  }

  private poll(batch: Batch): Batch {
    if (batch.status === 'canceling') this.end(batch, 'canceled');
    else if (batch.status === 'in_progress' && !this.hold && ++batch.polls > this.endAfterPolls) this.end(batch);
    return batch;
  }

  private cancel(batch: Batch): Batch {
    if (batch.status === 'in_progress') {
      batch.status = 'canceling';
      batch.cancelAt = new Date();
    }
    return batch;
  }

  /** Processes every request (or cancels the remaining ones) and ends the batch. */
  private end(batch: Batch, remaining?: 'canceled'): void {
    batch.results = batch.requests.map((r, i) => {
      if (remaining) return { custom_id: r.custom_id, result: { type: remaining } };
      const outcome = this.answer(r.params as Obj, `msg_batch_${i + 1}`);
      if ('message' in outcome) return { custom_id: r.custom_id, result: { type: 'succeeded', message: outcome.message } };
      return { custom_id: r.custom_id, result: { type: 'errored', error: { type: 'error', error: { type: outcome.error.type, message: outcome.error.message } } } };
    });
    batch.status = 'ended';
    batch.endedAt = new Date();
  }

  object(batch: Batch): Obj {
    const count = (type: string) => batch.results.filter((r) => isObj(r.result) && r.result.type === type).length;
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: batch.status,
      request_counts: {
        processing: batch.status === 'ended' ? 0 : batch.requests.length,
        succeeded: count('succeeded'),
        errored: count('errored'),
        canceled: count('canceled'),
        expired: count('expired'),
      },
      ended_at: batch.endedAt?.toISOString() ?? null,
      created_at: batch.createdAt.toISOString(),
      expires_at: new Date(batch.createdAt.getTime() + 24 * 3600_000).toISOString(),
      archived_at: null,
      cancel_initiated_at: batch.cancelAt?.toISOString() ?? null,
      results_url: batch.status === 'ended' ? `${batch.origin}/v1/messages/batches/${batch.id}/results` : null,
    };
  }
}
