import {
  type Attempt,
  type AttemptResult,
  Errors,
  GatewayError,
  type GatewayRequest,
  type JsonObject,
  type ProviderCall,
  type SettledBody,
  type StreamResumption,
  type TranslateContext,
  WholeAnswer,
} from '@gateway/sdk';
import { track, untrack, type Watch } from './deadlines.ts';
import { FailedAttempt } from './failed-attempt.ts';
import { forwardedHeaders, passthroughHeaders, relayedResponseHeaders, retryAfterMs } from './headers.ts';
import type { HostGuard, Route } from './host-guard.ts';
import { callMessagesOverChat, translatesMessages } from './messages/attempt.ts';
import { callResponses, handlesResponses } from './responses/attempt.ts';
import { applyParamRules } from './params.ts';
import { normaliseProviderError } from './provider-errors.ts';
import { PassthroughUsage } from './streams/passthrough-usage.ts';
import { asksUsageForClient, clientAskedUsage, withUsageRequested } from './stream-usage.ts';
import { usageObjectOf } from './usage.ts';
import { MalformedStreamError, NoContentError, readToFirstContent } from './streams/first-content.ts';
import { OpenAiSsePassThrough, type StreamProcessor, TranslatingProcessor } from './streams/processors.ts';
import { relayStream } from './streams/relay.ts';
import { streamContinuer } from './streams/resume-stream.ts';

export interface CallOptions {
  hostGuard: HostGuard;
  /** Bytes of each body kept for the log. */
  captureLimit: number;
  /** Longest silence inside a stream. */
  streamIdleTimeoutMs: number;
  /** Used when the target sets no `request_timeout`: nothing may hang a client forever. */
  defaultTimeoutMs: number;
}

/**
 * An attempt's deadline and abort: watched by the shared sweeper (deadlines.ts) as an object with methods, so an
 * attempt allocates no closures for it. Only an attempt still pending after a moment listens for the client going
 * away (reading request.signal and adding a listener cost every request otherwise); a stream notices a departed
 * client when its body is cancelled. The listener, once added, is never removed: aborting a finished attempt is a
 * no-op.
 */
class AttemptGuard implements Watch {
  readonly controller = new AbortController();
  readonly deadline: number;
  readonly slowAt: number;
  timedOut = false;

  /** The deadline is the stream's first-token timeout (shorter than the request timeout). */
  readonly byFirstToken: boolean;

  constructor(
    private readonly req: GatewayRequest,
    readonly timeoutMs: number,
    /** A stream's `first_token_timeout`: its first content must come by then. */
    readonly firstTokenMs?: number,
  ) {
    const now = performance.now();
    this.byFirstToken = firstTokenMs !== undefined && firstTokenMs < timeoutMs;
    this.deadline = now + (this.byFirstToken ? (firstTokenMs as number) : timeoutMs);
    this.slowAt = now + CLIENT_WATCH_AFTER_MS;
    track(this);
  }

  /** Stops the deadline (idempotent). */
  release(): void {
    untrack(this);
  }

  expire(): void {
    this.timedOut = true;
    this.controller.abort();
  }

  slow(): void {
    const signal = this.req.signal;
    if (signal.aborted) this.controller.abort();
    else signal.addEventListener('abort', () => this.controller.abort(), { once: true });
  }
}

/** Thrown (not returned) when the client went away: there is nobody to answer. */
export class ClientGoneError extends GatewayError {
  constructor() {
    super({ code: 'client_closed_request', status: 499, message: 'The client closed the request' });
  }
}

/** How long an attempt runs before it starts listening for the client going away. */
const CLIENT_WATCH_AFTER_MS = 20;

function settledNow(body: string | undefined, error?: GatewayError): Promise<SettledBody> {
  return Promise.resolve({ body, error });
}

