import { describe, expect, test } from 'bun:test';
import { input, output } from '../testing.ts';
import { findUrls, trimUrl, urlProblem, validUrls } from './validUrls.ts';

describe('default.validUrls', () => {
  test('passes when every URL is well-formed', async () => {
    const r = await validUrls.run(
      output('See https://example.com/docs?q=1#top, (http://sub.example.co.uk/a_(b)) and https://[2001:db8::1]:8443/x. Also http://192.0.2.7/.'),
      {},
    );
    expect(r.verdict).toBe(true);
    expect(r.data).toMatchObject({ urlCount: 4 });
  });

  test('fails on a malformed one', async () => {
    const r = await validUrls.run(output('good https://example.com bad http://exa_mple.com/ and https://nodot/'), {});
    expect(r.verdict).toBe(false);
    expect((r.data as { invalidUrls: { url: string }[] }).invalidUrls.map((u) => u.url)).toEqual(['http://exa_mple.com/', 'https://nodot/']);
  });

  test('onlyDNS judges the host alone', async () => {
    const text = 'https://example.com/100%zz';
    expect((await validUrls.run(output(text), {})).verdict).toBe(false);
    expect((await validUrls.run(output(text), { onlyDNS: true })).verdict).toBe(true);
  });

  test('no URL, missing text: nothing invalid', async () => {
    expect((await validUrls.run(input('no links'), {})).verdict).toBe(true);
    expect((await validUrls.run(input({ messages: [] }), {})).verdict).toBe(true);
  });

  test('host and escape rules', () => {
    expect(urlProblem('https://example.com', false)).toBeUndefined();
    expect(urlProblem('https://xn--bcher-kva.example/', false)).toBeUndefined();
    expect(urlProblem('https://bücher.example/', false)).toBeUndefined();
    expect(urlProblem('https://-bad.example.com/', false)).toContain('host');
    expect(urlProblem('https://example.c0m/', false)).toContain('host');
    expect(urlProblem('http://999.1.1.1/', false)).toBeDefined();
    expect(urlProblem('http://example.com:99999/', false)).toBe('does not parse as a URL');
    expect(urlProblem('http://example.com/a\\b', false)).toBe('contains a backslash');
    expect(trimUrl('https://x.com/a).')).toBe('https://x.com/a');
    expect(trimUrl('https://x.com/a_(b)')).toBe('https://x.com/a_(b)');
    expect(findUrls('<https://a.com>, "http://b.org".')).toEqual(['https://a.com', 'http://b.org']);
  });

  test('long inputs stay linear', async () => {
    const started = performance.now();
    await validUrls.run(output(`http://a.com/${')'.repeat(100_000)} ${'http'.repeat(50_000)}`), {});
    expect(performance.now() - started).toBeLessThan(5_000); // a hang guard: a quadratic scan here takes minutes
  });

  test('bad parameters', () => {
    expect(validUrls.validate({ onlyDNS: 'yes' })).toEqual(['onlyDNS: must be true or false']);
    expect(validUrls.validate({ check: true })).toEqual(['check: is not a known parameter']);
  });
});
