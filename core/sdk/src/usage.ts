/**
 * What a finished call consumed, as the core reads it once when the answer is complete (docs/plugins.md, "Usage at
 * completion"), and the figures plugins compute from it once (a cost) for the others to read.
 */

/**
 * Token counts of one answer. The three totals are null when the answer does not say; the details are present only
 * when the answer carries them (OpenAI's `*_tokens_details`, Anthropic-style cache counts mapped by the adapters).
 */
export interface TokenUsage {
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  /** The answer's total, else prompt + completion when both are known. */
  readonly totalTokens: number | null;
  /** Input tokens read from the provider's prompt cache (`prompt_tokens_details.cached_tokens`). */
  readonly cachedInputTokens?: number;
  /** Input tokens written to the provider's prompt cache (`cache_creation_input_tokens`). */
  readonly cacheWriteInputTokens?: number;
  /**
   * Of `cacheWriteInputTokens`: those written with a 1-hour lifetime (Anthropic's
   * `cache_creation.ephemeral_1h_input_tokens`), billed above the default 5-minute writes.
   */
  readonly cacheWrite1hInputTokens?: number;
  /** Output tokens spent on reasoning (`completion_tokens_details.reasoning_tokens`). */
  readonly reasoningTokens?: number;
  readonly audioInputTokens?: number;
  readonly audioOutputTokens?: number;
  readonly imageInputTokens?: number;
  /** Predicted-output tokens accepted and rejected (`completion_tokens_details.*_prediction_tokens`). */
  readonly acceptedPredictionTokens?: number;
  readonly rejectedPredictionTokens?: number;
}

/** The name of a figure whose value is a T, attached to a finished call. Made with `defineFigure`; compared by `id`. */
export interface FigureToken<T> {
  readonly id: string;
  /** Carries T for the type checker only (never set). */
  readonly type?: (value: T) => T;
}

/** A figure's token. The id must be unique among installed plugins (a third party prefixes it with its package name). */
export function defineFigure<T>(id: string): FigureToken<T> {
  return Object.freeze({ id });
}

/**
 * Figures computed once per finished call by one plugin and read by others (the pricing plugin attaches the cost;
 * the request log and the usage limits read it). A finally stage attaches synchronously in its `run`, and runs
 * `before` the stages that read the figure.
 */
export interface Figures {
  get<T>(token: FigureToken<T>): T | undefined;
  /** Attaches a figure; a second value for the same token replaces the first. */
  set<T>(token: FigureToken<T>, value: T): void;
}