/** Builds the provider call of one attempt: URL, headers, body. Pure (the custom host was checked before). */
function prepare(req: GatewayRequest, attempt: Attempt, ctx: TranslateContext) {
  const { target, provider } = attempt;
  const customHost = target.custom_host;
  const base = (customHost ?? provider.baseUrl(target)).replace(/\/+$/, '');

  // A provider that speaks Anthropic's Messages natively: the call passes through as it did when it was a proxy path
  // (the client's headers, the answer's bytes), to the adapter's path, with the body as parameter rules left it.
  // So does one that speaks OpenAI's Responses API (responses/attempt.ts forwards such calls here).
  const native = req.endpoint === 'messages' || req.endpoint === 'countTokens' || req.endpoint === 'responses' ? provider.endpoints[req.endpoint] : undefined;
  if (native) {
    const body = attempt.body ?? (req.body as JsonObject);
    const call: ProviderCall = {
      url: base + native.path(target, body, ctx) + req.search,
      method: 'POST',
      headers: passthroughHeaders(req.headers),
      body: body === req.parsedBody ? req.rawBody : JSON.stringify(body),
    };
    forwardedHeaders(req.headers, target.forward_headers, call.headers);
    return { call, translator: undefined, body: undefined, hideUsage: false };
  }
  if (req.endpoint === 'proxy' || (req.endpoint === 'listModels' && !provider.endpoints.listModels)) {
    const call: ProviderCall = {
      url: base + req.path + req.search,
      method: req.method,
      headers: passthroughHeaders(req.headers),
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : req.rawBody,
    };
    forwardedHeaders(req.headers, target.forward_headers, call.headers);
    return { call, translator: undefined, body: undefined, hideUsage: false };
  }

  const translator = provider.endpoints[req.endpoint];
  if (!translator) throw Errors.unsupportedEndpoint(provider.id, req.path);
  if (req.endpoint === 'listModels') {
    const call: ProviderCall = { url: base + translator.path(target, {}, ctx), method: 'GET', headers: {} };
    forwardedHeaders(req.headers, target.forward_headers, call.headers);
    return { call, translator, body: undefined, hideUsage: false };
  }
  const original = req.body as JsonObject;
  const body = attempt.body ?? applyParamRules(original, target);
  ctx.body = body;
  const wire = translator.request ? translator.request(body, target, ctx) : body;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  forwardedHeaders(req.headers, target.forward_headers, headers);
  // Unchanged bodies go out as the bytes the client sent: no re-serialisation on the common path.
  // (Only while the body is still the one parsed from those bytes: a stage that replaced it is sent as replaced.)
  const raw = wire === original && original === req.parsedBody ? req.rawBody : undefined;
  // A stream whose client did not ask for usage: asked for anyway where the provider can say it (stream-usage.ts).
  const hideUsage = asksUsageForClient(translator, body);
  const call: ProviderCall = {
    url: base + translator.path(target, body, ctx),
    method: 'POST',
    headers,
    body: hideUsage ? withUsageRequested(wire, raw) : (raw ?? JSON.stringify(wire)),
  };
  return { call, translator, body, hideUsage };
}

/**
 * One call to one provider. Resolves when the provider's headers arrived (a stream then flows on its own);
 * returns errors as results so that retry and fallback can judge them, and throws only when the client is gone.
 */
