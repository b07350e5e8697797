import { describe, expect, test } from 'bun:test';
import { MemoryStateStore } from './memory.ts';
import { RedisStateStore } from './redis.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function nextMessage(subscribe: (fn: (m: string) => void) => () => void): Promise<string> {
  return new Promise((resolve) => {
    const stop = subscribe((m) => {
      stop();
      resolve(m);
    });
  });
}

describe('state publish/subscribe', () => {
  test('memory: subscribers of the channel hear it, others do not; unsubscribe stops delivery', async () => {
    const store = new MemoryStateStore();
    const heard: string[] = [];
    const stop = store.subscribe('a', (m) => heard.push(`a:${m}`));
    store.subscribe('b', (m) => heard.push(`b:${m}`));
    await store.publish('a', '1');
    stop();
    await store.publish('a', '2');
    await store.publish('b', '3');
    expect(heard).toEqual(['a:1', 'b:3']);
    await store.close();
  });

  test('redis: a message published by one store reaches another (two processes sharing Redis)', async () => {
    const prefix = `test-${crypto.randomUUID()}:`;
    const one = new RedisStateStore(REDIS_URL, prefix);
    const two = new RedisStateStore(REDIS_URL, prefix);
    const other = new RedisStateStore(REDIS_URL, `other-${crypto.randomUUID()}:`);
    try {
      const stray: string[] = [];
      other.subscribe('changes', (m) => stray.push(m));
      const received = nextMessage((fn) => two.subscribe('changes', fn));
      // The subscription is asynchronous: publish until it is heard.
      let done = false;
      received.then(() => (done = true));
      for (let i = 0; i < 50 && !done; i++) {
        await one.publish('changes', 'hello').catch(() => {}); // rejects until connected
        await Bun.sleep(20);
      }
      expect(await received).toBe('hello');
      expect(stray).toEqual([]); // another key prefix is another deployment
    } finally {
      await Promise.all([one.close(), two.close(), other.close()]);
    }
  });
});
