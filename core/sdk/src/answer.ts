import type { AttemptResult, SettledBody } from './plugin.ts';

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/**
 * A whole (non-streamed) JSON answer as an attempt result. Its Response is built only if something asks for it: the
 * server builds the client's Response itself, with its own headers, from `answer`. Used by the pipeline for provider
 * answers and by attempt stages that answer themselves (a cache).
 */
export class WholeAnswer implements AttemptResult {
  readonly answer: { text: string; status: number; contentType: string };
  readonly settled: Promise<SettledBody>;
  private built: Response | undefined;

  constructor(
    text: string,
    readonly status: number,
    readonly providerId: string,
    readonly upstreamLatencyMs?: number,
    /** The answer's `usage` object, when the answer was parsed anyway (then not looked for in the text again). */
    usage?: SettledBody['usage'],
  ) {
    this.answer = { text, status, contentType: 'application/json' };
    this.settled = Promise.resolve(usage ? { body: text, usage } : { body: text });
  }

  get response(): Response {
    this.built ??= new Response(this.answer.text, { status: this.status, headers: JSON_HEADERS });
    return this.built;
  }
}
