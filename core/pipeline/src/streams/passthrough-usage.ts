/**
 * Token usage of a streamed passthrough answer (`/v1/responses`, a native Anthropic Messages stream, any SSE a
 * provider sends through a proxy path), counted from the events as they pass: the bytes go to the client unchanged,
 * and the body kept for the log is size-capped, so the usage at a long stream's end would otherwise be lost. The
 * gateway does not ask the provider for usage here (that would change bytes it promises to relay as they are); it
 * reads what the provider sends. Every usage object seen is merged over the previous ones, so Anthropic's split
 * (`input_tokens` in `message_start`, the final `output_tokens` in `message_delta`) adds up to the whole. Only lines
 * that contain `"usage"` are parsed.
 */
import type { JsonObject } from '@gateway/sdk';
import { usageOfEvent } from '../usage.ts';

const USAGE = '"usage"';
/** A line longer than this without a newline is no event worth reading (a huge delta): dropped, not kept growing. */
const MAX_LINE_CHARS = 1 << 20;

export class PassthroughUsage {
  private readonly decoder = new TextDecoder();
  private partial = '';
  private merged: Record<string, unknown> | undefined;

  /** Reads one chunk of the stream. */
  push(bytes: Uint8Array): void {
    const text = this.partial + this.decoder.decode(bytes, { stream: true });
    const lastNewline = text.lastIndexOf('\n');
    if (lastNewline < 0) {
      this.partial = text.length > MAX_LINE_CHARS ? '' : text;
      return;
    }
    this.partial = text.length - lastNewline - 1 > MAX_LINE_CHARS ? '' : text.slice(lastNewline + 1);
    // Most chunks hold no usage at all: one search, no split.
    let at = text.indexOf(USAGE);
    while (at >= 0 && at < lastNewline) {
      const start = text.lastIndexOf('\n', at) + 1;
      const end = text.indexOf('\n', at);
      this.read(text.slice(start, end));
      at = text.indexOf(USAGE, end);
    }
  }

  /** The usage the events carried, merged; undefined when none did. */
  result(): JsonObject | undefined {
    if (this.partial.includes(USAGE)) this.read(this.partial);
    this.partial = '';
    return this.merged as JsonObject | undefined;
  }

  private read(line: string): void {
    const trimmed = line.trim();
    if (!trimmed.startsWith('data:')) return;
    let event: unknown;
    try {
      event = JSON.parse(trimmed.slice(5));
    } catch {
      return;
    }
    // Anthropic's `message_start` carries it inside `message`.
    const usage = usageOfEvent(event) ?? messageUsage(event);
    if (!usage) return;
    this.merged ??= {};
    for (const [k, v] of Object.entries(usage)) if (v !== null && v !== undefined) this.merged[k] = v;
  }
}

function messageUsage(event: unknown): JsonObject | undefined {
  const message = (event as { message?: unknown } | null)?.message;
  if (typeof message !== 'object' || message === null) return undefined;
  const usage = (message as { usage?: unknown }).usage;
  return typeof usage === 'object' && usage !== null && !Array.isArray(usage) ? (usage as JsonObject) : undefined;
}
