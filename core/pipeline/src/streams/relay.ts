import { Errors, GatewayError, type JsonObject } from '@gateway/sdk';
import { Capture } from './capture.ts';
import { MalformedStreamError, type StreamProcessor } from './processors.ts';

export interface StreamEnd {
  /** The answer arrived whole (its end marker was seen). */
  complete: boolean;
  error?: GatewayError;
  /** What the client was sent, size-capped, for the log. */
  body: string;
  clientAborted: boolean;
  /** The last usage object the stream's events carried. */
  usage?: JsonObject;
}

export interface RelayOptions {
  provider: string;
  processor: StreamProcessor;
  captureLimit: number;
  /** Longest silence allowed between two upstream chunks. */
  idleTimeoutMs: number;
  /** Stops the upstream request (client went away, idle timeout). */
  abortUpstream(reason: unknown): void;
  onEnd(end: StreamEnd): void;
}

const encoder = new TextEncoder();
type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>;

/** The streams being relayed now, each by its interrupt: what a drain deadline ends (interruptOpenStreams). */
const open = new Set<(error: GatewayError) => void>();

/**
 * Ends every stream being relayed with `error`'s frame (no `[DONE]`) and stops their upstream requests: the end of a
 * shutdown's drain deadline. Returns how many there were.
 */
export function interruptOpenStreams(error: GatewayError): number {
  const streams = [...open];
  for (const interrupt of streams) interrupt(error);
  return streams.length;
}

function errorFrame(error: GatewayError): Uint8Array {
  return encoder.encode(`data: ${JSON.stringify(error.toBody())}\n\n`);
}

/**
 * Forwards an upstream stream to the client chunk by chunk. A stream that breaks, stalls or ends without its end
 * marker is closed with an error frame and no `[DONE]`, so no client takes a cut answer for a whole one.
 */
export function relayStream(
  upstream: ReadableStream<Uint8Array> | ReadableStreamDefaultReader<Uint8Array>,
  opts: RelayOptions,
  /** Bytes already read from the upstream (the first chunk, read before the answer was committed). */
  initial?: Uint8Array,
): ReadableStream<Uint8Array> {
  const reader = upstream instanceof ReadableStream ? upstream.getReader() : upstream;
  let pending = initial;
  const capture = new Capture(opts.captureLimit);
  let finished = false;
  let idleTimer: Timer | undefined;
  let interrupted: GatewayError | undefined;
  let rejectRead: ((error: unknown) => void) | undefined;
  const interrupt = (error: GatewayError) => {
    interrupted = error;
    // A read in progress ends now; a stream whose client is behind fails at its next pull.
    rejectRead?.(error);
    opts.abortUpstream(error);
    reader.cancel(error).catch(() => {});
  };
  open.add(interrupt);

  const finish = (end: Omit<StreamEnd, 'body' | 'usage'>) => {
    if (finished) return;
    finished = true;
    open.delete(interrupt);
    clearTimeout(idleTimer);
    opts.onEnd({ ...end, body: capture.text(), usage: opts.processor.usage });
  };

  const readWithIdleTimeout = () =>
    new Promise<ReadResult>((resolve, reject) => {
      rejectRead = reject;
      idleTimer = setTimeout(() => {
        const error = Errors.streamInterrupted(opts.provider, `no data for ${opts.idleTimeoutMs} ms`);
        opts.abortUpstream(error);
        reader.cancel(error).catch(() => {});
        reject(error);
      }, opts.idleTimeoutMs);
      reader.read().then((r) => resolve(r as ReadResult), reject);
    }).finally(() => clearTimeout(idleTimer));

  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, error: GatewayError) => {
    const frame = errorFrame(error);
    capture.add(frame);
    controller.enqueue(frame);
    controller.close();
    finish({ complete: false, error, clientAborted: false });
  };

  return new ReadableStream<Uint8Array>({
    // Reads until there is something to send (or the end): a pull that enqueues nothing is not called again, so an
    // upstream read holding no complete line (an event split across reads) must not end this call.
    async pull(controller) {
      for (;;) {
        if (interrupted) return fail(controller, interrupted);
        let result: ReadResult;
        try {
          if (pending) {
            result = { done: false, value: pending };
            pending = undefined;
          } else result = await readWithIdleTimeout();
        } catch (error) {
          if (finished) return;
          const reason = error instanceof GatewayError ? error : Errors.streamInterrupted(opts.provider, describe(error));
          return fail(controller, reason);
        }
        try {
          if (result.done) {
            const { bytes, complete } = opts.processor.end();
            if (bytes) {
              capture.add(bytes);
              controller.enqueue(bytes);
            }
            if (!complete) return fail(controller, Errors.streamInterrupted(opts.provider, 'the stream ended without its end marker'));
            controller.close();
            return finish({ complete: true, clientAborted: false });
          }
          const bytes = opts.processor.push(result.value);
          if (bytes?.byteLength) {
            capture.add(bytes);
            controller.enqueue(bytes);
            return;
          }
        } catch (error) {
          // Events that were whole and valid before a malformed one still reach the client, then the error frame.
          const valid = error instanceof MalformedStreamError ? error.validPrefix : undefined;
          if (valid?.byteLength) {
            capture.add(valid);
            controller.enqueue(valid);
          }
          opts.abortUpstream(error);
          reader.cancel(error).catch(() => {});
          const cause = error instanceof MalformedStreamError && error.original !== undefined ? error.original : error;
          return fail(controller, cause instanceof GatewayError ? cause : Errors.upstreamInvalid(opts.provider, describe(cause)));
        }
      }
    },
    cancel(reason) {
      // The client went away: stop the upstream request at once.
      opts.abortUpstream(reason);
      reader.cancel(reason).catch(() => {});
      finish({ complete: false, clientAborted: true, error: undefined });
    },
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
