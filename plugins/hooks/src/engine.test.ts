// The hook engine on its own: normalisation, checks that pass, fail, throw, time out and transform, deny, async
// hooks, feedback, answers with hook_results, streams. The checks are the small ones of testing.ts.

import { describe, expect, test } from 'bun:test';
import { type GatewayConfig, GatewayError, type GatewayRequest, type JsonObject } from '@gateway/sdk';
import { createHookEngine, withHookResults } from './engine.ts';
import { createNormaliser } from './normalise.ts';
import { type Calls, chatAnswer, chatBody, checkMap, sseChunks, testRequest } from './testing.ts';
import { type HookResult, type HookState, LOCALS } from './types.ts';

function setUp(opts: { timeoutMs?: number; saved?: Record<string, Record<string, unknown>> } = {}) {
  const calls: Calls = { count: {}, seen: [] };
  const checks = checkMap(calls);
  const engine = createHookEngine({
    checks: () => (id) => checks.get(id),
    savedGuardrail: opts.saved ? () => (id) => opts.saved?.[id] : undefined,
    defaultTimeoutMs: opts.timeoutMs ?? 200,
  });
  return { engine, calls, checks };
}

const cfg = (config: Record<string, unknown>): GatewayConfig => Object.freeze({ provider: 'openai', api_key: 'sk', ...config }) as GatewayConfig;

