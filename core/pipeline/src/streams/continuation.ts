/**
 * The client side of a continued stream (issue #15, docs/streaming.md): the next attempt's stream (OpenAI SSE as its
 * own relay produced it) rewritten so that the client sees one answer. Its chunks take the first stream's id,
 * `created` and `model`; role and reasoning deltas are dropped (the client has the role, and reasoning is not
 * repeated); only text the client does not have yet goes out:
 *
 * - prefill: the new text follows the prefilled text; when the prefill left out the sent text's trailing whitespace,
 *   that whitespace is taken off the start of the new text (where it differs, leading whitespace is dropped);
 * - regenerate: the new answer is held back until it covers the text already sent, and must begin with exactly that
 *   text, else the stream ends with an error frame (two answers that disagree are never spliced).
 *
 * Usage chunks show the usage of every attempt (sumUsage), and only to a client that asked for them.
 */
import { type AttemptContinuation, Errors, GatewayError, type Json, type JsonObject } from '@gateway/sdk';
import { usageOfEvent } from '../usage.ts';
import { SseDecoder } from './decoders.ts';
import type { StreamProcessor } from './processors.ts';
import type { SentAnswer } from './sent-answer.ts';

const encoder = new TextEncoder();
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The continuing stream broke too (its relay sent an error frame): another continuation may follow. */
export class StreamBreak extends Error {
  /** The bytes of the chunks before the break in the same read, still to be sent. */
  validPrefix: Uint8Array | undefined;
  constructor(readonly error: GatewayError) {
    super(error.message);
  }
}

/** The regenerated answer does not begin with the text already sent: the stream ends, never spliced. */
export class DivergedAnswer extends StreamBreak {}

/** Two usage objects added up: numbers summed, nested objects (`*_tokens_details`) likewise, anything else from `b`. */
export function sumUsage(a: JsonObject | undefined, b: JsonObject | undefined): JsonObject | undefined {
  if (!a) return b;
  if (!b) return a;
  const out: JsonObject = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const held = out[key];
    if (typeof value === 'number' && typeof held === 'number') out[key] = held + value;
    else if (isObject(value) && isObject(held)) out[key] = sumUsage(held, value) as Json;
    else out[key] = value;
  }
  return out;
}

/** The error an attempt's relay sent as its last frame, as it was. */
function errorOfFrame(frame: JsonObject, provider: string): GatewayError {
  const e = frame.error as JsonObject;
  return new GatewayError({
    code: typeof e.code === 'string' ? e.code : 'stream_interrupted',
    type: typeof e.type === 'string' ? e.type : 'upstream_error',
    status: 502,
    message: typeof e.message === 'string' ? e.message : `The stream from provider ${provider} broke`,
    extra: { provider: typeof frame.provider === 'string' ? frame.provider : provider },
  });
}

export class ContinuationProcessor implements StreamProcessor {
  private readonly decoder = new SseDecoder();
  private done = false;
  /** regenerate: the sent text the new answer has not covered yet. */
  private expect: string;
  /** prefill: sent text the prefill left out, expected again at the start of the new text. */
  private skip: string;
  private latest: JsonObject | undefined;

  constructor(
    private readonly provider: string,
    readonly sent: SentAnswer,
    continuation: AttemptContinuation,
    /** The usage of the attempts before this one. */
    private readonly before: JsonObject | undefined,
    /** The client asked for `stream_options.include_usage`. */
    private readonly showUsage: boolean,
  ) {
    this.expect = continuation.mode === 'regenerate' ? continuation.sent : '';
    this.skip = continuation.mode === 'prefill' ? continuation.sent.slice(continuation.prefilled.length) : '';
  }

  get usage(): JsonObject | undefined {
    return sumUsage(this.before, this.latest);
  }

  push(chunk: Uint8Array): Uint8Array | undefined {
    return this.encode(this.decoder.push(chunk));
  }

  end(): { bytes?: Uint8Array; complete: boolean } {
    const bytes = this.encode(this.decoder.end().events);
    if (this.done && this.expect !== '') throw this.diverged('the regenerated answer is shorter than the text already sent');
    return { bytes, complete: this.done };
  }

