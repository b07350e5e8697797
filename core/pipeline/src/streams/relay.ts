import { Errors, GatewayError, type JsonObject } from '@gateway/sdk';
import { track, untrack, type Watch } from '../deadlines.ts';
import { Capture } from './capture.ts';
import { DivergedAnswer, StreamBreak } from './continuation.ts';
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
  /** Client bytes to send before anything is read (a stream read to its first content before it was committed). */
  ready?: Uint8Array;
  /**
   * Asks for the rest of a broken answer (issue #15): the next attempt's stream and the processor that rewrites it
   * for this client, or undefined when there is none; the stream then ends with the error frame.
   */
  continueAfter?(broken: GatewayError, processor: StreamProcessor): Promise<ContinuedStream | undefined>;
}

/** The stream that goes on where a broken one stopped. */
export interface ContinuedStream {
  stream: ReadableStream<Uint8Array>;
  processor: StreamProcessor;
}

const encoder = new TextEncoder();

/**
 * A stream's idle deadline, watched by the shared sweeper (deadlines.ts) while a read is pending: re-arming it for
 * each chunk is a field write and a Set insertion, where a timer and a promise around each read cost several times
 * that on every chunk of every stream.
 */
class IdleWatch implements Watch {
  deadline = 0;
  constructor(private readonly onIdle: () => void) {}
  expire(): void {
    this.onIdle();
  }
}

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
  let reader = upstream instanceof ReadableStream ? upstream.getReader() : upstream;
  // Both change when a broken stream is continued by another attempt's.
  let processor = opts.processor;
  let ready = opts.ready;
  let pending = initial;
  const capture = new Capture(opts.captureLimit);
  let finished = false;
  let interrupted: GatewayError | undefined;
  /** Set when the upstream stayed silent for the idle timeout during the read in progress. */
  let stalled: GatewayError | undefined;
  const interrupt = (error: GatewayError) => {
    interrupted = error;
    // A read in progress ends now (the cancel settles it, and the read then reports this error); a stream whose
    // client is behind fails at its next pull.
    opts.abortUpstream(error);
    reader.cancel(error).catch(() => {});
  };
  open.add(interrupt);
  const idle = new IdleWatch(() => {
    const error = Errors.streamInterrupted(opts.provider, `no data for ${opts.idleTimeoutMs} ms`);
    stalled = error;
    opts.abortUpstream(error);
    reader.cancel(error).catch(() => {});
  });

  const finish = (end: Omit<StreamEnd, 'body' | 'usage'>) => {
    if (finished) return;
    finished = true;
    open.delete(interrupt);
    untrack(idle);
    opts.onEnd({ ...end, body: capture.text(), usage: processor.usage });
  };

  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, error: GatewayError) => {
    const frame = errorFrame(error);
    capture.add(frame);
    controller.enqueue(frame);
    controller.close();
    finish({ complete: false, error, clientAborted: false });
  };

  const send = (controller: ReadableStreamDefaultController<Uint8Array>, bytes: Uint8Array | undefined) => {
    if (!bytes?.byteLength) return;
    capture.add(bytes);
    controller.enqueue(bytes);
  };

  /** A break: continued by the next attempt's stream when there is one (true), else ended with the error frame. */
  const broke = async (controller: ReadableStreamDefaultController<Uint8Array>, error: GatewayError): Promise<boolean> => {
    let next: ContinuedStream | undefined;
    if (opts.continueAfter && !interrupted) next = await opts.continueAfter(error, processor).catch(() => undefined);
    if (finished) {
      // The client left while the next attempt was being found.
      next?.stream.cancel().catch(() => {});
      return false;
    }
    if (!next || interrupted) {
      next?.stream.cancel().catch(() => {});
      fail(controller, interrupted ?? error);
      return false;
    }
    reader = next.stream.getReader();
    processor = next.processor;
    return true;
  };

  return new ReadableStream<Uint8Array>({
    // Reads until there is something to send (or the end): a pull that enqueues nothing is not called again, so an
    // upstream read holding no complete line (an event split across reads) must not end this call.
    async pull(controller) {
      if (ready) {
        send(controller, ready);
        ready = undefined;
        return;
      }
      for (;;) {
        if (interrupted) return fail(controller, interrupted);
        let result: ReadResult;
        try {
          if (pending) {
            result = { done: false, value: pending };
            pending = undefined;
          } else {
            stalled = undefined;
            idle.deadline = performance.now() + opts.idleTimeoutMs;
            track(idle);
            try {
              result = (await reader.read()) as ReadResult;
            } finally {
              untrack(idle);
            }
            // The idle timeout or an interrupt cancelled the read: it settled, and this is why.
            const cut = stalled ?? interrupted;
            if (cut) throw cut;
          }
        } catch (error) {
          if (finished) return;
          const cause = stalled ?? interrupted ?? error;
          const reason = cause instanceof GatewayError ? cause : Errors.streamInterrupted(opts.provider, describe(cause));
          if (await broke(controller, reason)) continue;
          return;
        }
        let broken: GatewayError;
        try {
          if (result.done) {
            const { bytes, complete } = processor.end();
            send(controller, bytes);
            if (complete) {
              controller.close();
              return finish({ complete: true, clientAborted: false });
            }
            broken = Errors.streamInterrupted(opts.provider, 'the stream ended without its end marker');
          } else {
            const bytes = processor.push(result.value);
            if (bytes?.byteLength) return send(controller, bytes);
            continue;
          }
        } catch (error) {
          // Events that were whole and valid before a malformed one (or a break) still reach the client.
          send(controller, error instanceof MalformedStreamError || error instanceof StreamBreak ? error.validPrefix : undefined);
          opts.abortUpstream(error);
          reader.cancel(error).catch(() => {});
          // Two answers that disagree are never spliced: nothing continues after that.
          if (error instanceof DivergedAnswer) return fail(controller, error.error);
          if (error instanceof StreamBreak) broken = error.error;
          else {
            const cause = error instanceof MalformedStreamError && error.original !== undefined ? error.original : error;
            broken = cause instanceof GatewayError ? cause : Errors.upstreamInvalid(opts.provider, describe(cause));
          }
        }
        // An invalid event is a break too: continued from what was valid.
        if (await broke(controller, broken)) continue;
        return;
      }
    },
    cancel(reason) {
      // The client went away: stop the upstream request at once.
      opts.abortUpstream(reason);
      reader.cancel(reason).catch(() => {});
      finish({ complete: false, clientAborted: true, error: undefined });
    },
    // Read only when the client reads: not while the attempt is still being routed (its resumption is set after).
  }, { highWaterMark: 0 });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
