/**
 * The hook engine as two pipeline stages:
 * - `hooks:input` (request phase, sequential): before_request_hooks and input_guardrails, once per request, before
 *   routing. Transforms replace `req.body` with a new object; a denial ends the request (the provider is never called).
 * - `hooks:output` (response phase, sequential): output_guardrails and after_request_hooks on the provider's answer.
 *   Transforms replace the answer's JSON; a denial replaces the answer with the 400; streams: see stream.ts.
 * Async hooks are started and never awaited; their results reach `req.locals` (and so the request log) later.
 */
import { GatewayError, type GatewayRequest, type GuardrailCheckContext, type JsonObject, type Logger, type RequestStage, type ResponseStage } from '@gateway/sdk';
import { createNormaliser, type Normaliser } from './normalise.ts';
import { runHooks } from './run.ts';
import { frame, guardStream, type StreamAssembler, type StreamEnd } from './stream.ts';
import { type CheckLookup, type HookResult, type HookSpec, type HookState, LOCALS, type PhasePlan, type SavedGuardrailResolver } from './types.ts';

export interface EngineOptions {
  /** The check registry. Called when a request needs it (the server provides the registry after plugins load). */
  checks(): CheckLookup;
  /** Saved guardrails (string entries), when a store provides them. */
  savedGuardrail?(): SavedGuardrailResolver | undefined;
  /** A check's time limit unless its `timeout` parameter says otherwise (default 10 s). */
  defaultTimeoutMs?: number;
  logger?: Logger;
}

export interface HookEngine {
  request: RequestStage;
  response: ResponseStage;
  normaliser: Normaliser;
}

const noop = () => {};
const isObj = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

function stateOf(req: GatewayRequest): HookState {
  let state = req.locals[LOCALS.state] as HookState | undefined;
  if (!state) {
    state = { all: [], answer: [], failed: false };
    req.locals[LOCALS.state] = state;
    req.locals[LOCALS.results] = state.all;
  }
  return state;
}

/** Work the request log must wait for before it writes the request's row. */
function track(req: GatewayRequest, work: Promise<unknown>): void {
  const next = work.then(noop, noop);
  const prev = req.locals[LOCALS.settled] as Promise<void> | undefined;
  req.locals[LOCALS.settled] = prev ? Promise.all([prev, next]).then(noop) : next;
}

/** Results of awaited hooks: kept for the answer and the log. */
function record(state: HookState, results: readonly HookResult[]): void {
  for (const r of results) {
    state.all.push(r);
    state.answer.push(r);
    if (!r.verdict) state.failed = true;
  }
}

function denial(results: readonly HookResult[], phase: 'request' | 'answer'): GatewayError {
  const ids = results.filter((r) => r.deny).map((r) => JSON.stringify(r.id));
  return new GatewayError({
    code: 'guardrail_denied',
    type: 'guardrail_denied',
    status: 400,
    message: `The ${phase} was denied by ${ids.length === 1 ? 'guardrail' : 'guardrails'} ${ids.join(', ')}`,
    extra: { hook_results: results },
  });
}