  private encode(events: { data: string }[]): Uint8Array | undefined {
    let out = '';
    try {
      out = this.encodeEach(events);
    } catch (error) {
      if (error instanceof StreamBreak && this.partial) error.validPrefix = encoder.encode(this.partial);
      throw error;
    }
    return out ? encoder.encode(out) : undefined;
  }

  /** What `encodeEach` has produced so far (kept when it throws). */
  private partial = '';

  private encodeEach(events: { data: string }[]): string {
    let out = '';
    this.partial = '';
    for (const event of events) {
      if (this.done) break;
      if (event.data === '[DONE]') {
        if (this.expect !== '') throw this.diverged('the regenerated answer is shorter than the text already sent');
        this.done = true;
        out += 'data: [DONE]\n\n';
        this.partial = out;
        continue;
      }
      // The attempt's own relay wrote it: JSON, or its error frame when it broke too.
      const chunk = JSON.parse(event.data) as unknown;
      if (isObject(chunk) && isObject(chunk.error) && chunk.choices === undefined)
        throw new StreamBreak(errorOfFrame(chunk, this.provider));
      const rewritten = this.rewrite(chunk);
      if (!rewritten) continue;
      this.sent.observe(rewritten);
      out += `data: ${JSON.stringify(rewritten)}\n\n`;
      this.partial = out;
    }
    return out;
  }

  private diverged(detail: string): DivergedAnswer {
    return new DivergedAnswer(Errors.streamInterrupted(this.provider, detail));
  }

  /** The chunk as the client gets it, or undefined when it carries nothing new. */
  private rewrite(chunk: unknown): JsonObject | undefined {
    if (!isObject(chunk)) return undefined;
    const usage = usageOfEvent(chunk);
    if (usage) this.latest = usage;
    const identity = { id: this.sent.id ?? chunk.id, created: this.sent.created ?? chunk.created, model: this.sent.model ?? chunk.model } as JsonObject;
    const choices = chunk.choices;
    if (!Array.isArray(choices) || choices.length === 0) {
      if (!usage || !this.showUsage) return undefined;
      return { ...chunk, ...identity, usage: this.usage ?? null };
    }
    const choice = isObject(choices[0]) ? choices[0] : {};
    const delta = isObject(choice.delta) ? choice.delta : {};
    const finish = choice.finish_reason ?? null;
    const toolCalls = delta.tool_calls ?? undefined;
    const content = this.newText(typeof delta.content === 'string' ? delta.content : '', toolCalls !== undefined && toolCalls !== null, finish !== null);
    const out: JsonObject = {};
    if (content) out.content = content;
    if (toolCalls !== undefined && toolCalls !== null) out.tool_calls = toolCalls;
    if (!content && out.tool_calls === undefined && finish === null && !(usage && this.showUsage)) return undefined;
    const rewritten: JsonObject = { ...chunk, ...identity, choices: [{ ...choice, index: 0, delta: out, finish_reason: finish }] };
    if (!this.showUsage) delete rewritten.usage;
    else if (usage) rewritten.usage = this.usage ?? null;
    return rewritten;
  }

  /** The part of a content delta the client does not have. */
  private newText(content: string, toolCall: boolean, finishing: boolean): string {
    if (this.expect !== '') {
      const expect = this.expect;
      if (content.length <= expect.length) {
        if (!expect.startsWith(content) || toolCall) throw this.diverged('the regenerated answer differs from the text already sent');
        this.expect = expect.slice(content.length);
        if (finishing && this.expect !== '') throw this.diverged('the regenerated answer is shorter than the text already sent');
        return '';
      }
      if (!content.startsWith(expect)) throw this.diverged('the regenerated answer differs from the text already sent');
      this.expect = '';
      return content.slice(expect.length);
    }
    if (this.skip !== '' && content !== '') {
      const skip = this.skip;
      let i = 0;
      while (i < content.length && i < skip.length && content.charCodeAt(i) === skip.charCodeAt(i)) i++;
      if (i === skip.length) {
        this.skip = '';
        return content.slice(i);
      }
      if (i === content.length) {
        this.skip = skip.slice(i);
        return '';
      }
      // The new text does not repeat the left-out whitespace: the client has it already, so none is added.
      this.skip = '';
      return content.slice(i).replace(/^\s+/, '');
    }
    return content;
  }
}
