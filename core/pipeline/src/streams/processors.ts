import type { JsonObject, StreamState, StreamTranslator, TranslateContext, TranslatedEvent } from '@gateway/sdk';
import { usageOfEvent } from '../usage.ts';
import { createDecoder, type FrameDecoder } from './decoders.ts';
import { isUsageOnlyChunk, withoutNullUsage } from './hidden-usage.ts';
import { SentAnswer } from './sent-answer.ts';

const encoder = new TextEncoder();
export const DONE_FRAME = encoder.encode('data: [DONE]\n\n');

/** A malformed event; the bytes of the whole, valid events before it in the same read can still be sent. */
export class MalformedStreamError extends Error {
  constructor(
    message: string,
    readonly validPrefix: Uint8Array | undefined,
    /** What the adapter threw, when it was its own error (a GatewayError keeps its code in the error frame). */
    readonly original?: unknown,
  ) {
    super(message);
  }
}

/** Turns upstream bytes into client bytes and knows whether the answer arrived whole. */
export interface StreamProcessor {
  /** Bytes to send for this upstream chunk (may be empty). Throws on input the format does not allow. */
  push(chunk: Uint8Array): Uint8Array | undefined;
  /** Called when upstream ended; returns the last bytes and whether the answer was complete. */
  end(): { bytes?: Uint8Array; complete: boolean };
  /**
   * The last `usage` object an event carried (taken from events parsed anyway, so it costs no extra parse), or that a
   * translating adapter recorded from the provider's own events.
   */
  readonly usage: JsonObject | undefined;
  /** What the chunks sent so far hold (text, identity, finish): for continuing a broken chat stream. */
  readonly sent?: SentAnswer;
}

/**
 * An answer that arrived whole but without `data: [DONE]`: its finish reason and its usage came (issue #15). It is
 * finished with the marker, as a success.
 */
const wholeWithoutMarker = (sent: SentAnswer, usage: JsonObject | undefined) => sent.finishReason !== undefined && usage !== undefined;

/**
 * An upstream that already speaks OpenAI SSE: bytes pass unchanged, as they arrive, event by event. Each complete
 * event's data is checked to be JSON or the `[DONE]` marker before it is forwarded (a malformed chunk ends the stream
 * with an error frame), and the `[DONE]` marker is watched, because an answer without it was cut. Only an incomplete
 * last line is held back until its end arrives.
 *
 * With `hideUsage` (the gateway asked for `stream_options.include_usage` on the client's behalf, to know the usage at
 * completion), each event is held until its end and what the option added is taken out (hidden-usage.ts): the
 * usage-only chunk is dropped, `"usage": null` removed, every other byte forwarded as received.
 */
export class OpenAiSsePassThrough implements StreamProcessor {
  readonly sent = new SentAnswer();
  private readonly text = new TextDecoder();
  private partial = '';
  private data: string[] = [];
  private done = false;
  usage: JsonObject | undefined;
  /** hideUsage: the raw lines of the event being gathered, and what this read sends. */
  private eventRaw = '';
  private out = '';
  /** hideUsage: how the event that just ended is sent: as it came (undefined), dropped (null), or with a new payload. */
  private rewrite: { from: string; to: string } | null | undefined;

  constructor(private readonly hideUsage = false) {}

  push(chunk: Uint8Array): Uint8Array | undefined {
    const incoming = this.text.decode(chunk, { stream: true });
    const all = this.partial ? this.partial + incoming : incoming;
    const nl = all.lastIndexOf('\n');
    if (nl < 0) {
      this.partial = all;
      return undefined;
    }
    const complete = nl === all.length - 1 ? all : all.slice(0, nl + 1);
    const heldBack = this.partial !== '' || complete !== all;
    this.partial = nl === all.length - 1 ? '' : all.slice(nl + 1);
    this.out = '';
    const validUpTo = this.check(complete);
    if (validUpTo !== undefined) {
      const valid = this.hideUsage ? this.out : complete.slice(0, validUpTo);
      throw new MalformedStreamError(this.malformed, valid ? encoder.encode(valid) : undefined);
    }
    if (this.hideUsage) return this.out ? encoder.encode(this.out) : undefined;
    // The common case (a chunk of whole lines) forwards the very bytes received.
    return heldBack ? encoder.encode(complete) : chunk;
  }

  private malformed = '';
  /** Where the last whole event ended in the text being checked. */
  private lastEventEnd = 0;

  /**
   * Walks complete lines: data lines gather into events, a blank line ends one. Returns undefined when all is well,
   * or, for a malformed event, how many characters of `lines` held whole valid events before it.
   */
  private check(lines: string): number | undefined {
    let start = 0;
    this.lastEventEnd = 0;
    // hideUsage: where the raw lines of the event being gathered start in `lines` (added to eventRaw at its end).
    let rawFrom = 0;
    // Offsets rather than a slice per line: only a data line's payload is cut out.
    while (start < lines.length) {
      let end = lines.indexOf('\n', start);
      if (end < 0) end = lines.length;
      let lineEnd = end;
      if (lineEnd > start && lines.charCodeAt(lineEnd - 1) === 13 /* \r */) lineEnd--;
      const next = end + 1;
      if (lineEnd === start) {
        if (this.hideUsage) {
          this.eventRaw += lines.slice(rawFrom, next);
          rawFrom = next;
        }
        if (!this.endEvent()) return this.lastEventEnd;
        this.lastEventEnd = Math.min(next, lines.length);
        if (this.hideUsage) this.sendEvent();
      } else if (lines.startsWith('data:', start)) this.data.push(lines.slice(lines.charCodeAt(start + 5) === 32 ? start + 6 : start + 5, lineEnd));
      start = next;
    }
    if (this.hideUsage && rawFrom < lines.length) this.eventRaw += lines.slice(rawFrom);
    return undefined;
  }