/** The same answer with another body (the original's body was read). */
function rebuild(response: Response, body: string): Response {
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

/** `hook_results` added to a JSON object's text without re-serialising the rest. */
export function withHookResults(text: string, results: readonly HookResult[]): string | undefined {
  const start = text.search(/\S/);
  const end = text.lastIndexOf('}');
  if (start < 0 || text.charCodeAt(start) !== 123 /* { */ || end < start) return undefined;
  const head = text.slice(0, end).trimEnd();
  return `${head}${head.endsWith('{') ? '' : ','}"hook_results":${JSON.stringify(results)}${text.slice(end)}`;
}

export function createHookEngine(opts: EngineOptions): HookEngine {
  const normaliser = createNormaliser({ defaultTimeoutMs: opts.defaultTimeoutMs, savedGuardrail: opts.savedGuardrail });
  const { planOf } = normaliser;

  /** Starts async hooks; their results join the log when they are in. */
  function fireAndForget(req: GatewayRequest, state: HookState, hooks: readonly HookSpec[], body: JsonObject, contextFor: (b: JsonObject) => GuardrailCheckContext): void {
    const work = runHooks(hooks, opts.checks(), body, contextFor, false).then(
      (out) => {
        for (const r of out.results) state.all.push(r);
      },
      (error: unknown) => opts.logger?.warn({ err: error, traceId: req.traceId }, 'async hooks failed'),
    );
    track(req, work);
  }

  const request: RequestStage = {
    name: 'hooks:input',
    phase: 'request',
    rule: 'sequential',
    // ARCHITECTURE.md puts hooks and input guardrails right after the config: no built-in plugin registers another
    // request stage, and a third-party one registers later, so it runs after this one unless it says `before`.
    applies: (req) => req.body !== undefined && planOf(req.config).input !== undefined,
    async run(req) {
      const plan = planOf(req.config).input as PhasePlan;
      const original = req.body as JsonObject;
      const state = stateOf(req);
      // Checks see the request with the body being judged; the request itself only changes once all have answered.
      const contextFor = (body: JsonObject): GuardrailCheckContext => ({ request: body === original ? req : { ...req, body }, phase: 'input' });
      // Async hooks judge the body as it came in, even if an awaited hook replaces it meanwhile.
      if (plan.async.length) fireAndForget(req, state, plan.async, original, (body) => ({ request: { ...req, body }, phase: 'input' }));
      if (plan.sync.length === 0) return;
      const out = await runHooks(plan.sync, opts.checks(), original, contextFor, true);
      record(state, out.results);
      if (out.results.some((r) => r.deny)) throw denial(state.answer, 'request');
      if (out.body !== original) {
        req.body = out.body;
      }
    },
  };

  async function judgeJson(req: GatewayRequest, response: Response, plan: PhasePlan | undefined, state: HookState): Promise<Response | undefined> {
    const ok = response.status >= 200 && response.status < 300;
    if (!plan || !ok) {
      // Output hooks judge answers, not errors; an input hook's failure is still reported on whatever came back.
      if (!state.failed) return undefined;
      const text = await response.text();
      return rebuild(response, withHookResults(text, state.answer) ?? text);
    }
    const text = await response.text();
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      answer = undefined;
    }
    if (!isObj(answer)) return rebuild(response, text);
    const body = answer as JsonObject;
    const contextFor = (b: JsonObject): GuardrailCheckContext => ({ request: req, phase: 'output', responseBody: b });
    if (plan.async.length) fireAndForget(req, state, plan.async, body, contextFor);
    if (plan.sync.length === 0) return rebuild(response, state.failed ? (withHookResults(text, state.answer) ?? text) : text);
    const out = await runHooks(plan.sync, opts.checks(), body, contextFor, true);
    record(state, out.results);
    if (out.results.some((r) => r.deny)) throw denial(state.answer, 'answer');
    if (out.body === body) return rebuild(response, state.failed ? (withHookResults(text, state.answer) ?? text) : text);
    return rebuild(response, JSON.stringify(state.failed ? { ...out.body, hook_results: state.answer as unknown as JsonObject[] } : out.body));
  }

  function judgeStream(req: GatewayRequest, response: Response, plan: PhasePlan | undefined, state: HookState): Response {
    let settle!: () => void;
    track(req, new Promise<void>((resolve) => (settle = resolve)));
    const stream = guardStream(response.body as ReadableStream<Uint8Array>, {
      assemble: plan !== undefined,
      abandon: settle,
      async finish(assembled: StreamAssembler): Promise<StreamEnd> {
        try {
          const frames: string[] = [];
          if (plan) {
            const answer = assembled.answer();
            const contextFor = (b: JsonObject): GuardrailCheckContext => ({ request: req, phase: 'output', responseBody: b });
            if (plan.async.length) fireAndForget(req, state, plan.async, answer, contextFor);
            if (plan.sync.length) {
              // What was sent cannot be taken back: transforms of a streamed answer are not applied.
              const out = await runHooks(plan.sync, opts.checks(), answer, contextFor, false);
              record(state, out.results);
              if (out.results.some((r) => r.deny)) return { frames: [frame(denial(state.answer, 'answer').toBody())], done: false };
            }
          }
          if (state.failed) {
            const meta = assembled.first ?? {};
            const object = meta.object === 'text_completion' ? 'text_completion' : 'chat.completion.chunk';
            frames.push(frame({ id: meta.id ?? null, object, created: meta.created ?? null, model: meta.model ?? null, choices: [], hook_results: state.answer }));
          }
          return { frames, done: true };
        } finally {
          settle();
        }
      },
    });
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    return new Response(stream, { status: response.status, statusText: response.statusText, headers });
  }

  const response: ResponseStage = {
    name: 'hooks:output',
    phase: 'response',
    rule: 'sequential',
    applies: (req) =>
      req.body !== undefined && (planOf(req.config).output !== undefined || (req.locals[LOCALS.state] as HookState | undefined)?.failed === true),
    async run(req, answer) {
      const plan = planOf(req.config).output;
      const state = stateOf(req);
      const type = answer.headers.get('content-type') ?? '';
      if (type.includes('text/event-stream')) {
        if (!answer.body || answer.status < 200 || answer.status >= 300) return undefined;
        return judgeStream(req, answer, plan, state);
      }
      if (!type.includes('json')) return undefined; // nothing a check could read, nowhere to put hook_results
      return judgeJson(req, answer, plan, state);
    },
  };

  return { request, response, normaliser };
}
