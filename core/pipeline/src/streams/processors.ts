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
 * An upstream that already speaks OpenAI SSE: bytes pass unchanged, as they arrive. Only the `[DONE]` marker is
 * watched (across chunk boundaries), because an answer without it was cut.
 */
export class OpenAiSsePassThrough implements StreamProcessor {
  private readonly text = new TextDecoder();
  /** Text after the last newline seen, so a marker split across chunks is still found at its line start. */
  private partial = '';
  private done = false;

  push(chunk: Uint8Array): Uint8Array {
    if (!this.done) {
      const text = this.partial + this.text.decode(chunk, { stream: true });
      // Only a line of its own counts: `data: [DONE]` inside a model's text is not the end of the stream.
      if (DONE_LINE.test(text)) this.done = true;
      const nl = text.lastIndexOf('\n');
      this.partial = nl < 0 ? text.slice(-64) : text.slice(nl + 1, nl + 65);
    }
    return chunk;
  }

  end(): { complete: boolean } {
    // A last line without its newline still counts.
    if (!this.done && /^data: ?\[DONE\]\s*$/.test(this.partial + this.text.decode())) this.done = true;
    return { complete: this.done };
  }
}

const DONE_LINE = /(?:^|\n)data: ?\[DONE\]\r?\n/;

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
