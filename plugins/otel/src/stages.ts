/**
 * The stages that make the spans (only registered when tracing is on): one span per gateway call, continuing the
 * caller's W3C `traceparent`, with a child span per attempt (retries and fallbacks each their own), per hook run
 * (input and output hooks and guardrails) and per cache lookup. Stages only start and end spans and set the
 * attributes already at hand; the answer's attributes are set in the finally stage, after the answer was sent.
 */
import { type Context, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import type { Attempt, AttemptStage, FinallyStage, GatewayConfig, GatewayRequest, RequestStage, ResponseStage } from '@gateway/sdk';
import { endAttributes, spanNameOf, startAttributes } from './attributes.ts';

interface CallSpans {
  root: Span;
  context: Context;
  inputHooks?: Span;
  outputHooks?: Span;
}

export interface SpanStages {
  request: RequestStage[];
  attempt: AttemptStage[];
  response: ResponseStage[];
  finally: FinallyStage;
}

/** Bodies as span attributes (GATEWAY_OTEL_CAPTURE_BODIES): at most this many characters each. */
const BODY_ATTRIBUTE_CHARS = 16_384;

const hasHooks = (config: GatewayConfig, phase: 'input' | 'output'): boolean => {
  const lists = phase === 'input' ? [config.before_request_hooks, config.input_guardrails] : [config.after_request_hooks, config.output_guardrails];
  return lists.some((list) => Array.isArray(list) && list.length > 0);
};

/** Whether the target sends the client's `traceparent` on (config `forward_headers`). */
const forwardsTraceparent = (attempt: Attempt): boolean => attempt.target.forward_headers?.some((name) => name.toLowerCase() === 'traceparent') ?? false;

const traceparentOf = (span: Span): string => {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
};

/** Wall-clock milliseconds of a `performance.now()` reading. */
const wallClock = (monotonic: number): number => Date.now() - (performance.now() - monotonic);

export function spanStages(tracer: Tracer, captureBodies: boolean): SpanStages {
  const calls = new WeakMap<GatewayRequest, CallSpans>();
  const cacheLookups = new WeakMap<Attempt, Span>();

  /** The call's span, made by the first stage that sees the request (its start is the request's arrival). */
  const callOf = (req: GatewayRequest): CallSpans => {
    let call = calls.get(req);
    if (call) return call;
    const incoming = parseTraceParent(req.headers.get('traceparent') ?? '');
    const parent = incoming ? trace.setSpanContext(ROOT_CONTEXT, { ...incoming, isRemote: true }) : ROOT_CONTEXT;
    const root = tracer.startSpan(spanNameOf(req), { kind: SpanKind.SERVER, startTime: wallClock(req.receivedAt), attributes: startAttributes(req) }, parent);
    call = { root, context: trace.setSpan(parent, root) };
    calls.set(req, call);
    return call;
  };

  const child = (call: CallSpans, name: string, kind = SpanKind.INTERNAL, parent = call.context): Span => tracer.startSpan(name, { kind }, parent);

  const endHooks = (span: Span | undefined, failed: boolean): void => {
    if (!span) return;
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: 'denied or failed' });
    span.end();
  };

  const request: RequestStage[] = [
    {
      name: 'otel:call',
      phase: 'request',
      rule: 'sequential',
      before: ['prompts:render', 'hooks:input'],
      run: (req) => void callOf(req),
    },
    {
      name: 'otel:input-hooks',
      phase: 'request',
      rule: 'sequential',
      after: 'prompts:render',
      before: 'hooks:input',
      applies: (req) => req.body !== undefined && hasHooks(req.config, 'input'),
      run(req) {
        const call = callOf(req);
        call.inputHooks = child(call, 'gateway hooks input');
      },
    },
    {
      name: 'otel:input-hooks-end',
      phase: 'request',
      rule: 'sequential',
      after: 'hooks:input',
      applies: (req) => req.body !== undefined && hasHooks(req.config, 'input'),
      run(req) {
        const call = callOf(req);
        endHooks(call.inputHooks, false);
        call.inputHooks = undefined;
      },
    },
  ];

  const attempt: AttemptStage[] = [
    {
      name: 'otel:attempt',
      phase: 'attempt',
      rule: 'sequential',
      // Outermost: the attempt's span holds its cache lookup and whatever else answers for the provider.
      before: ['response-cache', 'circuit-breaker'],
      async run(req, attempt, next) {
        const call = callOf(req);
        const model = attempt.body?.model;
        const span = tracer.startSpan(
          typeof model === 'string' ? `${spanNameOf(req).split(' ')[0]} ${model}` : `gateway attempt ${attempt.index}`,
          {
            kind: SpanKind.CLIENT,
            attributes: {
              'gen_ai.provider.name': attempt.provider.id,
              'gateway.target.index': attempt.index,
              'gateway.attempt.retry': attempt.retry,
              ...(typeof model === 'string' ? { 'gen_ai.request.model': model } : {}),
              ...(attempt.continuation ? { 'gateway.attempt.continued': attempt.continuation.mode } : {}),
            },
          },
          call.context,
        );
        if (attempt.target.cache) cacheLookups.set(attempt, child(call, 'gateway cache lookup', SpanKind.INTERNAL, trace.setSpan(call.context, span)));
        // The provider sees this attempt as the parent of its own spans; only when the config forwards the header.
        if (forwardsTraceparent(attempt)) req.headers.set('traceparent', traceparentOf(span));
        let result: Awaited<ReturnType<typeof next>>;
        try {
          result = await next();
        } catch (error) {
          endCacheLookup(req, attempt);
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
          span.end();
          throw error;
        }
        endCacheLookup(req, attempt);
        span.setAttribute('http.response.status_code', result.status);
        if (result.upstreamLatencyMs !== undefined) span.setAttribute('gateway.upstream.duration_ms', result.upstreamLatencyMs);
        if (result.error) span.setAttribute('error.type', result.error.code);
        if (result.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error?.code ?? String(result.status) });
        // A stream's attempt lasts until its last byte.
        result.settled.then(
          () => span.end(),
          () => span.end(),
        );
        return result;
      },
    },
    {
      // Reached only when the cache did not answer: the lookup ends here, before the provider is called.
      name: 'otel:cache-lookup-end',
      phase: 'attempt',
      rule: 'sequential',
      after: 'response-cache',
      before: 'circuit-breaker',
      run(req, attempt, next) {
        endCacheLookup(req, attempt);
        return next();
      },
    },
  ];

  function endCacheLookup(req: GatewayRequest, attempt: Attempt): void {
    const span = cacheLookups.get(attempt);
    if (!span) return;
    cacheLookups.delete(attempt);
    const status = req.locals.cacheStatus;
    if (typeof status === 'string') span.setAttribute('gateway.cache.status', status);
    span.end();
  }

  const response: ResponseStage[] = [
    {
      name: 'otel:output-hooks',
      phase: 'response',
      rule: 'sequential',
      before: 'hooks:output',
      applies: (req) => hasHooks(req.config, 'output'),
      run(req) {
        const call = callOf(req);
        call.outputHooks = child(call, 'gateway hooks output');
      },
    },
    {
      name: 'otel:output-hooks-end',
      phase: 'response',
      rule: 'sequential',
      after: 'hooks:output',
      applies: (req) => hasHooks(req.config, 'output'),
      run(req) {
        const call = callOf(req);
        endHooks(call.outputHooks, false);
        call.outputHooks = undefined;
      },
    },
  ];

  const done: FinallyStage = {
    name: 'otel:call-end',
    phase: 'finally',
    rule: 'fire-and-forget',
    // The cost is attached by the pricing plugin's finally stage.
    after: 'pricing',
    run(req, outcome) {
      const call = callOf(req);
      // Hooks that never reached their end stage denied the call or failed.
      endHooks(call.inputHooks, true);
      endHooks(call.outputHooks, true);
      call.root.setAttributes(endAttributes(req, outcome));
      if (captureBodies) {
        if (req.rawBody) call.root.setAttribute('gateway.request.body', new TextDecoder().decode(req.rawBody.subarray(0, BODY_ATTRIBUTE_CHARS * 4)).slice(0, BODY_ATTRIBUTE_CHARS));
        if (outcome.responseBody) call.root.setAttribute('gateway.response.body', outcome.responseBody.slice(0, BODY_ATTRIBUTE_CHARS));
      }
      if (outcome.status >= 500 || outcome.error) call.root.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error?.code ?? String(outcome.status) });
      call.root.end();
      calls.delete(req);
    },
  };

  return { request, attempt, response, finally: done };
}

