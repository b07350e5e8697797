import { describe, expect, test } from 'bun:test';
import { forwardedHeaders, isForwardable, passthroughHeaders, relayedResponseHeaders, retryAfterMs } from './headers.ts';

const NOW = Date.parse('2025-01-01T00:00:00Z');

describe('retryAfterMs', () => {
  test('Retry-After in seconds, whole or fractional', () => {
    expect(retryAfterMs(new Headers({ 'retry-after': '3' }), NOW)).toBe(3000);
    expect(retryAfterMs(new Headers({ 'retry-after': '0' }), NOW)).toBe(0);
    expect(retryAfterMs(new Headers({ 'retry-after': '1.5' }), NOW)).toBe(1500);
    expect(retryAfterMs(new Headers({ 'retry-after': ' 2 ' }), NOW)).toBe(2000);
  });

  test('Retry-After as an HTTP date, relative to now; a past date means no wait', () => {
    expect(retryAfterMs(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }), NOW)).toBe(30_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }), NOW)).toBe(0);
  });

  test('Retry-After-ms in milliseconds, and it wins over Retry-After', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250' }), NOW)).toBe(250);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '12.5' }), NOW)).toBe(12.5);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '100', 'retry-after': '9' }), NOW)).toBe(100);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '-5' }), NOW)).toBe(0);
  });

  test('an unreadable Retry-After-ms falls back to Retry-After', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': 'soon', 'retry-after': '2' }), NOW)).toBe(2000);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '', 'retry-after': '2' }), NOW)).toBe(2000);
  });

  test('absent or unreadable headers give undefined', () => {
    expect(retryAfterMs(new Headers(), NOW)).toBeUndefined();
    expect(retryAfterMs(new Headers({ 'retry-after': '' }), NOW)).toBeUndefined();
    expect(retryAfterMs(new Headers({ 'retry-after': 'later please' }), NOW)).toBeUndefined();
    expect(retryAfterMs(new Headers({ 'retry-after-ms': 'x' }), NOW)).toBeUndefined();
  });

  test('header names are case-insensitive', () => {
    expect(retryAfterMs(new Headers({ 'Retry-After': '4' }), NOW)).toBe(4000);
    expect(retryAfterMs(new Headers({ 'RETRY-AFTER-MS': '40' }), NOW)).toBe(40);
  });
});

describe('forwarding rules', () => {
  test('hop-by-hop, credentials, the gateway own and proxy headers never travel to a provider', () => {
    for (const name of ['Host', 'connection', 'Authorization', 'cookie', 'x-gateway-api-key', 'X-Gateway-Config', 'x-forwarded-for', 'forwarded', 'x-real-ip', 'content-length', 'proxy-authorization'])
      expect(isForwardable(name)).toBe(false);
    for (const name of ['content-type', 'accept', 'openai-beta', 'x-team', 'anthropic-version']) expect(isForwardable(name)).toBe(true);
  });

  test('passthroughHeaders keeps only forwardable client headers', () => {
    const out = passthroughHeaders(new Headers({ 'content-type': 'application/json', authorization: 'Bearer s', 'x-gateway-api-key': 'k', 'openai-beta': 'assistants=v2' }));
    expect(out).toEqual({ 'content-type': 'application/json', 'openai-beta': 'assistants=v2' });
  });

  test('forward_headers copies the named client headers (lower-cased), never the gateway own', () => {
    const into: Record<string, string> = { 'content-type': 'application/json' };
    forwardedHeaders(new Headers({ 'X-Team': 'blue', 'x-gateway-api-key': 'secret', 'x-forwarded-for': '1.2.3.4' }), ['X-Team', 'x-gateway-api-key', 'x-forwarded-for', 'x-absent'], into);
    expect(into).toEqual({ 'content-type': 'application/json', 'x-team': 'blue' });
    forwardedHeaders(new Headers({ a: '1' }), undefined, into);
    expect(into).toEqual({ 'content-type': 'application/json', 'x-team': 'blue' });
  });

  test('forward_headers sends Authorization only beside x-gateway-api-key: without it, it carried the gateway key', () => {
    const withKey: Record<string, string> = {};
    forwardedHeaders(new Headers({ authorization: 'Bearer sk-provider', 'x-gateway-api-key': 'gw' }), ['authorization'], withKey);
    expect(withKey).toEqual({ authorization: 'Bearer sk-provider' });
    const bearerOnly: Record<string, string> = {};
    forwardedHeaders(new Headers({ authorization: 'Bearer gw-key', 'x-team': 'blue' }), ['Authorization', 'x-team'], bearerOnly);
    expect(bearerOnly).toEqual({ 'x-team': 'blue' });
  });

  test('forward_headers sends x-api-key only beside x-gateway-api-key or Authorization: alone, it carried the gateway key', () => {
    const names = ['x-api-key', 'x-team'];
    const beside = (headers: Record<string, string>) => {
      const into: Record<string, string> = {};
      forwardedHeaders(new Headers(headers), names, into);
      return into;
    };
    expect(beside({ 'x-api-key': 'sk-ant', 'x-gateway-api-key': 'gw' })).toEqual({ 'x-api-key': 'sk-ant' });
    expect(beside({ 'x-api-key': 'sk-ant', authorization: 'Bearer gw' })).toEqual({ 'x-api-key': 'sk-ant' });
    expect(beside({ 'x-api-key': 'gw-key', 'x-team': 'blue' })).toEqual({ 'x-team': 'blue' });
  });

  test('relayedResponseHeaders drops hop-by-hop response headers only', () => {
    const out = relayedResponseHeaders(new Headers({ 'content-type': 'text/plain', connection: 'close', 'keep-alive': 'timeout=5', 'x-request-id': 'r1', 'content-encoding': 'gzip' }));
    expect(Object.fromEntries(out)).toEqual({ 'content-type': 'text/plain', 'x-request-id': 'r1', 'content-encoding': 'gzip' });
  });
});
