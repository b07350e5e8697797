import type { AttemptRecord, FigureToken, Figures, GatewayError, Outcome, SettledBody, TokenUsage } from '@gateway/sdk';
import { extractUsage, normaliseUsage } from './usage.ts';

/** Figures by token id: a small map, made only when a plugin attaches one. */
class FigureMap implements Figures {
  private values: Map<string, unknown> | undefined;

  get<T>(token: FigureToken<T>): T | undefined {
    // The token's type says what was stored under its id.
    return this.values?.get(token.id) as T | undefined;
  }

  set<T>(token: FigureToken<T>, value: T): void {
    (this.values ??= new Map()).set(token.id, value);
  }
}

const NO_USAGE = Symbol('unread');

/**
 * A finished request's outcome. Its usage is read on first access only, and then once: the finally stages run as
 * soon as the answer is settled, and a stage that needs no usage (or a request whose answer is an error) costs no
 * reading at all; the request log reads it when its batch is written, off the request's path.
 */
export class CompletedOutcome implements Outcome {
  readonly figures: Figures = new FigureMap();
  private read: TokenUsage | undefined | typeof NO_USAGE = NO_USAGE;

  constructor(
    public status: number,
    public providerId: string | undefined,
    public targetIndex: string | undefined,
    public latencyMs: number,
    public upstreamLatencyMs: number | undefined,
    public responseBody: string | undefined,
    public error: GatewayError | undefined,
    public attempts: readonly AttemptRecord[],
    private readonly streamUsage: SettledBody['usage'],
  ) {}

  get usage(): TokenUsage | undefined {
    if (this.read === NO_USAGE) this.read = this.streamUsage ? normaliseUsage(this.streamUsage) : this.status < 400 ? extractUsage(this.responseBody) : undefined;
    return this.read;
  }
}
