import { describe, expect, test } from 'bun:test';
import type { AttemptStage, RequestStage, Stage } from '@gateway/sdk';
import { orderStages } from './stage-order.ts';

const attempt = (name: string, extra: Partial<AttemptStage> = {}): AttemptStage => ({
  name,
  phase: 'attempt',
  rule: 'sequential',
  run: (_req, _attempt, next) => next(),
  ...extra,
});
const request = (name: string, extra: Partial<RequestStage> = {}): RequestStage => ({ name, phase: 'request', rule: 'sequential', run() {}, ...extra });
const names = (list: readonly { name: string }[]) => list.map((s) => s.name);

describe('orderStages', () => {
  test('split by phase; stages that name nothing keep their registration order', () => {
    const stages: Stage[] = [
      request('b'),
      attempt('x'),
      request('a'),
      { name: 'out', phase: 'response', rule: 'sequential', run() {} },
      { name: 'log', phase: 'finally', rule: 'fire-and-forget', run() {} },
    ];
    const ordered = orderStages(stages);
    expect(names(ordered.requestStages)).toEqual(['b', 'a']);
    expect(names(ordered.attemptStages)).toEqual(['x']);
    expect(names(ordered.responseStages)).toEqual(['out']);
    expect(names(ordered.finallyStages)).toEqual(['log']);
  });

  test('before and after move a stage whatever the registration order; free pairs keep theirs', () => {
    // The built-in attempt stages: the cache outside the circuit breaker, in either registration order.
    const cache = attempt('response-cache', { before: 'circuit-breaker' });
    expect(names(orderStages([attempt('circuit-breaker'), cache]).attemptStages)).toEqual(['response-cache', 'circuit-breaker']);
    expect(names(orderStages([cache, attempt('circuit-breaker')]).attemptStages)).toEqual(['response-cache', 'circuit-breaker']);

    const ordered = orderStages([
      request('late', { after: ['first', 'middle'] }),
      request('free-1'),
      request('middle', { after: 'first' }),
      request('first'),
      request('free-2', { before: 'first' }),
    ]);
    expect(names(ordered.requestStages)).toEqual(['free-1', 'free-2', 'first', 'middle', 'late']);
  });

  test('a name no loaded stage has is ignored (its plugin may be disabled)', () => {
    const ordered = orderStages([attempt('b'), attempt('response-cache', { before: 'circuit-breaker', after: ['not-installed'] })]);
    expect(names(ordered.attemptStages)).toEqual(['b', 'response-cache']);
  });

  test('a cycle stops the start, naming the stages in it', () => {
    const stages = [attempt('a', { before: 'b' }), attempt('free'), attempt('b', { before: 'c' }), attempt('c', { before: 'a' })];
    expect(() => orderStages(stages)).toThrow('the attempt stages "a", "b", "c" are ordered in a cycle by their before/after');
  });

  test('a stage of another phase named in before/after is an error, not silently ignored', () => {
    expect(() => orderStages([request('hooks:input'), attempt('cache', { after: 'hooks:input' })])).toThrow(
      'stage "cache" (attempt) is ordered against "hooks:input", a stage of phase request: order holds within a phase',
    );
  });

  test('two stages with one name are both ordered by a relation naming it', () => {
    const ordered = orderStages([request('twin'), request('x', { before: 'twin' }), request('twin')]);
    expect(names(ordered.requestStages)).toEqual(['x', 'twin', 'twin']);
  });
});
