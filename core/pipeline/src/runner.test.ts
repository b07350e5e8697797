import { describe, expect, test } from 'bun:test';
import {
  type AttemptStage,
  Errors,
  type FinallyStage,
  type GatewayConfig,
  type GatewayRequest,
  type Logger,
  type Outcome,
  type ProviderAdapter,
  type RequestStage,
  type ResponseStage,
} from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import { HostGuard } from './host-guard.ts';
import { type PipelineDeps, type PipelineStages, runPipeline } from './runner.ts';

const adapter: ProviderAdapter = { id: 'fake', baseUrl: () => 'http://unused', authorize: (c) => c, endpoints: { chatComplete: { path: () => '/x' } } };

/** Stands in for the provider: the last attempt stage answers, so no network is involved. */
function answering(status = 200, body: unknown = { ok: true }): AttemptStage {
  return {
    name: 'fake-provider',
    phase: 'attempt',
    rule: 'sequential',
    run: async (_req, attempt) => {
      const err = status >= 400 ? Errors.provider('fake', status, 'failed') : undefined;
      return {
        response: Response.json(body, { status }),
        status,
        providerId: attempt.provider.id,
        error: err,
        settled: Promise.resolve({ body: JSON.stringify(body), error: err }),
      };
    },
  };
}

const warnings: unknown[] = [];
const logger: Logger = { debug() {}, info() {}, warn: (o) => void warnings.push(o), error() {} };

function deps(stages: Partial<PipelineStages> = {}, attempt: AttemptStage[] = [answering()], observe?: PipelineDeps['observe']): PipelineDeps {
  return {
    strategies: new Map(),
    attemptStages: attempt,
    call: { hostGuard: new HostGuard([]), captureLimit: 1000, streamIdleTimeoutMs: 1000, defaultTimeoutMs: 1000 },
    resolveProvider: (target) => ({ provider: adapter, target }),
    stages: { requestStages: [], responseStages: [], finallyStages: [], ...stages },
    logger,
    observe,
  };
}

function request(config: GatewayConfig = { provider: 'fake' }): GatewayRequest {
  return buildGatewayRequest({ traceId: 'trace-42', body: { model: 'm', messages: [] }, rawBody: undefined, parsedBody: undefined, config });
}

const reqStage = (name: string, run: RequestStage['run'], extra: Partial<RequestStage> = {}): RequestStage => ({ name, phase: 'request', rule: 'sequential', run, ...extra });

describe('runPipeline: response headers', () => {
  test('an answered request carries trace id, provider, target index, retry count and cache status', async () => {
    const res = await runPipeline(request(), deps());
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(res.headers.get('x-gateway-trace-id')).toBe('trace-42');
    expect(res.headers.get('x-gateway-provider')).toBe('fake');
    expect(res.headers.get('x-gateway-last-used-option-index')).toBe('config');
    expect(res.headers.get('x-gateway-retry-attempt-count')).toBe('0');
    expect(res.headers.get('x-gateway-cache-status')).toBe('DISABLED');
  });

  test('the cache status comes from request locals when a stage set it', async () => {
    const cache = reqStage('cache', (req) => void (req.locals.cacheStatus = 'MISS'));
    const res = await runPipeline(request(), deps({ requestStages: [cache] }));
    expect(res.headers.get('x-gateway-cache-status')).toBe('MISS');
  });
});

