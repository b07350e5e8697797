import type { Logger } from '@gateway/sdk';
import type { CacheBackend } from '../stage.ts';
import type Redis from 'ioredis';

// Required on first use rather than imported: ioredis costs about 18 MB in every process, and most run without Redis.
const loadRedis = (): typeof Redis => (require('ioredis') as typeof import('ioredis')).default;

export interface RedisBackendOptions {
  url: string;
  /** Prepended to every key. */
  keyPrefix: string;
  /** A command that takes longer is given up. */
  timeoutMs: number;
  logger?: Logger;
  now?: () => number;
}

/** How long the backend stays out of the way after a command timed out (a frozen server answers nothing). */
const BACKOFF_MS = 1_000;

export class RedisUnavailableError extends Error {}

/**
 * The shared store: Redis, values as binary strings, expiry by `EX` (the answer's max_age). Redis's own memory policy
 * (maxmemory, maxmemory-policy) bounds it; the cache sets no bound of its own there.
 *
 * Failing fast is the point: commands are never queued while the connection is down (`enableOfflineQueue: false`,
 * they reject at once), a command is given up after `timeoutMs`, and after a timeout the backend refuses every call
 * for a second instead of making each request wait. The stage takes every rejection as a miss.
 */
export class RedisBackend implements CacheBackend {
  readonly name = 'redis';
  readonly client: Redis;
  private readonly prefix: string;
  private readonly logger: Logger | undefined;
  private readonly now: () => number;
  private pausedUntil = 0;
  private down = false;
  private closing = false;
  private readonly timeoutMs: number;
  /** The first connection, opened by the first request that uses the cache (settled: connected or given up). */
  private firstUse: Promise<void> | undefined;
  private firstUseSettled = false;

  constructor(opts: RedisBackendOptions) {
    this.prefix = opts.keyPrefix;
    this.logger = opts.logger;
    this.now = opts.now ?? Date.now;
    this.timeoutMs = opts.timeoutMs;
    this.client = new (loadRedis())(opts.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1_000,
      commandTimeout: opts.timeoutMs,
      retryStrategy: (times) => Math.min(times * 200, 2_000),
      // No connection until a request uses the cache: a gateway whose configs never cache holds none.
      lazyConnect: true,
      connectionName: 'gateway-cache',
    });
    this.client.on('error', (error: Error) => this.markDown(error));
    this.client.on('close', () => {
      if (!this.closing) this.markDown(new Error('connection closed'));
    });
    this.client.on('ready', () => this.markUp());
  }

  private markUp(): void {
    if (this.down) this.logger?.info({ backend: 'redis' }, 'response cache: Redis is back');
    this.down = false;
    this.pausedUntil = 0;
  }

  private markDown(error: unknown): void {
    if (!this.down) this.logger?.warn({ backend: 'redis', error: error instanceof Error ? error.message : String(error) }, 'response cache: Redis unavailable, requests go on as cache misses');
    this.down = true;
  }

  private ready(): boolean {
    return this.client.status === 'ready';
  }

  /**
   * Whether commands may be sent now. The first call opens the connection and waits for it at most the command
   * timeout; from then on ioredis reconnects by itself and a connection that is not ready is refused at once.
   */
  private async usable(): Promise<boolean> {
    if (this.ready()) return this.now() >= this.pausedUntil;
    if (this.closing) return false;
    if (!this.firstUse) {
      const connecting = this.client.connect().catch((error: unknown) => this.markDown(error));
      let timer: Timer | undefined;
      this.firstUse = Promise.race([connecting, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.timeoutMs)))]).then(() => {
        clearTimeout(timer);
        this.firstUseSettled = true;
      });
    }
    if (!this.firstUseSettled) await this.firstUse;
    return this.ready();
  }

  private failed(error: unknown): never {
    if (error instanceof Error && /timed? ?out/i.test(error.message)) this.pausedUntil = this.now() + BACKOFF_MS;
    this.markDown(error);
    throw error;
  }

  async get(key: string): Promise<Uint8Array | null> {
    if (!(await this.usable())) throw new RedisUnavailableError('redis unavailable');
    try {
      const value = await this.client.getBuffer(this.prefix + key);
      if (this.down) this.markUp(); // it answered again after a timeout (the connection itself never dropped)
      return value ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength) : null;
    } catch (error) {
      this.failed(error);
    }
  }

  async set(key: string, value: Uint8Array, ttlSeconds: number): Promise<void> {
    if (ttlSeconds <= 0) return;
    if (!(await this.usable())) throw new RedisUnavailableError('redis unavailable');
    try {
      await this.client.set(this.prefix + key, Buffer.from(value.buffer, value.byteOffset, value.byteLength), 'EX', Math.ceil(ttlSeconds));
      if (this.down) this.markUp();
    } catch (error) {
      this.failed(error);
    }
  }

  async delete(key: string): Promise<void> {
    if (!(await this.usable())) return;
    await this.client.del(this.prefix + key).catch((error: unknown) => this.failed(error));
  }

  async close(): Promise<void> {
    this.closing = true;
    this.client.disconnect();
  }
}
