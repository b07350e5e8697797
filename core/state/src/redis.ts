import type { StateStore } from '@gateway/sdk';
import Redis from 'ioredis';
import { Channels } from './channels.ts';

// INCRBY and set the expiry only when the key is new, atomically, so concurrent gateways share one window.
const INCR_WITH_TTL = `
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if tonumber(v) == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return v`;

/** State shared by every gateway process through Redis. Calls reject quickly while Redis is down. */
export class RedisStateStore implements StateStore {
  readonly kind = 'redis' as const;
  readonly client: Redis;
  /** Subscriptions need a connection of their own; opened on the first subscribe. */
  private subscriber: Redis | undefined;
  private readonly channels = new Channels();

  constructor(
    private readonly url: string,
    private readonly keyPrefix = 'gw:',
  ) {
    this.client = new Redis(url, {
      keyPrefix,
      // Fail fast instead of queueing commands while disconnected: callers degrade (cache miss, local decision).
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      commandTimeout: 1_000,
      retryStrategy: (times) => Math.min(times * 200, 2_000),
      lazyConnect: false,
    });
    // Errors surface on the calls; the connection error event itself must not crash the process.
    this.client.on('error', () => {});
  }

  async get(key: string): Promise<string | null> {
    return this.client.get(key);
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    if (ttlMs) await this.client.set(key, value, 'PX', ttlMs);
    else await this.client.set(key, value);
  }

  async del(key: string): Promise<void> {
    await this.client.del(key);
  }

  async incr(key: string, by: number, ttlMs: number): Promise<number> {
    const result = await this.client.eval(INCR_WITH_TTL, 1, key, by, ttlMs);
    return Number(result);
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.client.publish(this.keyPrefix + channel, message);
  }

  subscribe(channel: string, listener: (message: string) => void): () => void {
    const name = this.keyPrefix + channel;
    if (this.channels.add(name, listener)) {
      // The offline queue is on for this connection: a subscription made while Redis is down is sent on connect,
      // and ioredis re-subscribes after every reconnect.
      if (!this.subscriber) {
        // Named, so that operators (and tests counting a process's connections) can tell it from the command one.
        this.subscriber = new Redis(this.url, {
          connectionName: 'gateway-subscriber',
          maxRetriesPerRequest: null,
          retryStrategy: (times) => Math.min(times * 200, 2_000),
        });
        this.subscriber.on('error', () => {});
        this.subscriber.on('message', (ch: string, message: string) => this.channels.deliver(ch, message));
      }
      this.subscriber.subscribe(name).catch(() => {});
    }
    return () => {
      if (this.channels.remove(name, listener)) this.subscriber?.unsubscribe(name).catch(() => {});
    };
  }

  async close(): Promise<void> {
    this.client.disconnect();
    this.subscriber?.disconnect();
    this.channels.clear();
  }
}