export async function callProvider(req: GatewayRequest, attempt: Attempt, opts: CallOptions): Promise<AttemptResult> {
  if (translatesMessages(req, attempt.provider)) return callMessagesOverChat(req, attempt, opts, callProvider);
  if (handlesResponses(req)) return callResponses(req, attempt, opts, callProvider);
  const providerId = attempt.provider.id;
  const target = attempt.target;
  const body = req.body;
  // The body this attempt sends decides (an override may turn streaming on or off).
  const wantsStream = req.endpoint !== 'proxy' && (attempt.body ?? body)?.stream === true;
  const ctx: TranslateContext = {
    endpoint: req.endpoint,
    model: typeof body?.model === 'string' ? body.model : undefined,
    strictWireCompliance: target.strict_wire_compliance !== false,
    now: Math.floor(Date.now() / 1000),
  };

  let prepared: ReturnType<typeof prepare>;
  let route: Route | undefined;
  try {
    // Awaited only when there is something to wait for: a host not judged yet, an asynchronous authorization.
    // A custom host is judged before anything is prepared; the call then connects to the address judged.
    if (target.custom_host) {
      const found = opts.hostGuard.route(target.custom_host);
      route = found instanceof Promise ? await found : found;
    }
    prepared = prepare(req, attempt, ctx);
    const authorized = attempt.provider.authorize(prepared.call, target);
    prepared.call = authorized instanceof Promise ? await authorized : authorized;
  } catch (error) {
    const err = GatewayError.from(error, { phase: 'prepare', plugin: providerId });
    return new FailedAttempt(err, err.status, providerId);
  }
  const { call, translator } = prepared;
  if (translator?.request) ctx.model = typeof prepared.body?.model === 'string' ? prepared.body.model : ctx.model;

  // One controller per attempt: the client leaving, the timeout, or an idle stream stops this call only.
  const guard = new AttemptGuard(req, target.request_timeout ?? opts.defaultTimeoutMs, wantsStream ? target.first_token_timeout : undefined);
  const { controller, timeoutMs } = guard;
  let upstreamLatencyMs: number | undefined;
  /** The provider could not be read (refused, reset, timed out): a retryable failure, or nobody left to answer. */
  const unreachable = (error: unknown, detail = describe(error)): AttemptResult => {
    guard.release();
    if (req.signal.aborted) throw new ClientGoneError();
    const err = !guard.timedOut
      ? Errors.upstreamUnreachable(providerId, detail)
      : guard.byFirstToken
        ? Errors.firstTokenTimeout(providerId, guard.firstTokenMs as number)
        : Errors.timeout(timeoutMs);
    return new FailedAttempt(err, err.status, providerId, upstreamLatencyMs);
  };

  const started = performance.now();
  let upstream: Response;
  try {
    const init = {
      method: call.method,
      headers: call.headers,
      body: call.body ?? undefined,
      signal: controller.signal,
      redirect: 'manual',
      // Passthrough answers go back byte for byte, content-encoding included.
      decompress: translator !== undefined,
    } as RequestInit;
    upstream = await (route ? opts.hostGuard.fetch(call.url, init, route) : fetch(call.url, init));
  } catch (error) {
    if (error instanceof GatewayError && !req.signal.aborted) {
      // Refused by the guard (a URL whose origin is not the custom host's): no connection was made.
      guard.release();
      return new FailedAttempt(error, error.status, providerId);
    }
    return unreachable(error);
  }
  upstreamLatencyMs = performance.now() - started;
  const status = upstream.status;
  const retryAfter = retryAfterMs(upstream.headers);

  // Passthrough: the answer goes back unchanged, status, headers and bytes, streams included.
  if (!translator) {
    guard.release();
    return passthroughResult(upstream, providerId, upstreamLatencyMs, retryAfter, controller, opts);
  }

  if (status < 200 || status >= 300) {
    let text: string;
    try {
      text = await upstream.text();
    } catch (error) {
      return unreachable(error);
    }
    guard.release();
    const err = normaliseProviderError(attempt.provider, status, text);
    return new FailedAttempt(err, status, providerId, upstreamLatencyMs, retryAfter, text);
  }

  const isEventStream = (upstream.headers.get('content-type') ?? '').includes('text/event-stream') ||
    (translator?.stream?.framing !== undefined && translator.stream.framing !== 'sse');
  if (wantsStream && upstream.body && isEventStream) {
    // The answer is committed to the client only once its first byte arrived: a stream that fails before that is
    // an ordinary failed attempt, which a retry or a fallback may still mend.
    const reader = upstream.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    let first: Awaited<ReturnType<typeof reader.read>>;
    try {
      first = await reader.read();
    } catch (error) {
      return unreachable(error, `the stream broke before its first byte: ${describe(error)}`);
    }
    if (first.done) {
      guard.release();
      const err = Errors.upstreamUnreachable(providerId, 'the stream ended before its first byte');
      return new FailedAttempt(err, err.status, providerId, upstreamLatencyMs);
    }
    let processor: StreamProcessor;
    if (translator?.stream?.toChunks)
      processor = new TranslatingProcessor({ ...translator.stream, toChunks: translator.stream.toChunks }, ctx);
    else processor = new OpenAiSsePassThrough(prepared.hideUsage);
    let initial: Uint8Array | undefined = first.value;
    let ready: Uint8Array | undefined;
    if (guard.firstTokenMs !== undefined) {
      // Committed only once content came: a stream with none within first_token_timeout fails as an attempt.
      let read: Awaited<ReturnType<typeof readToFirstContent>>;
      try {
        read = await readToFirstContent(reader, processor, first.value);
      } catch (error) {
        if (error instanceof NoContentError) return unreachable(error, error.message);
        if (!(error instanceof MalformedStreamError)) return unreachable(error, `the stream broke before its first content: ${describe(error)}`);
        guard.release();
        controller.abort();
        const err = Errors.upstreamInvalid(providerId, error.message);
        return new FailedAttempt(err, err.status, providerId, upstreamLatencyMs);
      }
      if (read.ended) {
        guard.release();
        const body = read.ready ? new TextDecoder().decode(read.ready) : '';
        return { response: eventStream(read.ready ?? new Uint8Array()), status, providerId, upstreamLatencyMs, settled: Promise.resolve({ body, complete: true, usage: processor.usage }) };
      }
      initial = undefined;
      ready = read.ready;
    }
    guard.release(); // from here the idle timeout guards the stream
    // A chat stream that breaks is continued by the config's next attempt (issue #15); a continuing attempt's own
    // stream is not: the stream it continues drives it (streams/resume-stream.ts).
    const resumption: StreamResumption | undefined = req.endpoint === 'chatComplete' ? {} : undefined;
    let resolveSettled!: (s: SettledBody) => void;
    const settled = new Promise<SettledBody>((resolve) => (resolveSettled = resolve));
    const stream = relayStream(reader, {
      provider: providerId,
      processor,
      captureLimit: opts.captureLimit,
      idleTimeoutMs: target.stream_idle_timeout ?? opts.streamIdleTimeoutMs,
      abortUpstream: () => controller.abort(),
      onEnd: (end) => {
        guard.release();
        resolveSettled({ body: end.body, error: end.error, clientAborted: end.clientAborted, complete: end.complete, usage: end.usage });
      },
      ready,
      continueAfter: resumption && !attempt.continuation ? streamContinuer(resumption, prepared.body !== undefined && clientAskedUsage(prepared.body)) : undefined,
    }, initial);
    return { response: eventStream(stream), status, providerId, upstreamLatencyMs, settled, resumption };
  }

  let text: string;
  try {
    text = await upstream.text();
  } catch (error) {
    return unreachable(error);
  }
  guard.release();

  if (translator?.response) {
    let mapped: JsonObject;
    try {
      mapped = translator.response(JSON.parse(text), ctx);
    } catch (error) {
      const err = Errors.upstreamInvalid(providerId, describe(error));
      return new FailedAttempt(err, err.status, providerId, upstreamLatencyMs, undefined, text);
    }
    return wholeAnswer(JSON.stringify(mapped), status, providerId, upstreamLatencyMs);
  }
  // An OpenAI-speaking provider: the bytes go back as they came, after a check that they are a whole JSON object
  // (a body cut short or invalid is a 502, retried or failed over like any).
  const checked = checkJsonObjectText(text);
  if (checked === NOT_WHOLE) {
    const err = Errors.upstreamInvalid(providerId, 'expected a whole JSON object');
    return new FailedAttempt(err, err.status, providerId, upstreamLatencyMs, undefined, text);
  }
  // The check parsed the answer: its usage goes with it, so that nothing reads the text for it again.
  return wholeAnswer(text, status, providerId, upstreamLatencyMs, checked === UNPARSED ? undefined : usageObjectOf(checked));
}

