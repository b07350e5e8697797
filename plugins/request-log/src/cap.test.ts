import { describe, expect, test } from 'bun:test';
import { capBytes, capText } from './cap.ts';
import { Ring } from './ring.ts';

describe('capText / capBytes', () => {
  test('short text is kept as is', () => {
    expect(capText('hello', 100)).toBe('hello');
    expect(capBytes(new TextEncoder().encode('héllo'), 100)).toBe('héllo');
  });

  test('long text keeps the first bytes and says how many there were', () => {
    const out = capText('a'.repeat(70_000), 65_536);
    expect(out.startsWith('a'.repeat(65_536))).toBe(true);
    expect(out.slice(65_536)).toBe('\n…[truncated: 70000 bytes in all]');
  });

  test('a multi-byte character is never cut in half', () => {
    const text = '€'.repeat(10); // 3 bytes each
    expect(capText(text, 10)).toBe('€€€\n…[truncated: 30 bytes in all]');
    expect(capBytes(new TextEncoder().encode(text), 10)).toBe('€€€\n…[truncated: 30 bytes in all]');
  });
});

describe('Ring', () => {
  test('FIFO that grows past its initial capacity (the queue bounds it by bytes)', () => {
    const ring = new Ring<number>(2);
    for (const n of [1, 2, 3]) ring.push(n);
    expect(ring.size).toBe(3);
    expect(ring.take(2)).toEqual([1, 2]);
    ring.push(4);
    ring.push(5);
    expect(ring.shift()).toBe(3);
    expect(ring.take(10)).toEqual([4, 5]);
    expect(ring.size).toBe(0);
    expect(ring.shift()).toBeUndefined();
  });
});
