import { expect, test } from 'bun:test';
import { bodyCompressionFromEnv, MIN_COMPRESSED_CHARS, readStoredBody, storeBody } from './body-compression.ts';

const large = `{"text":"${'héllo wörld 😀 '.repeat(100)}"}`;

test('gzip and zstd: a large body is stored marked and shorter, and reads back identical', () => {
  for (const method of ['gzip', 'zstd'] as const) {
    const stored = storeBody(large, method);
    expect(stored.startsWith(`\u0001${method}\u0001`)).toBe(true);
    expect(stored.length).toBeLessThan(large.length / 4);
    expect(readStoredBody(stored)).toBe(large);
  }
});

test('none, a body under the threshold, or one compression would not shorten: stored as it is', () => {
  expect(storeBody(large, 'none')).toBe(large);
  const small = 'x'.repeat(MIN_COMPRESSED_CHARS - 1);
  expect(storeBody(small, 'gzip')).toBe(small);
  const random = Buffer.from(crypto.getRandomValues(new Uint8Array(2048))).toString('base64');
  expect(storeBody(random, 'zstd')).toBe(random);
  expect(readStoredBody(random)).toBe(random);
  expect(readStoredBody(null)).toBeNull();
});

test('a body that itself starts with the marker is always stored encoded, so it reads back as it was', () => {
  for (const body of ['\u0001gzip\u0001abc', '\u0001']) {
    for (const method of ['none', 'gzip', 'zstd'] as const) expect(readStoredBody(storeBody(body, method))).toBe(body);
  }
});

test('LOG_BODY_COMPRESSION: none by default, gzip or zstd; anything else refused', () => {
  expect(bodyCompressionFromEnv({})).toBe('none');
  expect(bodyCompressionFromEnv({ LOG_BODY_COMPRESSION: ' GZIP ' })).toBe('gzip');
  expect(bodyCompressionFromEnv({ LOG_BODY_COMPRESSION: 'zstd' })).toBe('zstd');
  expect(() => bodyCompressionFromEnv({ LOG_BODY_COMPRESSION: 'brotli' })).toThrow(/LOG_BODY_COMPRESSION/);
});
