/**
 * One attempt of a Messages call (`messages` / `countTokens`) at a provider that does not speak Messages: the body is
 * translated to a chat completion, sent through the provider's own chat translator as any chat call is, and the
 * answer translated back (whole, or event by event). A provider that declares `endpoints.messages` never comes here:
 * its calls pass through unchanged (call.ts). docs/anthropic-messages.md.
 */
import {
  type Attempt,
  type AttemptResult,
  Errors,
  GatewayError,
  type GatewayRequest,
  type JsonObject,
  type ProviderAdapter,
  type SettledBody,
} from '@gateway/sdk';
import type { CallOptions } from '../call.ts';
import { estimateInputTokens } from './count.ts';
import { messagesToChat } from './request.ts';
import { chatToMessages } from './response.ts';
import { ChatToMessagesStream, eventsOfMessage } from './stream.ts';

type CallProvider = (req: GatewayRequest, attempt: Attempt, opts: CallOptions) => Promise<AttemptResult>;

/** Whether this attempt is a Messages call that the core translates (the provider declares no native endpoint). */
export function translatesMessages(req: GatewayRequest, provider: ProviderAdapter): boolean {
  return (req.endpoint === 'messages' || req.endpoint === 'countTokens') && provider.endpoints[req.endpoint] === undefined;
}

const encoder = new TextEncoder();
const STREAM_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' };

function failed(providerId: string, err: GatewayError): AttemptResult {
  return { response: err.toResponse(), status: err.status, providerId, error: err, settled: Promise.resolve({ body: undefined, error: err }) };
}

/** A JSON answer made here (not a provider's bytes), with the usage the log and limits record for it. */
function jsonAnswer(text: string, providerId: string, upstreamLatencyMs: number | undefined, settled: SettledBody, headers: Record<string, string> = {}): AttemptResult {
  return {
    response: new Response(text, { status: 200, headers: { 'content-type': 'application/json', ...headers } }),
    status: 200,
    providerId,
    upstreamLatencyMs,
    settled: Promise.resolve(settled),
  };
}

export async function callMessagesOverChat(req: GatewayRequest, attempt: Attempt, opts: CallOptions, call: CallProvider): Promise<AttemptResult> {
  const providerId = attempt.provider.id;
  const body = (attempt.body ?? req.body) as JsonObject;
  if (req.endpoint === 'countTokens') {
    const text = JSON.stringify({ input_tokens: estimateInputTokens(body) });
    return jsonAnswer(text, providerId, undefined, { body: text }, { 'x-gateway-token-count': 'estimate' });
  }
  const chat = attempt.provider.endpoints.chatComplete;
  if (!chat) return failed(providerId, Errors.unsupportedEndpoint(providerId, '/messages'));
  let chatBody: JsonObject;
  try {
    chatBody = messagesToChat(body, { translates: chat.request !== undefined });
  } catch (error) {
    return failed(providerId, GatewayError.from(error, { phase: 'prepare' }));
  }
  // The same request as a chat call: the provider's chat translator, headers, retries of this attempt and stream
  // handling all apply unchanged. Attempt stages already ran on the Messages request.
  const inner: GatewayRequest = { ...req, endpoint: 'chatComplete', path: '/chat/completions', search: '', body: chatBody, parsedBody: chatBody, rawBody: undefined };
  const result = await call(inner, { ...attempt, body: chatBody }, opts);
  if (result.error || result.status >= 400) return result; // the route answers errors in Anthropic's shape
  const model = typeof body.model === 'string' ? body.model : undefined;

  if (result.answer) {
    let message: JsonObject;
    let usage: JsonObject | undefined;
    try {
      const json = JSON.parse(result.answer.text) as JsonObject;
      usage = typeof json.usage === 'object' && json.usage !== null && !Array.isArray(json.usage) ? json.usage : undefined;
      message = chatToMessages(json, model);
    } catch (error) {
      return failed(providerId, Errors.upstreamInvalid(providerId, error instanceof Error ? error.message : String(error)));
    }
    if (body.stream === true) {
      // Asked to stream, answered whole: the client still gets the events it reads.
      const events = eventsOfMessage(message);
      return {
        response: new Response(events, { status: 200, headers: STREAM_HEADERS }),
        status: 200,
        providerId,
        upstreamLatencyMs: result.upstreamLatencyMs,
        settled: Promise.resolve({ body: events.slice(0, opts.captureLimit), usage, complete: true }),
      };
    }
    const text = JSON.stringify(message);
    return jsonAnswer(text, providerId, result.upstreamLatencyMs, { body: text, usage });
  }

  const upstream = result.response.body;
  if (!upstream) return failed(providerId, Errors.upstreamInvalid(providerId, 'an empty answer'));
  return streamed(result, upstream, model, opts.captureLimit);
}

/** The chat stream of `result` as Messages events; its settled body is what the client was sent. */
function streamed(result: AttemptResult, upstream: ReadableStream<Uint8Array>, model: string | undefined, captureLimit: number): AttemptResult {
  const reader = upstream.getReader();
  const converter = new ChatToMessagesStream(model);
  const decoder = new TextDecoder();
  let captured = '';
  let ended = false;
  let resolveSettled!: (s: SettledBody) => void;
  const settled = new Promise<SettledBody>((resolve) => (resolveSettled = resolve));
  const finish = (clientAborted: boolean) => {
    if (ended) return;
    ended = true;
    // The usage and any interruption are the chat stream's; the body is the events the client got.
    result.settled.then((inner) => resolveSettled({ ...inner, body: captured || undefined, clientAborted: clientAborted || inner.clientAborted }));
  };
  const send = (controller: ReadableStreamDefaultController<Uint8Array>, text: string): boolean => {
    if (!text) return false;
    if (captured.length < captureLimit) captured += text.slice(0, captureLimit - captured.length);
    controller.enqueue(encoder.encode(text));
    return true;
  };
  const stream = new ReadableStream<Uint8Array>({
    // Reads until there is something to send: a pull that enqueues nothing is not called again.
    async pull(controller) {
      for (;;) {
        let read: Awaited<ReturnType<typeof reader.read>>;
        try {
          read = await reader.read();
        } catch (error) {
          send(controller, converter.push(`data: ${JSON.stringify({ error: { message: error instanceof Error ? error.message : String(error), type: 'api_error' } })}\n\n`));
          controller.close();
          return finish(false);
        }
        if (read.done) {
          send(controller, converter.end());
          controller.close();
          return finish(false);
        }
        if (send(controller, converter.push(decoder.decode(read.value, { stream: true })))) return;
      }
    },
    cancel(reason) {
      reader.cancel(reason).catch(() => {});
      finish(true);
    },
  });
  const response = new Response(stream, { status: 200, headers: STREAM_HEADERS });
  return { response, status: 200, providerId: result.providerId, upstreamLatencyMs: result.upstreamLatencyMs, settled };
}
