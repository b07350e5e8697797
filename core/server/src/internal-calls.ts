import { parseConfigHeader } from '@gateway/config';
import { ClientGoneError, type PipelineDeps, rejectRequest, runPipeline } from '@gateway/pipeline';
import { type GatewayCalls, GatewayError, type GatewayRequest, type InternalCall, newTraceId } from '@gateway/sdk';
import { validateBody } from '@gateway/validation';

const PATHS: Record<InternalCall['endpoint'], string> = {
  chatComplete: '/chat/completions',
  complete: '/completions',
  embed: '/embeddings',
  moderate: '/moderations',
  responses: '/responses',
};

const NO_METADATA: Readonly<Record<string, string>> = Object.freeze(Object.create(null) as Record<string, string>);
const NEVER = new AbortController().signal;

/**
 * Service `gatewayCalls`: calls plugins make through the gateway's own pipeline, as a given caller. They are
 * requests like any other (logged, with the span name given), minus the HTTP: no headers but the span's, no raw body.
 */
export function internalCalls(pipeline: PipelineDeps): GatewayCalls {
  return {
    resolveConfig: (value, caller) => parseConfigHeader(value, caller),
    async call(call: InternalCall): Promise<Response> {
      const headers = new Headers();
      if (call.spanName) headers.set('x-gateway-span-name', call.spanName);
      const req: GatewayRequest = {
        traceId: call.traceId ?? newTraceId(),
        endpoint: call.endpoint,
        method: 'POST',
        path: PATHS[call.endpoint],
        search: '',
        headers,
        body: call.body,
        rawBody: undefined,
        parsedBody: undefined,
        metadata: call.metadata ?? NO_METADATA,
        caller: call.caller,
        config: call.config,
        signal: call.signal ?? NEVER,
        receivedAt: performance.now(),
        locals: {},
        ...(call.prompt ? { prompt: call.prompt } : {}),
      };
      try {
        validateBody(call.endpoint, call.body);
        return await runPipeline(req, pipeline);
      } catch (error) {
        if (error instanceof ClientGoneError) return error.toResponse();
        return rejectRequest(req, pipeline, GatewayError.from(error, { phase: 'internal call' }));
      }
    },
  };
}
