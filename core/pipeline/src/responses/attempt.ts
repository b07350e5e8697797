/**
 * One attempt of a Responses call (docs/responses.md). At a provider that declares `endpoints.responses` the body
 * goes to the provider as it is and the answer comes back as it is (call.ts), and the Response it produced is kept in
 * the store. At any other provider with a chat adapter the request is translated to a chat completion, sent through
 * that adapter as any chat call is, and the answer translated back (whole, or event by event), then kept. Either way
 * `previous_response_id` is read from the store when the provider cannot know it (every translated call; a native one
 * only when the previous response was not the provider's own).
 */
import {
  type Attempt,
  type AttemptResult,
  conversationOf,
  Errors,
  GatewayError,
  type GatewayRequest,
  type JsonObject,
  type ProviderAdapter,
  type SettledBody,
  type StoredResponse,
} from '@gateway/sdk';
import type { CallOptions } from '../call.ts';
import { storedInputItems } from './items.ts';
import { inputItems, isObject, responsesToChat } from './request.ts';
import { chatToResponse, newId, type ResponseFrame } from './response.ts';
import { responseStore } from './store.ts';
import { ChatToResponsesStream } from './stream.ts';
import { NativeResponseWatch } from './native.ts';

type CallProvider = (req: GatewayRequest, attempt: Attempt, opts: CallOptions) => Promise<AttemptResult>;

/** The inner requests this module sends on to a native provider: call.ts then passes them through. */
const forwarding = new WeakSet<GatewayRequest>();

/** Whether this attempt is a Responses call that this module handles (not one of its own forwarded calls). */
export function handlesResponses(req: GatewayRequest): boolean {
  return req.endpoint === 'responses' && !forwarding.has(req);
}

/** Whether the provider speaks the Responses API itself. */
export function speaksResponses(provider: ProviderAdapter): boolean {
  return provider.endpoints.responses !== undefined;
}

const encoder = new TextEncoder();

function failed(providerId: string, err: GatewayError): AttemptResult {
  return { response: err.toResponse(), status: err.status, providerId, error: err, settled: Promise.resolve({ body: undefined, error: err }) };
}

