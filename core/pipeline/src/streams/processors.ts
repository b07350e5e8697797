import type { JsonObject, StreamState, StreamTranslator, TranslateContext } from '@gateway/sdk';
import { createDecoder, type FrameDecoder } from './decoders.ts';

const encoder = new TextEncoder();
export const DONE_FRAME = encoder.encode('data: [DONE]\n\n');

/** Turns upstream bytes into client bytes and knows whether the answer arrived whole. */
export interface StreamProcessor {
  /** Bytes to send for this upstream chunk (may be empty). Throws on input the format does not allow. */
  push(chunk: Uint8Array): Uint8Array | undefined;
  /** Called when upstream ended; returns the last bytes and whether the answer was complete. */
  end(): { bytes?: Uint8Array; complete: boolean };
}

/**
 * An upstream that already speaks OpenAI SSE: bytes pass unchanged, as they arrive, event by event. Each complete
 * event's data is checked to be JSON or the `[DONE]` marker before it is forwarded (a malformed chunk ends the stream
 * with an error frame), and the `[DONE]` marker is watched, because an answer without it was cut. Only an incomplete
 * last line is held back until its end arrives.
 */
export class OpenAiSsePassThrough implements StreamProcessor {
  private readonly text = new TextDecoder();
  private partial = '';
  private data: string[] = [];
  private done = false;

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
    this.check(complete);
    // The common case (a chunk of whole lines) forwards the very bytes received.
    return heldBack ? encoder.encode(complete) : chunk;
  }

  /** Walks complete lines: data lines gather into events, a blank line ends one. Throws on a malformed event. */
  private check(lines: string): void {
    let start = 0;
    while (start < lines.length) {
      let end = lines.indexOf('\n', start);
      if (end < 0) end = lines.length;
      let line = lines.slice(start, end);
      start = end + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') this.endEvent();
      else if (line.startsWith('data:')) this.data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
    }
  }

  private endEvent(): void {
    if (!this.data.length) return;
    const payload = this.data.join('\n');
    this.data = [];
    if (this.done) return;
    if (payload === '[DONE]') {
      this.done = true;
      return;
    }
    try {
      JSON.parse(payload);
    } catch {
      throw new Error(`malformed stream chunk: ${payload.slice(0, 200)}`);
    }
  }

  end(): { bytes?: Uint8Array; complete: boolean } {
    const rest = this.partial + this.text.decode();
    this.partial = '';
    if (rest) this.check(`${rest}\n`);
    // A final event without its blank line still counts.
    this.endEvent();
    return { bytes: rest ? encoder.encode(rest) : undefined, complete: this.done };
  }
}

/** An upstream in its own format: decode the framing, let the adapter map events, encode OpenAI SSE. */
export class TranslatingProcessor implements StreamProcessor {
  private readonly decoder: FrameDecoder;
  private readonly state: StreamState = {};
  private done = false;

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
      const { chunks, done } = this.translator.toChunks(event, this.state, this.ctx);
      for (const chunk of chunks as JsonObject[]) out += `data: ${JSON.stringify(chunk)}\n\n`;
      if (done) {
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
    return { bytes, complete: this.done };
  }
}
