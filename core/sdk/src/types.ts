/** Shared value types of the plugin contract. */

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

/**
 * The first-class endpoints, `listModels` (GET /v1/models: translated when the provider has a model list of its
 * own shape, passed through otherwise), and `proxy` for any other provider path (passed through unchanged).
 */
export type EndpointKind = 'chatComplete' | 'complete' | 'embed' | 'moderate' | 'listModels' | 'proxy';

export interface Logger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
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
   * Sends a message to every subscriber of a channel: those of this process (memory) or of every process sharing
   * the Redis (redis). Best effort: rejects while Redis is down.
   */
  publish(channel: string, message: string): Promise<void>;
  /** Calls `listener` with each message published on `channel`; returns the function that stops it. */
  subscribe(channel: string, listener: (message: string) => void): () => void;
  close(): Promise<void>;
}