function wholeAnswer(text: string, status: number, providerId: string, upstreamLatencyMs: number, usage?: JsonObject): AttemptResult {
  return new WholeAnswer(text, status, providerId, upstreamLatencyMs, usage);
}

function passthroughResult(
  upstream: Response,
  providerId: string,
  upstreamLatencyMs: number,
  retryAfter: number | undefined,
  controller: AbortController,
  opts: CallOptions,
): AttemptResult {
  const headers = relayedResponseHeaders(upstream.headers);
  if (!upstream.body) {
    const response = new Response(null, { status: upstream.status, headers });
    return { response, status: upstream.status, providerId, upstreamLatencyMs, retryAfterMs: retryAfter, settled: settledNow(undefined) };
  }
  // Bytes flow through untouched; a copy of the first bytes is kept for the log.
  const reader = upstream.body.getReader();
  let resolveSettled!: (s: SettledBody) => void;
  const settled = new Promise<SettledBody>((resolve) => (resolveSettled = resolve));
  const kept: Uint8Array[] = [];
  let keptBytes = 0;
  // A stream's usage may lie beyond what is kept: counted as it passes (streams/passthrough-usage.ts).
  const usage = (upstream.headers.get('content-type') ?? '').includes('text/event-stream') ? new PassthroughUsage() : undefined;
  const done = (error?: GatewayError, clientAborted = false) =>
    resolveSettled({ body: keptBytes ? Buffer.concat(kept).toString('utf8') : undefined, error, clientAborted, usage: usage?.result() });
  const stream = new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      try {
        const { done: finished, value } = await reader.read();
        if (finished) {
          ctrl.close();
          return done();
        }
        if (keptBytes < opts.captureLimit) {
          const part = value.subarray(0, opts.captureLimit - keptBytes);
          kept.push(part);
          keptBytes += part.byteLength;
        }
        usage?.push(value);
        ctrl.enqueue(value);
      } catch (error) {
        const err = Errors.streamInterrupted(providerId, describe(error));
        ctrl.error(err);
        done(err);
      }
    },
    cancel(reason) {
      controller.abort(reason);
      reader.cancel(reason).catch(() => {});
      done(undefined, true);
    },
  });
  const response = new Response(stream, { status: upstream.status, headers });
  const error = upstream.status >= 400 ? Errors.provider(providerId, upstream.status, `provider answered ${upstream.status}`) : undefined;
  return { response, status: upstream.status, providerId, upstreamLatencyMs, retryAfterMs: retryAfter, error, settled };
}

