import type { StateStore } from '@gateway/sdk';
import { MemoryStateStore } from './memory.ts';
import { RedisStateStore } from './redis.ts';

export { MemoryStateStore, RedisStateStore };

/** In the process unless a Redis URL is given. */
export function createStateStore(redisUrl: string | undefined): StateStore {
  return redisUrl ? new RedisStateStore(redisUrl) : new MemoryStateStore();
}
