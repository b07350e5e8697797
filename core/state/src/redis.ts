import type { ConsumeResult, CounterAddition, CounterCharge, StateStore } from '@gateway/sdk';
import type Redis from 'ioredis';
import { Channels } from './channels.ts';

// Required on first use rather than imported: ioredis costs about 18 MB in every process, and most run without Redis.
const loadRedis = (): typeof Redis => (require('ioredis') as typeof import('ioredis')).default;

// INCRBY and set the expiry only when the key is new, atomically, so concurrent gateways share one window.
const INCR_WITH_TTL = `
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if tonumber(v) == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return v`;

/**
 * Check-and-consume over several counters in one atomic step (Redis runs a script alone): ARGV holds, per key, its
 * limit, cost and ttl. Refused unless every counter is below its limit; then each cost is added (INCRBY for whole
 * numbers, INCRBYFLOAT for fractions) and a counter created now gets its expiry. Returns {admitted, refusedAt (1-based,
 * 0 when admitted), value…} with the values as strings (fractions survive).
 */
const CONSUME = `
local n = #KEYS
local values = redis.call('MGET', unpack(KEYS))
for i = 1, n do
  local v = tonumber(values[i] or '0')
  if v >= tonumber(ARGV[3 * i - 2]) then
    local out = {0, i}
    for j = 1, n do out[j + 2] = tostring(values[j] or '0') end
    return out
  end
end
local out = {1, 0}
for i = 1, n do
  local cost = ARGV[3 * i - 1]
  local v = values[i] or '0'
  if tonumber(cost) ~= 0 then
    -- A fraction in the cost or already in the counter (a cost in cents): INCRBY would refuse a fractional value.
    if string.find(cost, '[.eE]') or string.find(v, '[.eE]') then v = redis.call('INCRBYFLOAT', KEYS[i], cost) else v = redis.call('INCRBY', KEYS[i], cost) end
    if redis.call('PTTL', KEYS[i]) < 0 then redis.call('PEXPIRE', KEYS[i], ARGV[3 * i]) end
  end
  out[i + 2] = tostring(v)
end
return out`;

/** Adds to several counters, each created with its expiry; ARGV holds, per key, the amount and the ttl. */
const ADD = `
for i = 1, #KEYS do
  local by = ARGV[2 * i - 1]
  local v = redis.call('GET', KEYS[i]) or '0'
  if string.find(by, '[.eE]') or string.find(v, '[.eE]') then redis.call('INCRBYFLOAT', KEYS[i], by) else redis.call('INCRBY', KEYS[i], by) end
  if redis.call('PTTL', KEYS[i]) < 0 then redis.call('PEXPIRE', KEYS[i], ARGV[2 * i]) end
end
return #KEYS`;

type CounterCommands = {
  gwConsume(numKeys: number, ...args: (string | number)[]): Promise<(number | string)[]>;
  gwAdd(numKeys: number, ...args: (string | number)[]): Promise<number>;
};

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
    this.client = new (loadRedis())(url, {
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
    // Sent by EVALSHA (ioredis loads the script again after NOSCRIPT): one round trip, the script text sent once.
    this.client.defineCommand('gwConsume', { lua: CONSUME });
    this.client.defineCommand('gwAdd', { lua: ADD });
  }

  private get counters(): CounterCommands {
    return this.client as unknown as CounterCommands;
  }

  async consume(charges: readonly CounterCharge[]): Promise<ConsumeResult> {
    if (charges.length === 0) return { admitted: true, values: [], refusedAt: -1 };
    const args: (string | number)[] = charges.map((c) => c.key);
    for (const c of charges) args.push(c.limit, c.cost, Math.max(1, Math.ceil(c.ttlMs)));
    const [admitted, refusedAt, ...values] = await this.counters.gwConsume(charges.length, ...args);
    return { admitted: Number(admitted) === 1, values: values.map(Number), refusedAt: Number(refusedAt) - 1 };
  }

  async add(additions: readonly CounterAddition[]): Promise<void> {
    if (additions.length === 0) return;
    const args: (string | number)[] = additions.map((a) => a.key);
    for (const a of additions) args.push(a.by, Math.max(1, Math.ceil(a.ttlMs)));
    await this.counters.gwAdd(additions.length, ...args);
  }

  async read(keys: readonly string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    const values = await this.client.mget(...keys);
    return values.map((v) => Number(v ?? 0));
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
        this.subscriber = new (loadRedis())(this.url, {
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
