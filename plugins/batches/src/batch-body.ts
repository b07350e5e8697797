/** The checks of POST /v1/batches (SPEC.md), for gateway-run and forwarded batches alike. */
import { Errors, type JsonObject } from '@gateway/sdk';
import { checkMetadata } from './respond.ts';

/** The endpoints a batch may run, and the gateway call each line becomes. */
export const BATCH_ENDPOINTS = {
  '/v1/chat/completions': 'chatComplete',
  '/v1/completions': 'complete',
  '/v1/embeddings': 'embed',
  '/v1/moderations': 'moderate',
  // Each line a Responses call: native or translated by the pipeline, as POST /v1/responses is.
  '/v1/responses': 'responses',
} as const;
export type BatchEndpoint = keyof typeof BATCH_ENDPOINTS;

/** Completion windows and their length in seconds. */
export const COMPLETION_WINDOWS: Readonly<Record<string, number>> = { '24h': 24 * 3600 };

export interface BatchRequest {
  inputFileId: string;
  endpoint: BatchEndpoint;
  completionWindow: string;
  metadata: Record<string, string> | null;
}

export function checkBatchBody(body: JsonObject): BatchRequest {
  const { input_file_id: input, endpoint, completion_window: window } = body;
  if (typeof input !== 'string' || input === '') throw Errors.badRequest("Missing required parameter: 'input_file_id'", 'input_file_id');
  if (typeof endpoint !== 'string' || !(endpoint in BATCH_ENDPOINTS))
    throw Errors.badRequest(`endpoint must be one of ${Object.keys(BATCH_ENDPOINTS).join(', ')}`, 'endpoint');
  if (typeof window !== 'string' || COMPLETION_WINDOWS[window] === undefined)
    throw Errors.badRequest(`completion_window must be one of ${Object.keys(COMPLETION_WINDOWS).join(', ')}`, 'completion_window');
  return { inputFileId: input, endpoint: endpoint as BatchEndpoint, completionWindow: window, metadata: checkMetadata(body.metadata) };
}