  /** hideUsage: the event that just ended, as the client would have had it without the option. */
  private sendEvent(): void {
    const raw = this.eventRaw;
    const rewrite = this.rewrite;
    this.eventRaw = '';
    this.rewrite = undefined;
    if (rewrite === null) return;
    if (rewrite === undefined) this.out += raw;
    else {
      // One `data:` line holds the payload (the common form); a payload split over lines is sent as one line.
      const at = raw.indexOf(rewrite.from);
      this.out += at >= 0 ? raw.slice(0, at) + rewrite.to + raw.slice(at + rewrite.from.length) : `data: ${rewrite.to}\n\n`;
    }
  }

  /** Ends the event being gathered; false when it is malformed. */
  private endEvent(): boolean {
    if (!this.data.length) return true;
    const payload = this.data.join('\n');
    this.data = [];
    if (this.done) return true;
    if (payload === '[DONE]') {
      this.done = true;
      return true;
    }
    try {
      // Only the final chunk carries usage (`stream_options.include_usage`); the others say `"usage": null`.
      const event: unknown = JSON.parse(payload);
      const usage = usageOfEvent(event);
      if (usage) this.usage = usage;
      this.sent.observe(event);
      if (this.hideUsage && typeof event === 'object' && event !== null && !Array.isArray(event)) {
        const chunk = event as JsonObject;
        if (isUsageOnlyChunk(chunk)) this.rewrite = null;
        else {
          const to = withoutNullUsage(payload, chunk);
          if (to !== undefined) this.rewrite = { from: payload, to };
        }
      }
      return true;
    } catch {
      this.malformed = `malformed stream chunk: ${payload.slice(0, 120)}`;
      return false;
    }
  }

  end(): { bytes?: Uint8Array; complete: boolean } {
    const rest = this.partial + this.text.decode();
    this.partial = '';
    this.out = '';
    // A final event without its blank line still counts.
    if ((rest && this.check(`${rest}\n`) !== undefined) || !this.endEvent()) throw new MalformedStreamError(this.malformed, undefined);
    const marker = !this.done && wholeWithoutMarker(this.sent, this.usage);
    if (!this.hideUsage) {
      // A last event without its blank line gets one before the marker added after it.
      const tail = marker ? `${rest && !rest.endsWith('\n\n') ? `${rest.replace(/\n?$/, '\n')}\n` : rest}data: [DONE]\n\n` : rest;
      return { bytes: tail ? encoder.encode(tail) : undefined, complete: this.done || marker };
    }
    // The held lines of that last event, without the line end added above to check it.
    if (rest && this.eventRaw.endsWith('\n')) this.eventRaw = this.eventRaw.slice(0, -1);
    this.sendEvent();
    if (marker) this.out += `${this.out && !this.out.endsWith('\n\n') ? '\n\n' : ''}data: [DONE]\n\n`;
    return { bytes: this.out ? encoder.encode(this.out) : undefined, complete: this.done || marker };
  }
}

/** An upstream in its own format: decode the framing, let the adapter map events, encode OpenAI SSE. */
export class TranslatingProcessor implements StreamProcessor {
  readonly sent = new SentAnswer();
  private readonly decoder: FrameDecoder;
  private readonly state: StreamState = {};
  private done = false;
  usage: JsonObject | undefined;

  constructor(
    private readonly translator: StreamTranslator & { toChunks: NonNullable<StreamTranslator['toChunks']> },
    private readonly ctx: TranslateContext,
  ) {
    this.decoder = createDecoder(translator.framing);
  }

  private encode(events: ReturnType<FrameDecoder['push']>): Uint8Array | undefined {
    let out = '';
    for (const event of events) {
      if (this.done) break;
      let mapped: TranslatedEvent;
      try {
        mapped = this.translator.toChunks(event, this.state, this.ctx);
      } catch (error) {
        // What the earlier events of this read produced still reaches the client, before the error frame.
        throw new MalformedStreamError(error instanceof Error ? error.message : String(error), out ? encoder.encode(out) : undefined, error);
      }
      for (const chunk of mapped.chunks as JsonObject[]) {
        const usage = usageOfEvent(chunk);
        if (usage) this.usage = usage;
        this.sent.observe(chunk);
        out += `data: ${JSON.stringify(chunk)}\n\n`;
      }
      // The native usage, recorded whether or not the client asked to be shown it.
      if (mapped.usage) this.usage = mapped.usage;
      if (mapped.done) {
        this.done = true;
        out += 'data: [DONE]\n\n';
      }
    }
    return out ? encoder.encode(out) : undefined;
  }

  push(chunk: Uint8Array): Uint8Array | undefined {
    return this.encode(this.decoder.push(chunk));
  }

  end(): { bytes?: Uint8Array; complete: boolean } {
    const { events } = this.decoder.end();
    const bytes = this.encode(events);
    if (this.done || !wholeWithoutMarker(this.sent, this.usage)) return { bytes, complete: this.done };
    const marker = DONE_FRAME;
    if (!bytes) return { bytes: marker, complete: true };
    const both = new Uint8Array(bytes.byteLength + marker.byteLength);
    both.set(bytes);
    both.set(marker, bytes.byteLength);
    return { bytes: both, complete: true };
  }
}
