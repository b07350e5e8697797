/** Shared value types of the plugin contract. */

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

/**
 * The first-class endpoints, `listModels` (GET /v1/models: translated when the provider has a model list of its
 * own shape, passed through otherwise), `messages` and `countTokens` (Anthropic's POST /v1/messages and
 * /v1/messages/count_tokens: native where the adapter declares them, else translated over `chatComplete`; the body is
 * Anthropic-shaped), `responses` (OpenAI's POST /v1/responses: native where the adapter declares it, else translated
 * over `chatComplete`; docs/responses.md), and `proxy` for any other provider path (passed through unchanged).
 */
export type EndpointKind = 'chatComplete' | 'complete' | 'embed' | 'moderate' | 'messages' | 'countTokens' | 'responses' | 'listModels' | 'proxy';

export interface Logger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

/** One counter of an atomic check-and-consume (`StateStore.consume`). */
export interface CounterCharge {
  /** The counter's key; a window's counter has the window in its key and expires with it. */
  readonly key: string;
  /** The call is admitted only while the counter is below this. */
  readonly limit: number;
  /** Added to the counter when the call is admitted (0: only checked, as tokens are, added at completion). */
  readonly cost: number;
  /** The counter's lifetime from its creation, in ms (the rest of its window, and a margin). */
  readonly ttlMs: number;
}

/** What `StateStore.consume` decided. */
export interface ConsumeResult {
  readonly admitted: boolean;
  /** Each counter's value after the decision (unchanged when refused), in the order given. */
  readonly values: readonly number[];
  /** When refused: the index of the first counter that was at or over its limit; -1 when admitted. */
  readonly refusedAt: number;
}

/** An amount added to a counter after the fact (a call's tokens or cost, once its answer is complete). */
export interface CounterAddition {
  readonly key: string;
  /** May be fractional (a cost in cents). */
  readonly by: number;
  readonly ttlMs: number;
}

/** Shared state: in the process by default, Redis when REDIS_URL is set. Every method may reject when Redis is down. */
export interface StateStore {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  del(key: string): Promise<void>;
  /** Adds `by` and returns the new value; the key expires `ttlMs` after it was created. */
  incr(key: string, by: number, ttlMs: number): Promise<number>;
  /**
   * Atomic check-and-consume over several counters (rate and usage limits): admits only when every counter is below
   * its limit, and then adds each charge's cost, in the same atomic step. With Redis, one round trip (a Lua script
   * run by EVALSHA), so any number of processes together never admit more than a limit allows; in memory, exact
   * within this process only.
   */
  consume(charges: readonly CounterCharge[]): Promise<ConsumeResult>;
  /** Adds to counters (no check), in one round trip; a counter created here expires `ttlMs` later. */
  add(additions: readonly CounterAddition[]): Promise<void>;
  /** The counters' current values, 0 for a counter that does not exist, in one round trip. */
  read(keys: readonly string[]): Promise<number[]>;
  /**
   * Sends a message to every subscriber of a channel: those of this process (memory) or of every process sharing
   * the Redis (redis). Best effort: rejects while Redis is down.
   */
  publish(channel: string, message: string): Promise<void>;
  /** Calls `listener` with each message published on `channel`; returns the function that stops it. */
  subscribe(channel: string, listener: (message: string) => void): () => void;
  close(): Promise<void>;
}
