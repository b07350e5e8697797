/**
 * OpenAI batch lines ⇄ Bedrock batch inference records, for jobs of the `Converse` invocation type: each record's
 * `modelInput` is the Converse request body (the one chat.ts builds for POST /model/{id}/converse) and each
 * `modelOutput` a Converse answer, translated back by chat.ts's `converseResponse`. One record per line:
 *
 *   input   {"recordId": "R0000000001", "modelInput": {…Converse body…}}
 *   output  {"recordId": "R0000000001", "modelInput": {…}, "modelOutput": {…Converse answer…}}
 *           {"recordId": "R0000000002", "modelInput": {…}, "error": {"errorCode": 400, "errorMessage": "…"}}
 *
 * Record ids are the requests' positions in the input (Bedrock documents them as alphanumeric strings, an OpenAI
 * custom_id may be any string), so an answer finds its custom_id whatever order Bedrock writes them in.
 */
import { Errors, GatewayError, type JsonObject, type NativeBatchLine, type NativeBatchLineError, type NativeBatchResult } from '@gateway/sdk';
import { converseRequest, converseResponse } from './chat.ts';

/** `R` and the request's 1-based position in ten digits: 11 alphanumeric characters, as Bedrock's examples have. */
export function recordIdOf(position: number): string {
  return `R${String(position).padStart(10, '0')}`;
}

/** The 1-based position of a record id this module made, or undefined. */
export function positionOfRecord(recordId: unknown): number | undefined {
  if (typeof recordId !== 'string' || !/^R\d{10}$/.test(recordId)) return undefined;
  return Number(recordId.slice(1));
}

/** The Converse body of a line: what is sent to the model, without the OpenAI fields a job does not take per record. */
export function modelInputOf(body: JsonObject, strictWireCompliance: boolean): JsonObject {
  // A job answers whole and names its model once.
  const { stream: _stream, stream_options: _options, ...rest } = body;
  return converseRequest(rest, { strictWireCompliance });
}

/** The model the lines name: a job runs one, so every line must name the same. */
export function batchModel(lines: readonly NativeBatchLine[]): { model?: string; errors: NativeBatchLineError[] } {
  const first = lines.find((l) => typeof l.body.model === 'string' && l.body.model !== '');
  const model = first?.body.model as string | undefined;
  const errors: NativeBatchLineError[] = [];
  for (const l of lines) {
    if (typeof l.body.model !== 'string' || l.body.model === '') {
      errors.push({ line: l.line, code: 'invalid_request', message: 'model is required: the Bedrock model id or inference profile', param: 'body.model' });
    } else if (l.body.model !== model) {
      errors.push({
        line: l.line,
        code: 'invalid_request',
        message: `A Bedrock batch inference job runs one model: this line names ${l.body.model}, the first ${model}`,
        param: 'body.model',
      });
    }
  }
  return { model, errors };
}

/** Lines whose body cannot become a Converse request (the reason chat.ts gives). */
export function untranslatableLines(lines: readonly NativeBatchLine[], strictWireCompliance: boolean): NativeBatchLineError[] {
  const errors: NativeBatchLineError[] = [];
  for (const l of lines) {
    try {
      modelInputOf(l.body, strictWireCompliance);
    } catch (error) {
      const err = GatewayError.from(error);
      errors.push({ line: l.line, code: err.code, message: err.message, param: err.param ? `body.${err.param}` : null });
    }
  }
  return errors;
}

/** The JSONL of the job's input. */
export function inputRecords(lines: readonly NativeBatchLine[], strictWireCompliance: boolean): string {
  return `${lines.map((l, i) => JSON.stringify({ recordId: recordIdOf(i + 1), modelInput: modelInputOf(l.body, strictWireCompliance) })).join('\n')}\n`;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The OpenAI error type of a record's HTTP-like error code. */
function errorType(status: number): string {
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

function errorResult(customId: string, statusCode: number, message: string, code: string | null): NativeBatchResult {
  return { customId, response: { statusCode, body: { error: { message, type: errorType(statusCode), param: null, code } } } };
}

export interface OutputContext {
  /** The batch's custom_ids in input order. */
  customIds: readonly string[];
  model: string;
  strictWireCompliance: boolean;
  /** Seconds since the epoch, for the completions' `created`. */
  now: number;
}

/**
 * One line of Bedrock's output file as an OpenAI batch result; undefined for a line that names no record of this
 * batch (blank, or not a record id made here).
 */
export function resultOfRecord(text: string, ctx: OutputContext): NativeBatchResult | undefined {
  if (!text.trim()) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(record)) return undefined;
  const position = positionOfRecord(record.recordId);
  const customId = position === undefined ? undefined : ctx.customIds[position - 1];
  if (customId === undefined) return undefined;
  if (isObject(record.error)) {
    const status = Number(record.error.errorCode);
    const statusCode = Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500;
    const message = typeof record.error.errorMessage === 'string' ? record.error.errorMessage : 'Bedrock reported an error for this record';
    return errorResult(customId, statusCode, message, null);
  }
  try {
    const completion = converseResponse(record.modelOutput, { endpoint: 'chatComplete', model: ctx.model, strictWireCompliance: ctx.strictWireCompliance, now: ctx.now });
    return { customId, response: { statusCode: 200, body: completion } };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    const err = Errors.upstreamInvalid('bedrock', detail);
    return errorResult(customId, err.status, err.message, err.code);
  }
}
