import { describe, expect, test } from 'bun:test';
import type { NativeBatchContext, UpstreamRequest } from '@gateway/sdk';
import { anthropicBatches, fromMessageBatch, fromResultLine } from './batches.ts';

const batch = (over: Record<string, unknown>) => ({
  id: 'msgbatch_1',
  type: 'message_batch',
  processing_status: 'in_progress',
  request_counts: { processing: 3, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
  ended_at: null,
  created_at: '2026-01-01T00:00:00Z',
  expires_at: '2026-01-02T00:00:00Z',
  archived_at: null,
  cancel_initiated_at: null,
  results_url: null,
  ...over,
});

function context(answers: Response[] = [], sent: UpstreamRequest[] = []): NativeBatchContext {
  return {
    target: { provider: 'anthropic' },
    endpoint: '/v1/chat/completions',
    strictWireCompliance: true,
    send: async (request) => {
      sent.push(request);
      return answers.shift() ?? new Response('{}');
    },
  };
}

describe('fromMessageBatch', () => {
  test('in_progress and canceling; counts: succeeded completed, errored + canceled + expired failed', () => {
    expect(fromMessageBatch(batch({}))).toMatchObject({ id: 'msgbatch_1', status: 'in_progress', counts: { total: 3, completed: 0, failed: 0 }, at: { in_progress_at: 1767225600 } });
    const canceling = fromMessageBatch(batch({ processing_status: 'canceling', cancel_initiated_at: '2026-01-01T00:01:00Z' }));
    expect(canceling).toMatchObject({ status: 'cancelling', at: { cancelling_at: 1767225660 } });
  });

  test('ended: cancelled when a cancel was asked, expired when requests expired, completed otherwise; results_url kept', () => {
    const counts = { processing: 0, succeeded: 2, errored: 1, canceled: 0, expired: 0 };
    const done = fromMessageBatch(batch({ processing_status: 'ended', request_counts: counts, ended_at: '2026-01-01T01:00:00Z', results_url: 'https://api.anthropic.com/v1/messages/batches/msgbatch_1/results' }));
    expect(done).toMatchObject({ status: 'completed', counts: { total: 3, completed: 2, failed: 1 }, at: { completed_at: 1767229200 }, ref: { results_url: 'https://api.anthropic.com/v1/messages/batches/msgbatch_1/results' } });
    expect(fromMessageBatch(batch({ processing_status: 'ended', request_counts: { ...counts, expired: 1 } })).status).toBe('expired');
    expect(fromMessageBatch(batch({ processing_status: 'ended', cancel_initiated_at: '2026-01-01T00:01:00Z', request_counts: { ...counts, canceled: 1 } })).status).toBe('cancelled');
  });
});

describe('fromResultLine', () => {
  test('succeeded: the message as a chat completion; errored: the error with its status; canceled and expired: no answer', () => {
    const ctx = context();
    const message = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 1 } };
    expect(fromResultLine({ custom_id: 'a', result: { type: 'succeeded', message } }, ctx)).toMatchObject({
      customId: 'a',
      response: { statusCode: 200, body: { object: 'chat.completion', model: 'claude-x', choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }] } },
    });
    const errored = { custom_id: 'b', result: { type: 'errored', error: { type: 'error', error: { type: 'not_found_error', message: 'no model' } } } };
    expect(fromResultLine(errored, ctx)).toEqual({ customId: 'b', response: { statusCode: 404, body: { error: { message: 'no model', type: 'not_found_error', param: null, code: null } } } });
    expect(fromResultLine({ custom_id: 'c', result: { type: 'canceled' } }, ctx)?.error?.code).toBe('batch_cancelled');
    expect(fromResultLine({ custom_id: 'd', result: { type: 'expired' } }, ctx)?.error?.code).toBe('batch_expired');
    expect(fromResultLine({ result: { type: 'canceled' } }, ctx)).toBeUndefined();
  });
});

describe('anthropicBatches', () => {
  test('check: a custom_id Anthropic refuses is a line error', () => {
    const line = (customId: string, n: number) => ({ line: n, customId, body: { model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] } });
    expect(anthropicBatches.check?.([line('ok-1_A', 1), line('not ok', 2), line('x'.repeat(65), 3)], context()).map((e) => [e.line, e.code])).toEqual([
      [2, 'invalid_custom_id'],
      [3, 'invalid_custom_id'],
    ]);
  });

  test("results are read from the results URL's path under the target's base, never from the URL's host", async () => {
    const sent: UpstreamRequest[] = [];
    const lines = `${JSON.stringify({ custom_id: 'c', result: { type: 'canceled' } })}\n`;
    const out: unknown[] = [];
    for await (const r of anthropicBatches.results('msgbatch_1', context([new Response(lines)], sent), { results_url: 'https://elsewhere.example/v1/messages/batches/msgbatch_1/results?x=1' }, ['c']))
      out.push(r);
    expect(sent).toEqual([{ method: 'GET', path: '/messages/batches/msgbatch_1/results?x=1' }]);
    expect(out).toHaveLength(1);
  });

  test("a refusal is the provider's error, status and message kept", async () => {
    const refusal = Response.json({ type: 'error', error: { type: 'invalid_request_error', message: 'requests: too many' } }, { status: 400 });
    const error = await anthropicBatches.create([], context([refusal]), { batchId: 'batch_1', completionWindow: '24h', metadata: null }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, message: 'requests: too many' });
  });
});
