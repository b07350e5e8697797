import { describe, expect, test } from 'bun:test';
import { splitUrl } from './app.ts';

describe('splitUrl', () => {
  test.each([
    ['http://h:1/v1/chat/completions', '/v1/chat/completions', ''],
    ['http://h/v1/files?purpose=fine-tune&x=1', '/v1/files', '?purpose=fine-tune&x=1'],
    ['http://h/v1/a?', '/v1/a', ''],
    ['http://h/v1/a#frag', '/v1/a', ''],
    ['http://h/v1/a?b=1#frag', '/v1/a', '?b=1'],
    ['http://h', '/', ''],
    ['http://[::1]:8787/v1/x/y?z', '/v1/x/y', '?z'],
  ])('%s', (url, pathname, search) => {
    expect(splitUrl(url)).toEqual({ pathname, search });
    if (url !== 'http://h') {
      const parsed = new URL(url);
      expect(pathname).toBe(parsed.pathname);
      expect(search).toBe(parsed.search);
    }
  });
});
