import type { AttemptResult, GatewayError, SettledBody } from '@gateway/sdk';

/**
 * A failed attempt as a result. Its error Response is built only if something asks for it: a failure that a retry or
 * a fallback replaces (the common case of a fallback config) is discarded without ever being serialised.
 */
export class FailedAttempt implements AttemptResult {
  readonly settled: Promise<SettledBody>;
  private built: Response | undefined;

  constructor(
    readonly error: GatewayError,
    readonly status: number,
    readonly providerId: string,
    readonly upstreamLatencyMs?: number,
    readonly retryAfterMs?: number,
    /** The provider's answer, for the log. */
    body?: string,
  ) {
    this.settled = Promise.resolve({ body, error });
  }

  get response(): Response {
    this.built ??= this.error.toResponse();
    return this.built;
  }

  set response(response: Response) {
    this.built = response;
  }

  /** Whether the Response exists (one never built holds nothing to release). */
  get responseBuilt(): boolean {
    return this.built !== undefined;
  }
}
