import { describe, expect, test } from 'bun:test';
import { Type } from '@sinclair/typebox';
import { GatewayError } from '@gateway/sdk';
import { MemoryStateStore, RedisStateStore } from '@gateway/state';
import { page } from './respond.ts';
import { StoredSnapshot } from './snapshot.ts';
import { validator } from './validate.ts';

function thrown(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('did not throw');
}

describe('admin kit', () => {
  test('validator lists every violation by path and refuses unknown properties', () => {
    const check = validator(
      Type.Object({ name: Type.String({ minLength: 1 }), scopes: Type.Array(Type.String()), nested: Type.Optional(Type.Object({ n: Type.Integer() }, { additionalProperties: false })) }, { additionalProperties: false }),
    );
    expect(check({ name: 'a', scopes: [] })).toEqual({ name: 'a', scopes: [] });
    const err = thrown(() => check({ name: '', scopes: [1], nested: { n: 1.5, x: 1 }, extra: true }));
    expect(err.status).toBe(400);
    expect(err.message).toContain('body.name:');
    expect(err.message).toContain('body.scopes[0]:');
    expect(err.message).toContain('body.nested.n:');
    expect(err.message).toContain('body.extra:');
    expect(thrown(() => check(undefined)).message).toContain('needs a JSON body');
  });

  test('page: defaults, bounds and a clear 400', () => {
    expect(page(new URLSearchParams())).toEqual({ currentPage: 0, pageSize: 50, offset: 0, limit: 50 });
    expect(page(new URLSearchParams('current_page=2&page_size=10'))).toEqual({ currentPage: 2, pageSize: 10, offset: 20, limit: 10 });
    const err = thrown(() => page(new URLSearchParams('page_size=0')));
    expect([err.status, err.param]).toEqual([400, 'page_size']);
    expect(thrown(() => page(new URLSearchParams('current_page=-1'))).param).toBe('current_page');
  });

  test('snapshot: a change in one process reaches another through Redis; a failed reload keeps the last set', async () => {
    const prefix = `kit-${crypto.randomUUID()}:`;
    const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const [a, b] = [new RedisStateStore(url, prefix), new RedisStateStore(url, prefix)];
    let stored = ['one'];
    let failing = false;
    const load = async () => {
      if (failing) throw new Error('database down');
      return [...stored];
    };
    const one = new StoredSnapshot({ name: 'things', state: a, load, refreshMs: 0 });
    const two = new StoredSnapshot({ name: 'things', state: b, load, refreshMs: 0 });
    try {
      await Promise.all([one.start(), two.start()]);
      await Bun.sleep(100); // subscriptions reach Redis
      stored = ['one', 'two'];
      await one.changed();
      expect(one.current).toEqual(['one', 'two']);
      const deadline = Date.now() + 1000;
      while (two.current.length !== 2 && Date.now() < deadline) await Bun.sleep(10);
      expect(two.current).toEqual(['one', 'two']);
      failing = true;
      await two.reload();
      expect(two.current).toEqual(['one', 'two']);
    } finally {
      one.stop();
      two.stop();
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('snapshot on the memory store: changed() reloads in the process', async () => {
    const state = new MemoryStateStore();
    let n = 0;
    const snap = new StoredSnapshot({ name: 'n', state, load: async () => ++n, refreshMs: 0 });
    await snap.start();
    expect(snap.current).toBe(1);
    await snap.changed();
    expect(snap.current).toBeGreaterThanOrEqual(2);
    snap.stop();
    await state.close();
  });
});

describe('secret box', () => {
  test('seals and opens; another key cannot open; tampering is detected', async () => {
    const { SecretBox } = await import('./crypto.ts');
    const box = new SecretBox('a-key-of-sixteen-chars');
    const sealed = box.seal('sk-secret');
    expect(sealed).not.toContain('sk-secret');
    expect(box.open(sealed)).toBe('sk-secret');
    expect(box.seal('sk-secret')).not.toBe(sealed); // a fresh IV each time
    expect(() => new SecretBox('another-key-of-16-chars').open(sealed)).toThrow();
    const [v, iv, body] = sealed.split(':');
    const bytes = Buffer.from(body!, 'base64url');
    bytes[0] = bytes[0]! ^ 1;
    const flipped = `${v}:${iv}:${bytes.toString('base64url')}`;
    expect(() => box.open(flipped)).toThrow();
    expect(box.openJson(box.sealJson({ a: [1] }))).toEqual({ a: [1] });
  });
});