describe('runPipeline: request stages (sequential)', () => {
  test('run one after another, in order, each seeing what the previous one changed', async () => {
    const seen: string[] = [];
    const a = reqStage('a', (req) => {
      seen.push('a');
      req.body = { ...req.body, model: 'from-a' };
    });
    const b = reqStage('b', async (req) => {
      await Bun.sleep(5);
      seen.push(`b:${String(req.body?.model)}`);
    });
    const c = reqStage('c', (req) => void seen.push(`c:${String(req.body?.model)}`));
    await runPipeline(request(), deps({ requestStages: [a, b, c] }));
    expect(seen).toEqual(['a', 'b:from-a', 'c:from-a']);
  });

  test('a stage that returns a response ends the request with it: later stages and routing do not run', async () => {
    let routed = false;
    let later = false;
    const deny = reqStage('limit', () => new Response('slow down', { status: 429 }));
    const after = reqStage('after', () => void (later = true));
    const spy: AttemptStage = { ...answering(), run: async (r, a, n) => ((routed = true), answering().run(r, a, n)) };
    const res = await runPipeline(request(), deps({ requestStages: [deny, after] }, [spy]));
    expect(res.status).toBe(429);
    expect(await res.text()).toBe('slow down');
    expect(later).toBe(false);
    expect(routed).toBe(false);
    expect(res.headers.get('x-gateway-trace-id')).toBe('trace-42');
    expect(res.headers.get('x-gateway-provider')).toBeNull();
  });

  test('a stage that does not apply is skipped', async () => {
    let ran = false;
    const skipped = reqStage('skipped', () => void (ran = true), { applies: () => false });
    await runPipeline(request(), deps({ requestStages: [skipped] }));
    expect(ran).toBe(false);
  });

  test('a stage that throws becomes the error response (its own status when it is a GatewayError)', async () => {
    const bad = reqStage('validator', () => {
      throw Errors.badRequest('nope', 'model');
    });
    const res = await runPipeline(request(), deps({ requestStages: [bad] }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { message: 'nope', type: 'invalid_request_error', code: 'invalid_request', param: 'model' } });
    const crash = reqStage('crash', () => {
      throw new Error('internal detail');
    });
    const res2 = await runPipeline(request(), deps({ requestStages: [crash] }));
    expect(res2.status).toBe(500);
    expect(JSON.stringify(await res2.json())).not.toContain('internal detail');
  });
});

describe('runPipeline: response stages (sequential)', () => {
  test('may replace the answer; each sees the previous one', async () => {
    const wrap: ResponseStage = {
      name: 'wrap',
      phase: 'response',
      rule: 'sequential',
      run: async (_req, res) => Response.json({ wrapped: await res.json() }),
    };
    const tag: ResponseStage = { name: 'tag', phase: 'response', rule: 'sequential', run: (_req, res) => void res.headers.set('x-tag', '1') };
    const res = await runPipeline(request(), deps({ responseStages: [wrap, tag] }));
    expect(await res.json()).toEqual({ wrapped: { ok: true } });
    expect(res.headers.get('x-tag')).toBe('1');
    expect(res.headers.get('x-gateway-provider')).toBe('fake');
  });
});

describe('runPipeline: finally stages (fire-and-forget)', () => {
  test('get the outcome once the answer is settled, without delaying the response', async () => {
    let resolveOutcome!: (o: Outcome) => void;
    const got = new Promise<Outcome>((r) => (resolveOutcome = r));
    const never: FinallyStage = { name: 'slow-sink', phase: 'finally', rule: 'fire-and-forget', run: () => new Promise(() => {}) };
    const sink: FinallyStage = { name: 'sink', phase: 'finally', rule: 'fire-and-forget', run: (_req, o) => resolveOutcome(o) };
    const res = await runPipeline(request(), deps({ finallyStages: [never, sink] }));
    expect(res.status).toBe(200);
    const outcome = await got;
    expect(outcome).toMatchObject({ status: 200, providerId: 'fake', targetIndex: 'config', responseBody: '{"ok":true}' });
    expect(outcome.attempts).toMatchObject([{ index: 'config', providerId: 'fake', retry: 0, status: 200 }]);
  });

  test('a finally stage that throws or rejects is logged, and the others still run', async () => {
    warnings.length = 0;
    let ran = false;
    const throws: FinallyStage = { name: 'throws', phase: 'finally', rule: 'fire-and-forget', run: () => { throw new Error('sync'); } };
    const rejects: FinallyStage = { name: 'rejects', phase: 'finally', rule: 'fire-and-forget', run: async () => { throw new Error('async'); } };
    const last: FinallyStage = { name: 'last', phase: 'finally', rule: 'fire-and-forget', run: () => void (ran = true) };
    const res = await runPipeline(request(), deps({ finallyStages: [throws, rejects, last] }));
    expect(res.status).toBe(200);
    await Bun.sleep(10);
    expect(ran).toBe(true);
    expect(warnings).toHaveLength(2);
  });

  test('a request ended by a request stage is still observed, with its status', async () => {
    let observed: Outcome | undefined;
    const deny = reqStage('limit', () => new Response('no', { status: 429 }));
    await runPipeline(request(), deps({ requestStages: [deny] }, [answering()], (_req, o) => (observed = o)));
    await Bun.sleep(5);
    expect(observed?.status).toBe(429);
    expect(observed?.providerId).toBeUndefined();
  });
});
