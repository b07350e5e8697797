// The engine's side of continuing a broken stream (issue #15): which attempt a committed stream's resumption calls
// next (the same target's retries, then the following fallback targets, nested ones included), how each is asked
// (prefill where the adapter declares it, else regenerate; a refused prefill regenerated on the same target), and
// what the attempt log says. Attempts are answered by an attempt stage, so no stream is involved here.
import { describe, expect, test } from 'bun:test';
import {
  assistantPrefill,
  type Attempt,
  type AttemptRecord,
  type AttemptResult,
  type AttemptStage,
  Errors,
  type GatewayConfig,
  type ProviderAdapter,
  type Strategy,
} from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import { type EngineDeps, type RoutedResult, route } from './engine.ts';
import { HostGuard } from './host-guard.ts';

const adapter = (id: string, prefill: boolean): ProviderAdapter => ({
  id,
  baseUrl: () => 'http://127.0.0.1:1',
  authorize: (call) => call,
  endpoints: { chatComplete: { path: () => '/chat/completions', ...(prefill ? { prefill: (body, text) => assistantPrefill(body, text) } : {}) } },
});

const fallback: Strategy = {
  mode: 'fallback',
  plan: (node) => (node.targets ?? []).map((_, i) => i),
  next: (result) => result.status >= 400,
};
const single: Strategy = { mode: 'single', plan: () => [0], next: () => false };

/** Every attempt the stage answered, and the statuses it is told to give (200 by default: a committed stream). */
function harness(statuses: Record<string, number[]> = {}) {
  const attempts: Attempt[] = [];
  const stage: AttemptStage = {
    name: 'answer',
    phase: 'attempt',
    rule: 'sequential',
    run: async (_req, attempt) => {
      attempts.push(attempt);
      const status = statuses[attempt.index]?.shift() ?? 200;
      if (status !== 200) {
        const error = Errors.provider(attempt.provider.id, status, status === 400 ? 'This model does not support assistant message prefill' : 'down');
        return { response: error.toResponse(), status, providerId: attempt.provider.id, error, settled: Promise.resolve({ body: undefined, error }) };
      }
      const result: AttemptResult = { response: new Response('data: x\n\n'), status: 200, providerId: attempt.provider.id, settled: Promise.resolve({ body: '' }), resumption: {} };
      return result;
    },
  };
  const deps: EngineDeps = {
    strategies: new Map([fallback, single].map((s) => [s.mode, s])),
    attemptStages: [stage],
    call: { hostGuard: new HostGuard([]), captureLimit: 1024, streamIdleTimeoutMs: 1000, defaultTimeoutMs: 1000 },
    resolveProvider: (target) => ({ provider: adapter(String(target.provider), String(target.provider).startsWith('p')), target }),
  };
  return { attempts, deps };
}

const broken = () => Errors.streamInterrupted('x', 'connection reset');
const lastMessage = (a: Attempt) => (a.body?.messages as { role: string; content: string }[]).at(-1);

async function start(config: GatewayConfig, statuses?: Record<string, number[]>) {
  const h = harness(statuses);
  const log: AttemptRecord[] = [];
  const first = await route(buildGatewayRequest({ config }), config, 'config', h.deps, log);
  return { ...h, log, first };
}

describe('a committed stream resumes where the config would have gone on', () => {
  test('the retries of its target, then the next fallback target, then the nested ones; each with the text so far', async () => {
    const config: GatewayConfig = {
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'r-open', retry: { attempts: 1 } },
        { strategy: { mode: 'fallback' }, targets: [{ provider: 'p-anthro' }, { provider: 'r-other' }] },
      ],
    };
    const { first, attempts, log } = await start(config);
    expect(first.index).toBe('config.targets[0]');
    let r: RoutedResult = first;
    const order: string[] = [];
    for (const text of ['Hel', 'Hello', 'Hello wor']) {
      r = (await r.resumption!.resume!(broken(), text)) as RoutedResult;
      expect(r.error).toBeUndefined();
      order.push(`${r.index}/${r.continuation?.mode}`);
    }
    expect(order).toEqual(['config.targets[0]/regenerate', 'config.targets[1].targets[0]/prefill', 'config.targets[1].targets[1]/regenerate']);
    // Prefill: the text as the assistant's message; regenerate: the original conversation.
    expect(lastMessage(attempts[2]!)).toEqual({ role: 'assistant', content: 'Hello' });
    expect(lastMessage(attempts[1]!)).toEqual({ role: 'user', content: 'hi' });
    expect(attempts[1]!.continuation).toEqual({ mode: 'regenerate', sent: 'Hel', prefilled: '' });
    expect(attempts[1]!.retry).toBe(1);
    // Nothing is left: the break comes back as the failure, with the log marking every broken attempt.
    const end = await r.resumption!.resume!(broken(), 'Hello world');
    expect(end.error?.code).toBe('stream_interrupted');
    expect(log.map((a) => [a.index, a.retry, a.broken ?? false, a.continued ?? '-'])).toEqual([
      ['config.targets[0]', 0, true, '-'],
      ['config.targets[0]', 1, true, 'regenerate'],
      ['config.targets[1].targets[0]', 0, true, 'prefill'],
      ['config.targets[1].targets[1]', 0, true, 'regenerate'],
    ]);
  });

  test('a refused prefill is regenerated at once on the same target, without using a retry', async () => {
    const config: GatewayConfig = { provider: 'p-anthro', retry: { attempts: 1 } };
    const { first, attempts, log } = await start(config, { config: [200, 400] });
    const next = (await first.resumption!.resume!(broken(), 'Hello')) as RoutedResult;
    expect(next.error).toBeUndefined();
    expect(next.continuation?.mode).toBe('regenerate');
    expect(attempts.map((a) => [a.retry, a.continuation?.mode ?? '-'])).toEqual([
      [0, '-'],
      [1, 'prefill'],
      [1, 'regenerate'],
    ]);
    expect(log.map((a) => [a.status, a.continued ?? '-'])).toEqual([
      [200, '-'],
      [400, 'prefill'],
      [200, 'regenerate'],
    ]);
  });

  test('single and loadbalance offer no other target: only the chosen one\'s retries', async () => {
    const config: GatewayConfig = { strategy: { mode: 'single' }, targets: [{ provider: 'r-a' }, { provider: 'r-b' }] };
    const { first, attempts } = await start(config);
    const end = await first.resumption!.resume!(broken(), 'Hi');
    expect(end.error?.code).toBe('stream_interrupted');
    expect(attempts).toHaveLength(1);
  });

  test('a continuing attempt that fails before its first byte moves on like any failed attempt', async () => {
    const config: GatewayConfig = { strategy: { mode: 'fallback' }, targets: [{ provider: 'r-a' }, { provider: 'r-b' }, { provider: 'p-c' }] };
    const { first, log } = await start(config, { 'config.targets[1]': [503] });
    expect(first.index).toBe('config.targets[0]');
    const next = (await first.resumption!.resume!(broken(), 'Hi')) as RoutedResult;
    expect(next.index).toBe('config.targets[2]');
    expect(next.continuation?.mode).toBe('prefill');
    expect(log.map((a) => [a.index, a.status, a.continued ?? '-'])).toEqual([
      ['config.targets[0]', 200, '-'],
      ['config.targets[1]', 503, 'regenerate'],
      ['config.targets[2]', 200, 'prefill'],
    ]);
  });
});
