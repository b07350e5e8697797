import type { StreamEvent, StreamFraming } from '@gateway/sdk';
import { AwsEventStreamDecoder } from './aws-eventstream.ts';

/** Turns bytes into events, incrementally; `end()` returns what is left and whether the framing was cut. */
export interface FrameDecoder {
  push(chunk: Uint8Array): StreamEvent[];
  end(): { events: StreamEvent[]; truncated: boolean };
}

/** Server-sent events (text/event-stream): `event:` and `data:` fields, events separated by a blank line. */
export class SseDecoder implements FrameDecoder {
  private readonly text = new TextDecoder();
  private buffer = '';
  private event: string | undefined;
  private data: string[] = [];

  push(chunk: Uint8Array): StreamEvent[] {
    this.buffer += this.text.decode(chunk, { stream: true });
    const out: StreamEvent[] = [];
    let start = 0;
    for (;;) {
      const nl = this.buffer.indexOf('\n', start);
      if (nl < 0) break;
      let line = this.buffer.slice(start, nl);
      start = nl + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      this.line(line, out);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string, out: StreamEvent[]): void {
    if (line === '') {
      if (this.data.length) out.push({ event: this.event, data: this.data.join('\n') });
      this.event = undefined;
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }

  end(): { events: StreamEvent[]; truncated: boolean } {
    const out: StreamEvent[] = [];
    const rest = this.buffer + this.text.decode();
    this.buffer = '';
    if (rest) this.line(rest, out);
    // A final event without its blank line is still delivered: many servers omit the last separator.
    if (this.data.length) out.push({ event: this.event, data: this.data.join('\n') });
    this.data = [];
    return { events: out, truncated: false };
  }
}

/** Newline-delimited JSON: one event per non-empty line. */
export class NdjsonDecoder implements FrameDecoder {
  private readonly text = new TextDecoder();
  private buffer = '';

  push(chunk: Uint8Array): StreamEvent[] {
    this.buffer += this.text.decode(chunk, { stream: true });
    const lines = this.buffer.split('\n');
    this.buffer = lines.pop() ?? '';
    return lines.map((l) => l.trim()).filter(Boolean).map((data) => ({ data }));
  }

  end(): { events: StreamEvent[]; truncated: boolean } {
    const rest = (this.buffer + this.text.decode()).trim();
    this.buffer = '';
    return { events: rest ? [{ data: rest }] : [], truncated: false };
  }
}

/** One decoder per framing of the SDK: a framing added there does not compile until it has its decoder here. */
const decoders: Record<StreamFraming, () => FrameDecoder> = {
  sse: () => new SseDecoder(),
  ndjson: () => new NdjsonDecoder(),
  'aws-eventstream': () => new AwsEventStreamDecoder(),
};

export function createDecoder(framing: StreamFraming): FrameDecoder {
  const make = Object.hasOwn(decoders, framing) ? decoders[framing] : undefined;
  if (!make) throw new Error(`no decoder for stream framing "${framing}"`);
  return make();
}