async function runInput(engine: ReturnType<typeof setUp>['engine'], req: GatewayRequest): Promise<GatewayError | undefined> {
  if (!engine.request.applies?.(req)) return undefined;
  try {
    await engine.request.run(req);
    return undefined;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
}

async function runOutput(engine: ReturnType<typeof setUp>['engine'], req: GatewayRequest, answer: Response): Promise<Response | GatewayError> {
  if (!engine.response.applies?.(req)) return answer;
  try {
    return (await engine.response.run(req, answer)) ?? answer;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const results = (req: GatewayRequest) => req.locals[LOCALS.results] as HookResult[];
const state = (req: GatewayRequest) => req.locals[LOCALS.state] as HookState;

describe('normalisation: hooks and guardrail entries become one form', () => {
  test('a guardrail entry: extra keys are checks (bare names are default.<name>); policy keys are policy', () => {
    const { planOf } = createNormaliser({ defaultTimeoutMs: 10_000 });
    const plan = planOf(
      cfg({
        input_guardrails: [{ id: 'g1', deny: true, 'test.contains': { word: 'x' }, contains: { word: 'y' }, 'test.slow': { ms: 5, timeout: 1234 }, on_fail: { feedback: { value: -1 } } }],
      }),
    );
    expect(plan.output).toBeUndefined();
    expect(plan.input?.async).toEqual([]);
    expect(plan.input?.sync).toEqual([
      {
        id: 'g1',
        phase: 'input',
        checks: [
          { id: 'test.contains', parameters: { word: 'x' }, timeoutMs: 10_000 },
          { id: 'default.contains', parameters: { word: 'y' }, timeoutMs: 10_000 },
          { id: 'test.slow', parameters: { ms: 5, timeout: 1234 }, timeoutMs: 1234 },
        ],
        async: false,
        denyOnFail: true,
        denyUnset: false,
        denyOnSuccess: false,
        onFail: { value: -1 },
        onSuccess: null,
      },
    ]);
  });

  test('a hook: checks list, deny in on_fail / on_success, async; order: before hooks then input guardrails, output guardrails then after hooks', () => {
    const { planOf } = createNormaliser({});
    const plan = planOf(
      cfg({
        before_request_hooks: [{ id: 'b', type: 'guardrail', checks: [{ id: 'test.pass', parameters: {} }], on_success: { deny: true, feedback: { weight: 2 } } }],
        input_guardrails: [{ 'test.fail': {} }],
        output_guardrails: [{ async: true, 'test.pass': {}, on_fail: { deny: true } }, { 'test.fail': {}, on_fail: { deny: false }, deny: true }],
        after_request_hooks: [{ id: 'a', checks: [{ id: 'test.pass', parameters: {} }], async: true }],
      }),
    );
    expect(plan.input?.sync.map((h) => [h.id, h.denyOnFail, h.denyOnSuccess, h.onSuccess])).toEqual([
      ['b', false, true, { weight: 2 }],
      ['input_guardrails[0]', false, false, null],
    ]);
    expect(plan.output?.sync.map((h) => [h.id, h.denyOnFail])).toEqual([['output_guardrails[1]', false]]); // on_fail.deny wins
    expect(plan.output?.async.map((h) => h.id)).toEqual(['output_guardrails[0]', 'a']);
  });

  test('saved guardrails (string entries) through the resolver; one that is gone fails when run', () => {
    const { planOf } = createNormaliser({ savedGuardrail: () => (id) => (id === 'pii' ? { deny: true, 'test.fail': {} } : undefined) });
    const plan = planOf(cfg({ input_guardrails: ['pii', 'gone'] }));
    expect(plan.input?.sync.map((h) => [h.id, h.denyOnFail, h.checks.map((c) => c.id)])).toEqual([
      ['pii', true, ['test.fail']],
      ['gone', false, ['gone']],
    ]);
    expect(plan.input?.sync[1]?.checks[0]?.problem).toBe('no saved guardrail with id "gone"');
  });

  test('plans are cached per config, hook lists per list: a config copied per request (custom host header) reuses the lists', () => {
    const { planOf } = createNormaliser({});
    const config = cfg({ input_guardrails: [{ 'test.pass': {} }] });
    expect(planOf(config)).toBe(planOf(config));
    const copy = { ...config, custom_host: 'http://x' } as GatewayConfig;
    expect(planOf(copy).input?.sync).toEqual(planOf(config).input?.sync as never);
    expect(planOf(copy).input?.sync[0]).toBe(planOf(config).input?.sync[0] as never);
    expect(planOf(cfg({}))).toEqual({});
  });
});

describe('input hooks (request stage)', () => {
  test('a config without hooks, or a request without a JSON body (proxy): the stage does not apply', () => {
    const { engine } = setUp();
    expect(engine.request.applies?.(testRequest(cfg({})))).toBe(false);
    expect(engine.request.applies?.(testRequest(cfg({ input_guardrails: [{ 'test.pass': {} }] }), chatBody(), { endpoint: 'proxy', body: undefined }))).toBe(false);
    expect(engine.response.applies?.(testRequest(cfg({})))).toBe(false);
  });

  test('pass, fail, throw (async and sync), time out, nonsense, unknown: every one a verdict, none a crash', async () => {
    const { engine } = setUp({ timeoutMs: 100 });
    const req = testRequest(
      cfg({
        input_guardrails: [
          { id: 'all', 'test.pass': {}, 'test.fail': {}, 'test.throws': {}, 'test.throwsSync': {}, 'test.slow': { ms: 10_000 }, 'test.nonsense': {}, 'test.nope': {} },
          { id: 'own-timeout', 'test.slow': { ms: 60, timeout: 30 } },
          { id: 'fine', 'test.slow': { ms: 5 }, 'test.pass': {} },
        ],
      }),
    );
    const started = performance.now();
    expect(await runInput(engine, req)).toBeUndefined(); // no deny
    expect(performance.now() - started).toBeLessThan(5_000); // the slow check (10 s) was cut at 100 ms
    const [all, own, fine] = results(req);
    expect(all?.verdict).toBe(false);
    expect(all?.deny).toBe(false);
    expect(all?.checks.map((c) => [c.id, c.verdict, c.error])).toEqual([
      ['test.pass', true, null],
      ['test.fail', false, null],
      ['test.throws', false, 'the check broke'],
      ['test.throwsSync', false, 'broke before any promise'],
      ['test.slow', false, 'timed out after 100 ms'],
      ['test.nonsense', false, 'the check returned no boolean verdict'],
      ['test.nope', false, 'unknown guardrail check "test.nope"'],
    ]);
    expect(all?.checks[0]?.data).toEqual({ ok: true });
    expect(all?.checks[1]?.data).toEqual({ reason: 'always fails' });
    expect(all?.checks[4]?.execution_time).toBeGreaterThanOrEqual(95);
    expect(own?.checks[0]?.error).toBe('timed out after 30 ms');
    expect(fine).toMatchObject({ id: 'fine', verdict: true, deny: false, async: false, feedback: null });
    expect(fine?.execution_time).toBeGreaterThanOrEqual(4);
    expect(Object.keys(fine as object).sort()).toEqual(['async', 'checks', 'deny', 'execution_time', 'feedback', 'id', 'verdict']);
    expect(Object.keys(fine?.checks[0] as object).sort()).toEqual(['data', 'error', 'execution_time', 'id', 'verdict']);
    expect(state(req).failed).toBe(true);
  });

  test('checks of one hook run in parallel', async () => {
    const { engine } = setUp({ timeoutMs: 5_000 });
    const req = testRequest(cfg({ before_request_hooks: [{ id: 'h', checks: [1, 2, 3, 4].map(() => ({ id: 'test.slow', parameters: { ms: 1_000 } })) }] }));
    const started = performance.now();
    await runInput(engine, req);
    expect(performance.now() - started).toBeLessThan(3_000); // one after another: 4 s
    expect(results(req)[0]?.verdict).toBe(true);
  });

  test('deny: a failing guardrail with deny stops the request with 400 guardrail_denied and hook_results', async () => {
    const { engine } = setUp();
    const req = testRequest(cfg({ input_guardrails: [{ id: 'ok', 'test.pass': {} }, { id: 'no-secrets', deny: true, 'test.contains': { word: 'secret' } }] }), chatBody('my secret'));
    const err = await runInput(engine, req);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err?.status).toBe(400);
    const body = err!.toBody();
    expect(body.error).toMatchObject({ type: 'guardrail_denied', code: 'guardrail_denied' });
    expect(body.error.message).toContain('"no-secrets"');
    const hookResults = body.hook_results as HookResult[];
    expect(hookResults.map((r) => [r.id, r.verdict, r.deny])).toEqual([
      ['ok', true, false],
      ['no-secrets', false, true],
    ]);
    // The same request without the word passes.
    expect(await runInput(engine, testRequest(req.config, chatBody('nothing to hide')))).toBeUndefined();
  });

  test('before-request hooks deny with on_fail.deny; on_success.deny denies a passing hook', async () => {
    const { engine } = setUp();
    const onFail = testRequest(cfg({ before_request_hooks: [{ id: 'h', checks: [{ id: 'test.fail', parameters: {} }], on_fail: { deny: true } }] }));
    expect((await runInput(engine, onFail))?.code).toBe('guardrail_denied');
    const onSuccess = testRequest(cfg({ before_request_hooks: [{ id: 'h', checks: [{ id: 'test.pass', parameters: {} }], on_success: { deny: true } }] }));
    expect((await runInput(engine, onSuccess))?.code).toBe('guardrail_denied');
    const neither = testRequest(cfg({ before_request_hooks: [{ id: 'h', checks: [{ id: 'test.fail', parameters: {} }], on_success: { deny: true } }] }));
    expect(await runInput(engine, neither)).toBeUndefined();
  });

  test('a failed check that asks for denial (data.deny) denies when the entry says nothing about deny', async () => {
    const { engine, checks } = setUp();
    checks.set('test.scanner', { id: 'test.scanner', run: async () => ({ verdict: false, data: { deny: true, reason: 'injection' } }) });
    const unset = testRequest(cfg({ input_guardrails: [{ id: 'scan', 'test.scanner': {} }] }));
    expect((await runInput(engine, unset))?.code).toBe('guardrail_denied');
    expect(results(unset)[0]).toMatchObject({ id: 'scan', verdict: false, deny: true });
    // An explicit `deny: false` (or on_fail.deny: false) is the config's word.
    for (const entry of [{ deny: false }, { on_fail: { deny: false } }]) {
      const req = testRequest(cfg({ input_guardrails: [{ id: 'scan', 'test.scanner': {}, ...entry }] }));
      expect(await runInput(engine, req)).toBeUndefined();
      expect(results(req)[0]?.deny).toBe(false);
    }
    // Async: still never a denial.
    const later = testRequest(cfg({ input_guardrails: [{ id: 'scan', async: true, 'test.scanner': {} }] }));
    expect(await runInput(engine, later)).toBeUndefined();
    await (later.locals[LOCALS.settled] as Promise<void>);
    expect(results(later)[0]?.deny).toBe(false);
  });

  test('feedback: on_success or on_fail, whichever applied', async () => {
    const { engine } = setUp();
    const feedback = { on_success: { feedback: { value: 1, weight: 1, metadata: { team: 'a' } } }, on_fail: { feedback: { value: -1, weight: 0.5 } } };
    const req = testRequest(cfg({ input_guardrails: [{ id: 'p', 'test.pass': {}, ...feedback }, { id: 'f', 'test.fail': {}, ...feedback }] }));
    await runInput(engine, req);
    expect(results(req).map((r) => [r.id, r.feedback])).toEqual([
      ['p', { value: 1, weight: 1, metadata: { team: 'a' } }],
      ['f', { value: -1, weight: 0.5 }],
    ]);
  });

  test('transform: req.body becomes a new object; the original is never mutated', async () => {
    const { engine } = setUp();
    const original = chatBody('call me at 555-1234');
    const frozen = structuredClone(original);
    const req = testRequest(cfg({ input_guardrails: [{ 'test.replace': { from: '555-1234', to: '[phone]' } }] }), original);
    await runInput(engine, req);
    expect(req.body).not.toBe(original);
    expect(req.body).toEqual(chatBody('call me at [phone]'));
    expect(original).toEqual(frozen);
    expect(req.parsedBody).toBe(original); // so the log knows the body changed
  });

  test('transforms chain in config order: a later transformer runs again on the earlier one\'s output', async () => {
    const { engine, calls } = setUp();
    const req = testRequest(
      cfg({
        before_request_hooks: [{ id: 'first', checks: [{ id: 'test.append', parameters: { suffix: ' +1' } }] }],
        input_guardrails: [{ id: 'judge', 'test.contains': { word: '+1' } }, { id: 'second', 'test.append': { suffix: ' +2' } }],
      }),
      chatBody('start'),
    );
    await runInput(engine, req);
    expect(req.body).toEqual(chatBody('start +1 +2'));
    expect(calls.count['test.append']).toBe(3); // twice in parallel, once more for the second on "start +1"
    // A judge sees the body as the phase began.
    expect(calls.seen.find((s) => s.id === 'test.contains')?.text).toBe('start');
    expect(results(req).find((r) => r.id === 'judge')?.verdict).toBe(true);
  });

  test('async hooks never delay the request; their results (and feedback) arrive in locals later, with a promise to wait on', async () => {
    const { engine, calls } = setUp({ timeoutMs: 2_000 });
    const req = testRequest(
      cfg({ input_guardrails: [{ id: 'later', async: true, deny: true, 'test.slow': { ms: 1_000, verdict: false }, on_fail: { feedback: { value: 0 } } }, { id: 'now', 'test.pass': {} }] }),
    );
    expect(await runInput(engine, req)).toBeUndefined(); // an async hook cannot deny
    expect(results(req).map((r) => r.id)).toEqual(['now']);
    expect(calls.count['test.slow:done']).toBeUndefined(); // the request went on before the slow check ended
    await (req.locals[LOCALS.settled] as Promise<void>);
    expect(results(req).map((r) => [r.id, r.verdict, r.deny, r.async, r.feedback])).toEqual([
      ['now', true, false, false, null],
      ['later', false, false, true, { value: 0 }],
    ]);
    expect(state(req).answer.map((r) => r.id)).toEqual(['now']); // the answer carries awaited results only
  });
});

describe('output hooks (response stage) on JSON answers', () => {
  test('all pass: the answer goes back as it came', async () => {
    const { engine } = setUp();
    const req = testRequest(cfg({ output_guardrails: [{ 'test.pass': {} }] }));
    const text = JSON.stringify(chatAnswer());
    const out = (await runOutput(engine, req, new Response(text, { headers: { 'content-type': 'application/json' } }))) as Response;
    expect(await out.text()).toBe(text);
    expect(results(req)[0]?.verdict).toBe(true);
  });

  test('a failure without deny: the answer unchanged, plus hook_results', async () => {
    const { engine } = setUp();
    const req = testRequest(cfg({ output_guardrails: [{ id: 'no-answer', 'test.contains': { word: 'answer' } }] }));
    const out = (await runOutput(engine, req, json(chatAnswer()))) as Response;
    expect(out.status).toBe(200);
    const body = (await out.json()) as JsonObject;
    expect({ ...body, hook_results: undefined }).toEqual({ ...chatAnswer(), hook_results: undefined });
    expect((body.hook_results as unknown as HookResult[]).map((r) => [r.id, r.verdict])).toEqual([['no-answer', false]]);
  });

  test('deny: the answer is replaced by 400 guardrail_denied with hook_results of both phases', async () => {
    const { engine } = setUp();
    const req = testRequest(cfg({ input_guardrails: [{ id: 'in', 'test.fail': {} }], output_guardrails: [{ id: 'out', deny: true, 'test.contains': { word: 'answer' } }] }));
    await runInput(engine, req);
    const err = (await runOutput(engine, req, json(chatAnswer()))) as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.toBody().hook_results as HookResult[]).toMatchObject([
      { id: 'in', verdict: false, deny: false },
      { id: 'out', verdict: false, deny: true },
    ]);
    expect(err.message).toContain('answer was denied');
  });

  test('transform: the answer JSON is replaced', async () => {
    const { engine, calls } = setUp();
    const req = testRequest(cfg({ output_guardrails: [{ 'test.replace': { from: 'answer', to: 'reply' } }, { 'test.append': { suffix: '!' } }] }));
    const out = (await runOutput(engine, req, json(chatAnswer()))) as Response;
    expect(await out.json()).toEqual(chatAnswer('the reply!'));
    expect(calls.count['test.append']).toBe(2);
    expect(calls.seen.filter((s) => s.phase === 'output').map((s) => s.text)).toEqual(['the answer', 'the answer', 'the reply']);
  });

  test('an input failure without output hooks: hook_results spliced into the answer (errors too); output checks skip error answers', async () => {
    const { engine, calls } = setUp();
    const req = testRequest(cfg({ input_guardrails: [{ id: 'in', 'test.fail': {} }] }));
    await runInput(engine, req);
    expect(engine.response.applies?.(req)).toBe(true);
    const out = (await runOutput(engine, req, json(chatAnswer()))) as Response;
    expect(((await out.json()) as { hook_results: HookResult[] }).hook_results.map((r) => r.id)).toEqual(['in']);

    const req2 = testRequest(cfg({ input_guardrails: [{ id: 'in', 'test.fail': {} }], output_guardrails: [{ id: 'out', 'test.pass': {} }] }));
    await runInput(engine, req2);
    const error = { error: { message: 'rate limited', type: 'rate_limit', code: null, param: null } };
    const out2 = (await runOutput(engine, req2, json(error, 429))) as Response;
    expect(out2.status).toBe(429);
    expect(await out2.json()).toEqual({ ...error, hook_results: [results(req2)[0]] } as never);
    expect(calls.count['test.pass']).toBeUndefined(); // no output check ran on the error
  });

  test('async output hooks: the answer does not wait; the results come later', async () => {
    const { engine } = setUp({ timeoutMs: 2_000 });
    const req = testRequest(cfg({ after_request_hooks: [{ id: 'audit', async: true, checks: [{ id: 'test.slow', parameters: { ms: 1_000 } }] }] }));
    const out = (await runOutput(engine, req, json(chatAnswer()))) as Response;
    expect(await out.json()).toEqual(chatAnswer()); // no hook_results: nothing awaited failed
    expect(results(req)).toEqual([]); // the answer went out before the slow check ended
    await (req.locals[LOCALS.settled] as Promise<void>);
    expect(results(req).map((r) => [r.id, r.verdict, r.async])).toEqual([['audit', true, true]]);
  });

  test('withHookResults splices into any JSON object text', () => {
    const r = [{ id: 'x' }] as unknown as HookResult[];
    expect(JSON.parse(withHookResults('{}', r)!)).toEqual({ hook_results: r });
    expect(JSON.parse(withHookResults(' { "a" : 1 }\n', r)!)).toEqual({ a: 1, hook_results: r });
    expect(withHookResults('[1]', r)).toBeUndefined();
  });
});

describe('output hooks on streams', () => {
  /** An upstream SSE answer whose events come one by one, `gapMs` apart, those after the first once `gate` settles. */
  function sse(events: string[], gapMs = 0, gate?: Promise<void>): Response {
    const enc = new TextEncoder();
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (i >= events.length) return c.close();
        if (i > 0) await gate;
        if (gapMs && i > 0) await Bun.sleep(gapMs);
        c.enqueue(enc.encode(events[i++] as string));
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  }

  const frames = (text: string) => text.split('\n\n').filter(Boolean).map((f) => f.slice('data: '.length));

  test('events are forwarded as they arrive; a pass ends with [DONE] as usual; the check judged the assembled answer', async () => {
    const { engine, calls } = setUp();
    const req = testRequest(cfg({ output_guardrails: [{ 'test.pass': {} }] }), { ...chatBody(), stream: true });
    const rest = Promise.withResolvers<void>();
    const out = (await runOutput(engine, req, sse(sseChunks('hello streamed world'), 40, rest.promise))) as Response;
    const reader = out.body!.getReader();
    // The rest of the stream does not exist until the first event has come through.
    const first = await Promise.race([reader.read(), Bun.sleep(10_000).then(() => Promise.reject(new Error('the first event was held back')))]);
    rest.resolve();
    expect(new TextDecoder().decode(first.value)).toContain('"role":"assistant"');
    let text = new TextDecoder().decode(first.value);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toBe(sseChunks('hello streamed world').join(''));
    expect(calls.seen).toEqual([{ id: 'test.pass', phase: 'output', text: 'hello streamed world' }]);
  });

  test('a failure without deny: a chunk-shaped hook_results event before [DONE]', async () => {
    const { engine } = setUp();
    const req = testRequest(cfg({ output_guardrails: [{ id: 'no-world', 'test.contains': { word: 'world' } }] }), { ...chatBody(), stream: true });
    const out = (await runOutput(engine, req, sse(sseChunks('hello world')))) as Response;
    const all = frames(await out.text());
    expect(all.at(-1)).toBe('[DONE]');
    const event = JSON.parse(all.at(-2) as string);
    expect(event).toMatchObject({ id: 'chatcmpl-s', object: 'chat.completion.chunk', model: 'gpt-test', choices: [] });
    expect(event.hook_results.map((r: HookResult) => [r.id, r.verdict])).toEqual([['no-world', false]]);
  });

  test('deny: an error frame with hook_results instead of [DONE]', async () => {
    const { engine } = setUp();
    const req = testRequest(cfg({ output_guardrails: [{ id: 'no-world', deny: true, 'test.contains': { word: 'world' } }] }), { ...chatBody(), stream: true });
    const out = (await runOutput(engine, req, sse(sseChunks('hello world')))) as Response;
    const text = await out.text();
    expect(text).not.toContain('[DONE]');
    const last = JSON.parse(frames(text).at(-1) as string);
    expect(last.error).toMatchObject({ type: 'guardrail_denied', code: 'guardrail_denied' });
    expect(last.hook_results[0]).toMatchObject({ id: 'no-world', verdict: false, deny: true });
  });

  test('an input failure on a streamed answer (no output hooks): the hook_results event, nothing assembled', async () => {
    const { engine } = setUp();
    const req = testRequest(cfg({ input_guardrails: [{ id: 'in', 'test.fail': {} }] }), { ...chatBody(), stream: true });
    await runInput(engine, req);
    const out = (await runOutput(engine, req, sse(sseChunks('hi there')))) as Response;
    const all = frames(await out.text());
    expect(JSON.parse(all.at(-2) as string).hook_results[0].id).toBe('in');
  });

  test('a stream cut before [DONE] is passed on as it is and not judged; the request settles', async () => {
    const { engine, calls } = setUp();
    const req = testRequest(cfg({ output_guardrails: [{ deny: true, 'test.fail': {} }] }), { ...chatBody(), stream: true });
    const events = sseChunks('hello world', false);
    const out = (await runOutput(engine, req, sse(events))) as Response;
    expect(await out.text()).toBe(events.join(''));
    expect(calls.seen).toEqual([]);
    await (req.locals[LOCALS.settled] as Promise<void>);
  });

  test('the client leaving mid-stream settles the request without judging', async () => {
    const { engine, calls } = setUp();
    const req = testRequest(cfg({ output_guardrails: [{ 'test.pass': {} }] }), { ...chatBody(), stream: true });
    const out = (await runOutput(engine, req, sse(sseChunks('one two three four'), 20))) as Response;
    const reader = out.body!.getReader();
    await reader.read();
    await reader.cancel();
    await (req.locals[LOCALS.settled] as Promise<void>);
    expect(calls.seen).toEqual([]);
  });

  test('CRLF framing, comments and tool calls: forwarded byte for byte, assembled into a message', async () => {
    const { engine, calls } = setUp();
    const meta = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm' };
    const events = [
      ': keep-alive\r\n\r\n',
      `data: ${JSON.stringify({ ...meta, choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_', arguments: '{"ci' } }] } }] })}\r\n\r\n`,
      `data: ${JSON.stringify({ ...meta, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: 'weather', arguments: 'ty":"Paris"}' } }] }, finish_reason: 'tool_calls' }] })}\r\n\r\n`,
      'data: [DONE]\r\n\r\n',
    ];
    let seen: JsonObject | undefined;
    const checks = checkMap(calls);
    checks.set('test.capture', { id: 'test.capture', run: async (ctx) => ((seen = ctx.responseBody), { verdict: true }) });
    const engine2 = createHookEngine({ checks: () => (id) => checks.get(id) });
    const req = testRequest(cfg({ output_guardrails: [{ 'test.capture': {} }] }), { ...chatBody(), stream: true });
    const out = (await runOutput(engine2, req, sse(events))) as Response;
    expect(await out.text()).toBe(`${events.slice(0, 3).join('')}data: [DONE]\n\n`);
    expect(seen).toEqual({
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
    });
    void engine;
  });
});
