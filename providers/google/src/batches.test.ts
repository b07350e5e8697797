import { describe, expect, test } from 'bun:test';
import type { NativeBatchContext } from '@gateway/sdk';
import { fromBatchOperation, fromInlinedResponse, geminiBatches } from './batches.ts';

const ctx: NativeBatchContext = { target: { provider: 'google' }, endpoint: '/v1/chat/completions', strictWireCompliance: true, send: async () => new Response('{}') };
const op = (state: string, extra: Record<string, unknown> = {}) => ({
  name: 'batches/b1',
  metadata: { model: 'models/gemini-x', state, createTime: '2026-01-01T00:00:00Z', updateTime: '2026-01-01T00:00:10Z', batchStats: { requestCount: '3', successfulRequestCount: '2', failedRequestCount: '1' }, ...extra },
});

describe('fromBatchOperation', () => {
  test('the batch states map to the batch object states; int64 counts as strings', () => {
    expect(fromBatchOperation(op('BATCH_STATE_PENDING'))).toMatchObject({ id: 'batches/b1', status: 'validating', counts: { total: 3, completed: 2, failed: 1 } });
    expect(fromBatchOperation(op('BATCH_STATE_RUNNING'))).toMatchObject({ status: 'in_progress', at: { in_progress_at: 1767225610 } });
    expect(fromBatchOperation(op('BATCH_STATE_SUCCEEDED', { endTime: '2026-01-01T01:00:00Z' }))).toMatchObject({ status: 'completed', at: { completed_at: 1767229200 } });
    expect(fromBatchOperation(op('BATCH_STATE_CANCELLED')).status).toBe('cancelled');
    expect(fromBatchOperation(op('BATCH_STATE_EXPIRED')).status).toBe('expired');
    expect(fromBatchOperation(op('JOB_STATE_SUCCEEDED')).status).toBe('completed');
  });

  test('a failed batch carries the operation error as the batch error', () => {
    expect(fromBatchOperation({ ...op('BATCH_STATE_FAILED'), done: true, error: { code: 13, message: 'internal' } })).toMatchObject({
      status: 'failed',
      errors: [{ line: 0, code: 'batch_failed', message: 'internal', param: null }],
    });
  });
});

describe('fromInlinedResponse', () => {
  test('an answer becomes a chat completion keyed by its metadata; an error its HTTP status and Google status name', () => {
    const response = { candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 } };
    expect(fromInlinedResponse({ response, metadata: { key: 'a' } }, 'fallback', ctx, 'gemini-x')).toMatchObject({
      customId: 'a',
      response: { statusCode: 200, body: { object: 'chat.completion', model: 'gemini-x', choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }] } },
    });
    expect(fromInlinedResponse({ error: { code: 3, message: 'bad' } }, 'b', ctx, 'gemini-x')).toEqual({
      customId: 'b',
      response: { statusCode: 400, body: { error: { message: 'bad', type: 'invalid_request_error', param: null, code: 'INVALID_ARGUMENT' } } },
    });
    expect(fromInlinedResponse({ error: { code: 8, message: 'slow down' } }, 'c', ctx, 'm')?.response?.statusCode).toBe(429);
  });
});

describe('geminiBatches.check', () => {
  test('one model per batch, a model name safe in a URL', () => {
    const line = (model: string, n: number) => ({ line: n, customId: `r${n}`, body: { model, messages: [{ role: 'user', content: 'hi' }] } });
    expect(geminiBatches.check?.([line('gemini-x', 1), line('gemini-y', 2), line('../x', 3)], ctx).map((e) => [e.line, e.code])).toEqual([
      [2, 'mismatched_model'],
      [3, 'invalid_request'],
    ]);
  });

  test('an id that is not a batch name never reaches a URL', async () => {
    await expect(geminiBatches.retrieve('batches/../models', ctx, undefined)).rejects.toMatchObject({ status: 400 });
  });
});
