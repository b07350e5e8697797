import { describe, expect, test } from 'bun:test';
import { Type } from '@sinclair/typebox';
import { MemoryStateStore, RedisStateStore } from '@gateway/state';
import { page } from './respond.ts';
import { checkSlug, freeSlug, generatedSlug, slugFromName } from './slug.ts';
import { StoredSnapshot } from './snapshot.ts';
import { validator } from './validate.ts';
import { thrown } from './testing.ts';

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
  const at = { table: 'integrations', id: 'row-1', field: 'credentials' };

  test('seals and opens; another key cannot open; tampering is detected', async () => {
    const { SecretBox } = await import('./crypto.ts');
    const box = new SecretBox('a-key-of-sixteen-chars');
    const sealed = box.seal('sk-secret', at);
    expect(sealed).not.toContain('sk-secret');
    expect(sealed.startsWith('v2:')).toBe(true);
    expect(box.open(sealed, at)).toBe('sk-secret');
    expect(box.seal('sk-secret', at)).not.toBe(sealed); // a fresh IV each time
    expect(() => new SecretBox('another-key-of-16-chars').open(sealed, at)).toThrow();
    const [v, iv, body] = sealed.split(':');
    const bytes = Buffer.from(body!, 'base64url');
    bytes[0] = bytes[0]! ^ 1;
    const flipped = `${v}:${iv}:${bytes.toString('base64url')}`;
    expect(() => box.open(flipped, at)).toThrow();
    expect(box.openJson(box.sealJson({ a: [1] }, at), at)).toEqual({ a: [1] });
  });

  test('a sealed value opens only in its own table, row and field; the error never holds the value', async () => {
    const { SealedValueError, SecretBox } = await import('./crypto.ts');
    const box = new SecretBox('a-key-of-sixteen-chars');
    const sealed = box.seal('sk-secret', at);
    for (const elsewhere of [
      { ...at, id: 'row-2' },
      { ...at, table: 'virtual_keys' },
      { ...at, field: 'secrets' },
    ]) {
      let error: unknown;
      try {
        box.open(sealed, elsewhere);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SealedValueError);
      expect(String((error as Error).message)).not.toContain('sk-secret');
      expect(String((error as Error).message)).not.toContain(sealed);
    }
  });

  test('a value sealed before binding (v1, no associated data) still opens, wherever it is', async () => {
    const { createCipheriv, randomBytes, createHash } = await import('node:crypto');
    const { SecretBox } = await import('./crypto.ts');
    const material = 'a-key-of-sixteen-chars';
    // The v1 format as the gateway wrote it before values were bound to their rows.
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', createHash('sha256').update(material).digest(), iv);
    const data = Buffer.concat([cipher.update('sk-legacy', 'utf8'), cipher.final(), cipher.getAuthTag()]);
    const legacy = `v1:${iv.toString('base64url')}:${data.toString('base64url')}`;
    const box = new SecretBox(material);
    expect(SecretBox.isUnbound(legacy)).toBe(true);
    expect(box.open(legacy, at)).toBe('sk-legacy');
    expect(SecretBox.isUnbound(box.seal('sk-legacy', at))).toBe(false);
  });
});

describe('slugs', () => {
  test('checkSlug: the pattern, never an id shape, 400 naming the field', () => {
    expect(checkSlug('team-a')).toBe('team-a');
    const bad = thrown(() => checkSlug('-x', 'name'));
    expect([bad.status, bad.param, bad.message]).toEqual([400, 'name', 'name must match ^[a-z0-9][a-z0-9-]{1,62}$']);
    expect(thrown(() => checkSlug(crypto.randomUUID())).message).toBe('slug must not have the shape of an id');
    expect(thrown(() => checkSlug(crypto.randomUUID(), 'slug', { idName: 'a workspace id' })).message).toBe('slug must not have the shape of a workspace id');
    expect(thrown(() => checkSlug('A_b', 'slug', { pattern: /^[a-z0-9][a-z0-9_-]{1,62}$/ })).message).toBe('slug must match ^[a-z0-9][a-z0-9_-]{1,62}$');
  });

  test('from names: accents dropped, bounded, a fallback when the name gives too little; free and generated slugs', () => {
    expect(slugFromName('Équipe  Données / Paris', 'ws', 56)).toBe('equipe-donnees-paris');
    expect(slugFromName('!!!', 'provider', 50)).toBe('provider');
    expect(slugFromName('A', 'provider', 50)).toBe('provider-a');
    expect(slugFromName('x'.repeat(300), 'p', 50)).toHaveLength(50);
    const taken = new Set(['a', 'a-2']);
    expect(freeSlug('a', (s) => !taken.has(s))).toBe('a-3');
    expect(generatedSlug('My Config')).toMatch(/^my-config-[0-9a-f]{8}$/);
    expect(generatedSlug('!!!')).toMatch(/^s-[0-9a-f]{8}$/);
  });
});

describe('snapshot onReload', () => {
  test('sees every loaded value with the one it replaced; a failed load calls nothing', async () => {
    const state = new MemoryStateStore();
    const sets = [{ n: 1 }, { n: 2 }];
    let next: { n: number } | Error = sets[0]!;
    const seen: [number, number | undefined][] = [];
    const snap = new StoredSnapshot({
      name: `reload-${crypto.randomUUID()}`,
      state,
      refreshMs: 0,
      load: async () => {
        if (next instanceof Error) throw next;
        return next;
      },
      onReload: (value, previous) => seen.push([value.n, previous?.n]),
    });
    await snap.start();
    await snap.reload(); // the same object again
    next = sets[1]!;
    await snap.reload();
    expect(seen).toEqual([
      [1, undefined],
      [1, 1],
      [2, 1],
    ]);
    next = new Error('database down');
    await snap.reload();
    expect(seen).toHaveLength(3);
    expect(snap.current).toBe(sets[1]!);
    snap.stop();
    await state.close();
  });
});
