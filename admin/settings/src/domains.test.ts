import { describe, expect, test } from 'bun:test';
import { domainFor, emailDomain, isSubdomainOf, normaliseDomain, subdomainConflict } from './domains.ts';

describe('normaliseDomain', () => {
  test('lower-cases and trims valid names; internationalised names become xn--', () => {
    expect(normaliseDomain('  Example.COM ')).toBe('example.com');
    expect(normaliseDomain('eng.example.co.uk')).toBe('eng.example.co.uk');
    expect(normaliseDomain('a-b.example.io')).toBe('a-b.example.io');
    expect(normaliseDomain('bücher.example')).toBe('xn--bcher-kva.example');
  });

  test('refuses what is not a hostname of two labels or more', () => {
    for (const bad of ['', 'localhost', 'example.com.', '-a.example.com', 'a-.example.com', 'a..b.com', 'a_b.example.com', 'exa mple.com', '1.2.3.4', 'user@example.com', 'http://example.com', `${'a'.repeat(64)}.com`, `${'a.'.repeat(127)}com`])
      expect([bad, normaliseDomain(bad)]).toEqual([bad, undefined]);
  });
});

describe('subdomains', () => {
  test('isSubdomainOf is strict and label-aligned', () => {
    expect(isSubdomainOf('eng.example.com', 'example.com')).toBe(true);
    expect(isSubdomainOf('a.eng.example.com', 'example.com')).toBe(true);
    expect(isSubdomainOf('example.com', 'example.com')).toBe(false);
    expect(isSubdomainOf('badexample.com', 'example.com')).toBe(false);
  });

  test('a subdomain of a registered domain cannot set allow_subdomains; a parent cannot swallow a subdomain that has it', () => {
    expect(subdomainConflict({ domain: 'eng.example.com', allow_subdomains: true }, [{ domain: 'example.com', allow_subdomains: false }])).toMatchObject({
      param: 'allow_subdomains',
      message: expect.stringContaining('eng.example.com is a subdomain of example.com'),
    });
    expect(subdomainConflict({ domain: 'eng.example.com', allow_subdomains: false }, [{ domain: 'example.com', allow_subdomains: true }])).toBeUndefined();
    expect(subdomainConflict({ domain: 'example.com', allow_subdomains: true }, [{ domain: 'eng.example.com', allow_subdomains: false }])).toBeUndefined();
    expect(subdomainConflict({ domain: 'example.com', allow_subdomains: false }, [{ domain: 'eng.example.com', allow_subdomains: true }])).toMatchObject({
      param: 'domain',
      message: expect.stringContaining('eng.example.com, a subdomain of example.com, has allow_subdomains on'),
    });
    expect(subdomainConflict({ domain: 'other.org', allow_subdomains: true }, [{ domain: 'example.com', allow_subdomains: true }])).toBeUndefined();
  });
});

describe('domainFor', () => {
  const domains = [
    { id: 1, domain: 'example.com', allow_subdomains: true },
    { id: 2, domain: 'eng.example.com', allow_subdomains: false },
    { id: 3, domain: 'corp.io', allow_subdomains: false },
  ];

  test('an exact domain maps to itself', () => {
    expect(domainFor(domains, 'ann@example.com')?.id).toBe(1);
    expect(domainFor(domains, 'bob@ENG.example.com')?.id).toBe(2);
    expect(domainFor(domains, 'cy@corp.io')?.id).toBe(3);
  });

  test('a subdomain maps to the registered root only when that root allows subdomains', () => {
    expect(domainFor(domains, 'dan@sales.example.com')?.id).toBe(1);
    expect(domainFor(domains, 'eve@x.eng.example.com')?.id).toBe(1); // eng.example.com does not cover it; example.com does
    expect(domainFor(domains, 'fay@eu.corp.io')).toBeUndefined();
  });

  test('unknown domains and addresses without a domain map to nothing', () => {
    expect(domainFor(domains, 'gus@example.org')).toBeUndefined();
    expect(domainFor(domains, 'gus@badexample.com')).toBeUndefined();
    expect(domainFor(domains, 'not-an-email')).toBeUndefined();
    expect(domainFor(domains, '@example.com')).toBeUndefined();
    expect(emailDomain('a@b@Example.com')).toBe('example.com');
  });
});