/** The provider said the input is longer than the model's context window (its words differ by provider). */
const CONTEXT_EXCEEDED = /context[_ ]length|context window|maximum context|prompt is too long|input is too long|too many (input )?tokens|exceeds? the (model's )?(maximum|context|token)/i;

export function isContextExceeded(result: AttemptResult): boolean {
  const err = result.error;
  if (!err || (result.status !== 400 && result.status !== 413 && result.status !== 422)) return false;
  return err.code === 'context_length_exceeded' || CONTEXT_EXCEEDED.test(err.message);
}

export function contextExceeded(providerId: string, detail: string): GatewayError {
  return new GatewayError({
    code: 'context_length_exceeded',
    type: 'invalid_request_error',
    status: 400,
    param: 'input',
    message: `The input is longer than the model's context window and truncation is disabled (provider ${providerId}: ${detail})`,
  });
}

/** The stored response `previous_response_id` names, when the store has it in the caller's workspace. */
async function priorOf(req: GatewayRequest, body: JsonObject): Promise<StoredResponse | undefined> {
  const id = body.previous_response_id;
  if (typeof id !== 'string' || !id) return undefined;
  return responseStore()?.get(req.caller.workspaceId, id);
}

/** A translated call cannot continue a response the store does not have. */
function unknownPrevious(body: JsonObject, providerId: string): GatewayError {
  if (!responseStore())
    return Errors.badRequest('previous_response_id: the response store is not loaded on this gateway, so no earlier response can be continued', 'previous_response_id');
  const message = `Previous response with id '${String(body.previous_response_id)}' not found (provider ${providerId})`;
  return new GatewayError({ code: 'not_found', type: 'not_found_error', status: 404, message, param: 'previous_response_id' });
}

/** Keeps a Response the client got (unless it asked `store: false`); a store failure does not fail the answer. */
async function keep(req: GatewayRequest, body: JsonObject, response: JsonObject, context: JsonObject[], provider: string, translated: boolean): Promise<void> {
  const store = responseStore();
  if (!store || body.store === false || typeof response.id !== 'string') return;
  const status = response.status;
  if (status !== 'completed' && status !== 'incomplete') return;
  try {
    await store.save({ id: response.id, workspaceId: req.caller.workspaceId, response, inputItems: storedInputItems(body), context, provider, translated });
  } catch {
    // The answer stands: the client has it. GET /v1/responses/{id} then answers 404, as for an expired one.
  }
}

export async function callResponses(req: GatewayRequest, attempt: Attempt, opts: CallOptions, call: CallProvider): Promise<AttemptResult> {
  const providerId = attempt.provider.id;
  const body = (attempt.body ?? req.body) as JsonObject;
  let prior: StoredResponse | undefined;
  try {
    prior = await priorOf(req, body);
  } catch (error) {
    return failed(providerId, GatewayError.from(error, { phase: 'prepare' }));
  }
  // A native provider may know an id the store does not (its own, kept with store: false here): forwarded as it is.
  if (speaksResponses(attempt.provider)) return native(req, attempt, opts, call, body, prior);
  if (!prior && typeof body.previous_response_id === 'string' && body.previous_response_id) return failed(providerId, unknownPrevious(body, providerId));
  return translated(req, attempt, opts, call, body, prior ? conversationOf(prior) : []);
}

/** A native provider: the call passes through; a previous response it did not produce is sent as input items. */
async function native(req: GatewayRequest, attempt: Attempt, opts: CallOptions, call: CallProvider, body: JsonObject, prior: StoredResponse | undefined): Promise<AttemptResult> {
  let sent = body;
  let context: JsonObject[] = [];
  if (prior && (prior.translated || prior.provider !== attempt.provider.id)) {
    context = conversationOf(prior);
    const { previous_response_id: _, ...rest } = body;
    sent = { ...rest, input: [...context, ...inputItems(body.input)] };
  } else if (prior) context = conversationOf(prior);
  const headers = new Headers(req.headers);
  // The answer is read here to be kept: asked for unencoded.
  headers.set('accept-encoding', 'identity');
  const inner: GatewayRequest = { ...req, headers };
  forwarding.add(inner);
  const result = await call(inner, sent === body ? attempt : { ...attempt, body: sent }, opts);
  if (result.error || result.status !== 200 || !result.response.body) return result;
  const watch = new NativeResponseWatch((response) => keep(req, body, response, context, attempt.provider.id, false));
  return { ...result, response: watch.wrap(result.response) };
}

async function translated(req: GatewayRequest, attempt: Attempt, opts: CallOptions, call: CallProvider, body: JsonObject, context: JsonObject[]): Promise<AttemptResult> {
  const providerId = attempt.provider.id;
  const chat = attempt.provider.endpoints.chatComplete;
  if (!chat) return failed(providerId, Errors.unsupportedEndpoint(providerId, '/responses'));
  const frame: ResponseFrame = { id: newId('resp'), createdAt: Math.floor(Date.now() / 1000), body };
  let prior = context;
  for (;;) {
    let chatBody: JsonObject;
    try {
      chatBody = responsesToChat(body, { translates: chat.request !== undefined, prior });
    } catch (error) {
      return failed(providerId, GatewayError.from(error, { phase: 'prepare' }));
    }
    // The same request as a chat call: the provider's chat translator, headers and stream handling apply unchanged.
    // Attempt stages already ran on the Responses request.
    const inner: GatewayRequest = { ...req, endpoint: 'chatComplete', path: '/chat/completions', search: '', body: chatBody, parsedBody: chatBody, rawBody: undefined };
    const result = await call(inner, { ...attempt, body: chatBody }, opts);
    if (isContextExceeded(result)) {
      // truncation auto: the oldest half of the earlier conversation goes, until none is left (docs/responses.md).
      if (body.truncation === 'auto' && prior.length > 0) {
        prior = dropOldest(prior);
        continue;
      }
      return failed(providerId, contextExceeded(providerId, result.error?.message ?? 'context exceeded'));
    }
    if (result.error || result.status >= 400) return result;
    return answer(req, body, frame, context, result, providerId, opts.captureLimit);
  }
}

/** The earlier conversation without its oldest half; never starting with a tool result whose call is gone. */
export function dropOldest(items: readonly JsonObject[]): JsonObject[] {
  let rest = items.slice(Math.ceil(items.length / 2));
  while (rest.length && rest[0]?.type === 'function_call_output') rest = rest.slice(1);
  return rest;
}

async function answer(req: GatewayRequest, body: JsonObject, frame: ResponseFrame, context: JsonObject[], result: AttemptResult, providerId: string, captureLimit: number): Promise<AttemptResult> {
  if (result.answer) {
    let text: string;
    let usage: JsonObject | undefined;
    let response: JsonObject;
    try {
      const json = JSON.parse(result.answer.text) as JsonObject;
      usage = isObject(json.usage) ? json.usage : undefined;
      response = chatToResponse(json, frame);
      text = JSON.stringify(response);
    } catch (error) {
      return failed(providerId, Errors.upstreamInvalid(providerId, error instanceof Error ? error.message : String(error)));
    }
    await keep(req, body, response, context, providerId, true);
    return {
      response: new Response(text, { status: 200, headers: { 'content-type': 'application/json' } }),
      status: 200,
      providerId,
      upstreamLatencyMs: result.upstreamLatencyMs,
      settled: Promise.resolve({ body: text, usage }),
    };
  }
  const upstream = result.response.body;
  if (!upstream) return failed(providerId, Errors.upstreamInvalid(providerId, 'an empty answer'));
  return streamed(result, upstream, new ChatToResponsesStream(frame), captureLimit, (response) => keep(req, body, response, context, providerId, true));
}

/** The chat stream of `result` as Responses events; the final Response is kept before its event is sent. */
function streamed(
  result: AttemptResult,
  upstream: ReadableStream<Uint8Array>,
  converter: ChatToResponsesStream,
  captureLimit: number,
  save: (response: JsonObject) => Promise<void>,
): AttemptResult {
  const reader = upstream.getReader();
  const decoder = new TextDecoder();
  let captured = '';
  let ended = false;
  let saved = false;
  let resolveSettled!: (s: SettledBody) => void;
  const settled = new Promise<SettledBody>((resolve) => (resolveSettled = resolve));
  const finish = (clientAborted: boolean) => {
    if (ended) return;
    ended = true;
    result.settled.then((inner) => resolveSettled({ ...inner, body: captured || undefined, clientAborted: clientAborted || inner.clientAborted }));
  };
  const send = async (controller: ReadableStreamDefaultController<Uint8Array>, text: string): Promise<boolean> => {
    if (!text) return false;
    // Kept before the client reads response.completed, so that a retrieve right after finds it.
    if (converter.final && !saved) {
      saved = true;
      await save(converter.final);
    }
    if (captured.length < captureLimit) captured += text.slice(0, captureLimit - captured.length);
    controller.enqueue(encoder.encode(text));
    return true;
  };
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        let read: Awaited<ReturnType<typeof reader.read>>;
        try {
          read = await reader.read();
        } catch (error) {
          await send(controller, converter.push(`data: ${JSON.stringify({ error: { message: error instanceof Error ? error.message : String(error), code: 'stream_interrupted' } })}\n\n`));
          controller.close();
          return finish(false);
        }
        if (read.done) {
          await send(controller, converter.end());
          controller.close();
          return finish(false);
        }
        if (await send(controller, converter.push(decoder.decode(read.value, { stream: true })))) return;
      }
    },
    cancel(reason) {
      reader.cancel(reason).catch(() => {});
      finish(true);
    },
  });
  const response = new Response(stream, {
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' },
  });
  return { response, status: 200, providerId: result.providerId, upstreamLatencyMs: result.upstreamLatencyMs, settled };
}