/** Answers up to this size are parsed whole to be checked (microseconds); larger ones (embeddings) by their ends. */
const PARSED_CHECK_LIMIT = 65_536;

const NOT_WHOLE = Symbol('not a whole JSON object');
const UNPARSED = Symbol('judged by its ends');

/**
 * Whether a provider's answer is a whole JSON object (issue #15: a cut or invalid body is retried like a 5xx): the
 * parsed value when it was parsed to be checked, UNPARSED for a large answer judged by its ends, NOT_WHOLE otherwise.
 */
function checkJsonObjectText(text: string): unknown {
  if (text.charCodeAt(firstNonSpace(text)) !== 123 /* { */ || text.charCodeAt(lastNonSpace(text)) !== 125 /* } */) return NOT_WHOLE;
  if (text.length > PARSED_CHECK_LIMIT) return UNPARSED;
  try {
    return JSON.parse(text);
  } catch {
    return NOT_WHOLE;
  }
}

function lastNonSpace(text: string): number {
  let i = text.length - 1;
  while (i > 0 && text.charCodeAt(i) <= 32) i--;
  return i;
}

const EVENT_STREAM_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };

function eventStream(body: ReadableStream<Uint8Array> | Uint8Array): Response {
  return new Response(body, { status: 200, headers: EVENT_STREAM_HEADERS });
}

function firstNonSpace(text: string): number {
  let i = 0;
  while (i < text.length && text.charCodeAt(i) <= 32) i++;
  return i;
}

function describe(error: unknown): string {
  if (error instanceof Error) return (error as Error & { code?: string }).code ? `${(error as Error & { code?: string }).code}: ${error.message}` : error.message;
  return String(error);
}

