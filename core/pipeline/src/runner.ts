import {
  type AttemptRecord,
  type FinallyStage,
  GatewayError,
  type GatewayRequest,
  type Logger,
  type Outcome,
  type RequestStage,
  type ResponseStage,
  type SettledBody,
} from '@gateway/sdk';
import { ClientGoneError } from './call.ts';
import { type EngineDeps, type RoutedResult, route } from './engine.ts';
import { CompletedOutcome } from './outcome.ts';

export interface PipelineStages {
  requestStages: readonly RequestStage[];
  responseStages: readonly ResponseStage[];
  finallyStages: readonly FinallyStage[];
}

export interface PipelineDeps extends EngineDeps {
  stages: PipelineStages;
  logger: Logger;
  /** Called once per request when the answer is settled (metrics). */
  observe?(req: GatewayRequest, outcome: Outcome): void;
}

/** Whether any stage of a phase has work for this request (a stage without `applies` always has). */
function anyApplies(stages: readonly { applies?(req: GatewayRequest): boolean }[], req: GatewayRequest): boolean {
  for (const stage of stages) if (!stage.applies || stage.applies(req)) return true;
  return false;
}

/** Response headers of INTERFACE.md, set on a Response that already exists. */
function decorate(response: Response, req: GatewayRequest, routed: RoutedResult | undefined): Response {
  const h = response.headers;
  h.set('x-gateway-trace-id', req.traceId);
  if (routed) {
    if (routed.providerId) h.set('x-gateway-provider', routed.providerId);
    h.set('x-gateway-last-used-option-index', routed.index);
    h.set('x-gateway-retry-attempt-count', String(routed.retries));
  }
  if (!h.has('x-gateway-cache-status')) h.set('x-gateway-cache-status', String(req.locals.cacheStatus ?? 'DISABLED'));
  return response;
}

/** The client's Response for a routed result: a whole answer is built once, with every header in one go. */
function respond(routed: RoutedResult, req: GatewayRequest): Response {
  const answer = routed.answer;
  if (!answer) return decorate(routed.response, req, routed);
  const headers: Record<string, string> = {
    'content-type': answer.contentType,
    'x-gateway-trace-id': req.traceId,
    'x-gateway-last-used-option-index': routed.index,
    'x-gateway-retry-attempt-count': String(routed.retries),
    'x-gateway-cache-status': String(req.locals.cacheStatus ?? 'DISABLED'),
  };
  if (routed.providerId) headers['x-gateway-provider'] = routed.providerId;
  return new Response(answer.text, { status: answer.status, headers });
}

/**
 * One request through the pipeline: request stages (sequential), routing with attempt stages around each provider
 * call, response stages, then the finally stages (fire-and-forget) once the answer has been sent whole.
 */
export async function runPipeline(req: GatewayRequest, deps: PipelineDeps): Promise<Response> {
  const { stages } = deps;
  const attempts: AttemptRecord[] = [];
  let routed: RoutedResult | undefined;
  let response: Response | undefined;
  let settled: Promise<SettledBody>;
  try {
    if (anyApplies(stages.requestStages, req)) response = await runBeforeRouting(req, stages);
    if (!response) routed = await route(req, req.config, 'config', deps, attempts);
    settled = routed ? routed.settled : Promise.resolve({ body: undefined });
    if (routed && anyApplies(stages.responseStages, req)) response = await runAfterRouting(req, routed.response, stages);
  } catch (error) {
    if (error instanceof ClientGoneError) {
      finish(req, deps, error, routed, attempts, Promise.resolve({ body: undefined, error, clientAborted: true }));
      return error.toResponse();
    }
    const err = GatewayError.from(error, { phase: 'pipeline' });
    if (err.status >= 500) deps.logger.error({ err: err.cause ?? err, traceId: req.traceId, plugin: err.plugin, phase: err.phase }, 'pipeline error');
    const failed = err.toResponse();
    finish(req, deps, err, routed, attempts, Promise.resolve({ body: undefined, error: err }), failed.status);
    return decorate(failed, req, routed);
  }
  finish(req, deps, routed?.error, routed, attempts, settled, response?.status ?? routed?.status);
  if (response) return decorate(response, req, routed);
  return respond(routed as RoutedResult, req);
}

async function runBeforeRouting(req: GatewayRequest, stages: PipelineStages): Promise<Response | undefined> {
  for (const stage of stages.requestStages) {
    if (stage.applies && !stage.applies(req)) continue;
    try {
      const early = await stage.run(req);
      if (early) return early;
    } catch (error) {
      throw GatewayError.from(error, { plugin: stage.name, phase: 'request' });
    }
  }
  return undefined;
}

async function runAfterRouting(req: GatewayRequest, response: Response, stages: PipelineStages): Promise<Response> {
  let out = response;
  for (const stage of stages.responseStages) {
    if (stage.applies && !stage.applies(req)) continue;
    try {
      out = (await stage.run(req, out)) ?? out;
    } catch (error) {
      throw GatewayError.from(error, { plugin: stage.name, phase: 'response' });
    }
  }
  return out;
}

/** A request refused before routing (bad body, bad config): answered at once and still logged. */
export function rejectRequest(req: GatewayRequest, deps: PipelineDeps, error: GatewayError): Response {
  finish(req, deps, error, undefined, [], Promise.resolve({ body: undefined, error }), error.status);
  return decorate(error.toResponse(), req, undefined);
}

/** Runs the finally stages once the answer has been sent whole (or failed); never delays the response. */
function finish(
  req: GatewayRequest,
  deps: PipelineDeps,
  error: GatewayError | undefined,
  routed: RoutedResult | undefined,
  attempts: AttemptRecord[],
  settled: Promise<SettledBody>,
  status?: number,
): void {
  settled.then((end) => {
    const finalError = end.error ?? error;
    const outcome: Outcome = new CompletedOutcome(
      end.clientAborted ? 499 : finalError && status !== undefined && status < 400 ? 502 : (status ?? finalError?.status ?? 500),
      routed?.providerId || undefined,
      routed?.index,
      performance.now() - req.receivedAt,
      routed?.upstreamLatencyMs,
      end.body,
      finalError,
      attempts,
      end.usage,
    );
    deps.observe?.(req, outcome);
    for (const stage of deps.stages.finallyStages) {
      if (stage.applies && !stage.applies(req)) continue;
      try {
        const done = stage.run(req, outcome);
        if (done) done.catch((e: unknown) => deps.logger.warn({ err: e, stage: stage.name }, 'finally stage failed'));
      } catch (e) {
        deps.logger.warn({ err: e, stage: stage.name }, 'finally stage failed');
      }
    }
  });
}
