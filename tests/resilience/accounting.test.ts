// Fault injection, part 3: what routing leaves behind. A fallback whose first target fails answers with the second
// target's model and usage, and the request log (read from the gateway's SQLite file after a graceful SIGTERM)
// holds every attempt, the failed ones and the successful one, under the request's single trace id. Then weighted
// loadbalancing through the real server: 400 requests over weights 3:1 land near 75/25.

import { describe, expect, test } from 'bun:test';
import { jsonColumn, type Row } from '../helpers/e2e-database.ts';
import { frames } from '../mocks/openai-server.ts';
import { ask, client, leaf, useResilienceStack } from './support.ts';

const T = 20_000;
const stack = useResilienceStack();
const run = crypto.randomUUID().slice(0, 8);
const trace = (name: string) => `resilience-${run}-${name}`;

const A = () => stack().mocks[0];
const B = () => stack().mocks[1];
const gw = () => stack().gw;

/** What each fallback call expects of its request_logs row. */
const expected = new Map<string, { attempts: { index: string; retry: number; status: number }[]; usage: [number, number, number]; content: string }>();

const FALLBACK_USAGE = { prompt_tokens: 11, completion_tokens: 22, total_tokens: 33 };
const fallbackCompletion = {
  id: 'chatcmpl-from-the-fallback',
  object: 'chat.completion',
  created: 1_750_000_000,
  model: 'gpt-4.1-2025-04-14',
  system_fingerprint: 'fp_fallback',
  choices: [{ index: 0, message: { role: 'assistant', content: 'answer from the fallback', refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
  usage: FALLBACK_USAGE,
};

function fallbackConfig(firstRetry?: number) {
  return {
    strategy: { mode: 'fallback' },
    targets: [
      leaf(A(), { override_params: { model: 'gpt-4o-mini' }, ...(firstRetry ? { retry: { attempts: firstRetry } } : {}) }),
      leaf(B(), { override_params: { model: 'gpt-4.1' } }),
    ],
  };
}

describe('fallback accounting', () => {
  test('first target 500: the answer (model, usage) is the second target’s', async () => {
    A().reset();
    B().reset();
    A().enqueue({ kind: 'error', status: 500, message: 'Primary broke (accounting).' });
    B().enqueue({ kind: 'respond', body: fallbackCompletion });
    const a = await ask(client(gw(), fallbackConfig(), { 'x-gateway-trace-id': trace('plain') }), false, 'who answers?');
    expect(a.status).toBe(200);
    expect(a.completion!.model).toBe('gpt-4.1-2025-04-14');
    expect(a.completion!.id).toBe('chatcmpl-from-the-fallback');
    expect(a.completion!.usage).toEqual(FALLBACK_USAGE);
    expect(a.text).toBe('answer from the fallback');
    expect(a.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    expect(a.headers.get('x-gateway-trace-id')).toBe(trace('plain'));
    expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('0');
    // Each target got its own parameters.
    expect((A().requests[0]!.json as { model: string }).model).toBe('gpt-4o-mini');
    expect((B().requests[0]!.json as { model: string }).model).toBe('gpt-4.1');
    expected.set(trace('plain'), {
      attempts: [
        { index: 'config.targets[0]', retry: 0, status: 500 },
        { index: 'config.targets[1]', retry: 0, status: 200 },
      ],
      usage: [11, 22, 33],
      content: 'answer from the fallback',
    });
  }, T);

  test('first target 500 with one retry, streamed: chunks and usage of the second target', async () => {
    A().reset();
    B().reset();
    A().setBehavior({ kind: 'error', status: 500, message: 'Primary broke (accounting).' });
    B().enqueue({ kind: 'stream', frames: frames.chat('streamed from the fallback', { model: 'gpt-4.1-2025-04-14', includeUsage: true, promptTokens: 11 }) });
    const a = await ask(client(gw(), fallbackConfig(1), { 'x-gateway-trace-id': trace('stream') }), true, 'who streams?', { stream_options: { include_usage: true } });
    expect(a.error).toBeUndefined();
    expect(a.text).toBe('streamed from the fallback');
    expect(a.chunks.every((c) => c.model === 'gpt-4.1-2025-04-14')).toBe(true);
    expect(a.chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 });
    expect(a.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    expect(A().requests).toHaveLength(2);
    expect(B().requests).toHaveLength(1);
    expected.set(trace('stream'), {
      attempts: [
        { index: 'config.targets[0]', retry: 0, status: 500 },
        { index: 'config.targets[0]', retry: 1, status: 500 },
        { index: 'config.targets[1]', retry: 0, status: 200 },
      ],
      usage: [11, 4, 15],
      content: 'streamed from the fallback',
    });
    A().setBehavior(null);
  }, T);
});

describe('weighted loadbalance through the real server', () => {
  test('400 requests over weights 3:1 land within ±8 points of 75/25, and the header names the target', async () => {
    A().reset();
    B().reset();
    const config = { strategy: { mode: 'loadbalance' }, targets: [leaf(A(), { weight: 3 }), leaf(B(), { weight: 1 })] };
    const c = client(gw(), config, { 'x-gateway-trace-id': trace('lb') });
    const N = 400;
    const byHeader: Record<string, number> = {};
    let next = 0;
    const worker = async () => {
      while (next < N) {
        const i = next++;
        const a = await ask(c, i % 4 === 3, `lb ${i}`);
        expect(a.status).toBe(200);
        expect(a.text).toBe(`You said: lb ${i}`);
        const index = a.headers.get('x-gateway-last-used-option-index') ?? 'none';
        byHeader[index] = (byHeader[index] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: 20 }, worker));
    const onA = A().requests.length;
    const onB = B().requests.length;
    expect(onA + onB).toBe(N);
    const shareA = (100 * onA) / N;
    expect(shareA).toBeGreaterThanOrEqual(75 - 8);
    expect(shareA).toBeLessThanOrEqual(75 + 8);
    expect(byHeader).toEqual({ 'config.targets[0]': onA, 'config.targets[1]': onB });
  }, 40_000);

  test('a weight of 0 is never chosen', async () => {
    A().reset();
    B().reset();
    const config = { strategy: { mode: 'loadbalance' }, targets: [leaf(A(), { weight: 1 }), leaf(B(), { weight: 0 })] };
    const c = client(gw(), config);
    await Promise.all(Array.from({ length: 40 }, (_, i) => ask(c, false, `zero ${i}`)));
    expect(A().requests).toHaveLength(40);
    expect(B().requests).toHaveLength(0);
  }, T);
});

describe('the request log after a graceful stop', () => {
  let rows: Row[] = [];

  test('SIGTERM flushes the log and the process exits 0', async () => {
    expect(expected.size).toBe(2); // the fallback calls above ran
    expect(await gw().stop()).toBe(0);
    rows = await stack().db.query('SELECT * FROM request_logs');
    expect(rows.length).toBeGreaterThan(0);
  }, T);

  test('one row per fallback request, with the failed attempts and the successful one under its trace id', () => {
    for (const [traceId, want] of expected) {
      const mine = rows.filter((r) => r.trace_id === traceId);
      expect({ traceId, rows: mine.length }).toEqual({ traceId, rows: 1 });
      const row = mine[0]!;
      expect({ traceId, status: Number(row.status), target_index: row.target_index, provider: row.provider }).toEqual({
        traceId,
        status: 200,
        target_index: 'config.targets[1]',
        provider: 'openai',
      });
      const attempts = jsonColumn<{ index: string; providerId: string; retry: number; status: number; latencyMs: number; error?: string }[]>(row.attempts)!;
      expect(attempts.map(({ index, retry, status }) => ({ index, retry, status }))).toEqual(want.attempts);
      for (const at of attempts) {
        expect(at.providerId).toBe('openai');
        expect(at.latencyMs).toBeGreaterThanOrEqual(0);
        if (at.status >= 400) expect(at.error).toContain('Primary broke (accounting).');
        else expect(at.error).toBeUndefined();
      }
      expect([Number(row.prompt_tokens), Number(row.completion_tokens), Number(row.total_tokens)]).toEqual(want.usage);
      expect(String(row.response_body)).toContain(want.content.split(' ')[0]!);
      expect(row.error_code).toBeNull();
    }
  });

  test('the loadbalanced requests were logged too, each with the target that answered', () => {
    const lb = rows.filter((r) => r.trace_id === trace('lb'));
    expect(lb).toHaveLength(400);
    const targets = new Set(lb.map((r) => r.target_index));
    expect([...targets].sort()).toEqual(['config.targets[0]', 'config.targets[1]']);
    expect(lb.every((r) => Number(r.status) === 200 && jsonColumn<unknown[]>(r.attempts)!.length === 1)).toBe(true);
  });
});
