import { describe, expect, test } from 'bun:test';
import type { JsonObject, ProviderCall, TargetConfig, TranslateContext } from '@gateway/sdk';
import { applyKeyAuth, openAICompatible, targetKey } from './index.ts';

const ctx: TranslateContext = { endpoint: 'chatComplete', model: 'm', strictWireCompliance: true, now: 0 };
const call = (): ProviderCall => ({
  url: 'https://api.vendor.example/v1/chat/completions',
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-team': 'blue' },
  body: '{"model":"m"}',
});

describe('targetKey', () => {
  test('config api_key first, then Authorization with or without "Bearer "', () => {
    expect(targetKey({ api_key: 'k1', Authorization: 'Bearer k2' })).toBe('k1');
    expect(targetKey({ Authorization: 'Bearer k2' })).toBe('k2');
    expect(targetKey({ Authorization: 'bearer   k3' })).toBe('k3');
    expect(targetKey({ Authorization: 'raw-key' })).toBe('raw-key');
    expect(targetKey({})).toBeUndefined();
  });
});

describe('applyKeyAuth', () => {
  test('bearer sets Authorization', () => {
    expect(applyKeyAuth(call(), { kind: 'bearer' }, 'sk-1').headers).toEqual({
      'content-type': 'application/json',
      'x-team': 'blue',
      authorization: 'Bearer sk-1',
    });
  });

  test('a named header carries the key, with an optional prefix', () => {
    expect(applyKeyAuth(call(), { kind: 'header', name: 'api-key' }, 'sk-2').headers['api-key']).toBe('sk-2');
    const prefixed = applyKeyAuth(call(), { kind: 'header', name: 'x-api-key', prefix: 'Token ' }, 'sk-3');
    expect(prefixed.headers['x-api-key']).toBe('Token sk-3');
    expect(prefixed.headers.authorization).toBeUndefined();
  });

  test('none, or no key, leaves the call as it is', () => {
    const c = call();
    expect(applyKeyAuth(c, { kind: 'none' }, 'sk')).toBe(c);
    expect(applyKeyAuth(c, { kind: 'bearer' }, undefined)).toBe(c);
    expect(applyKeyAuth(c, { kind: 'header', name: 'api-key' }, '')).toBe(c);
  });

  test('never mutates the call it is given', () => {
    const c = call();
    const before = structuredClone(c);
    const out = applyKeyAuth(c, { kind: 'bearer' }, 'sk');
    expect(out).not.toBe(c);
    expect(out.headers).not.toBe(c.headers);
    expect(c).toEqual(before);
    expect(out.url).toBe(c.url);
    expect(out.body).toBe(c.body);
  });
});

describe('openAICompatible', () => {
  test('a vendor description becomes an adapter with OpenAI paths and no translation', () => {
    const adapter = openAICompatible({ id: 'acme', baseUrl: 'https://api.acme.example/v1' });
    expect(adapter.id).toBe('acme');
    expect(adapter.baseUrl({})).toBe('https://api.acme.example/v1');
    expect(Object.keys(adapter.endpoints).sort()).toEqual(['chatComplete', 'complete', 'embed', 'moderate']);
    const body: JsonObject = { model: 'm' };
    expect(adapter.endpoints.chatComplete?.path({}, body, ctx)).toBe('/chat/completions');
    expect(adapter.endpoints.complete?.path({}, body, ctx)).toBe('/completions');
    expect(adapter.endpoints.embed?.path({}, body, ctx)).toBe('/embeddings');
    expect(adapter.endpoints.moderate?.path({}, body, ctx)).toBe('/moderations');
    for (const endpoint of Object.values(adapter.endpoints)) {
      // answers pass through byte for byte: no request/response mapping, no stream translation
      expect(endpoint?.request).toBeUndefined();
      expect(endpoint?.response).toBeUndefined();
      expect(endpoint?.stream).toBeUndefined();
    }
    expect(adapter.error).toBeUndefined();
  });

  test('unsupported endpoints are removed, and only from that vendor', () => {
    const limited = openAICompatible({ id: 'lim', baseUrl: 'https://x/v1', unsupported: ['complete', 'moderate'] });
    expect(Object.keys(limited.endpoints).sort()).toEqual(['chatComplete', 'embed']);
    const embedOnly = openAICompatible({ id: 'emb', baseUrl: 'https://x/v1', unsupported: ['chatComplete', 'complete', 'moderate'] });
    expect(Object.keys(embedOnly.endpoints)).toEqual(['embed']);
    const full = openAICompatible({ id: 'full', baseUrl: 'https://x/v1' });
    expect(Object.keys(full.endpoints).sort()).toEqual(['chatComplete', 'complete', 'embed', 'moderate']);
  });

  test('the default auth is a bearer from the target key', async () => {
    const adapter = openAICompatible({ id: 'acme', baseUrl: 'https://x/v1' });
    const out = await adapter.authorize(call(), { api_key: 'sk-acme' });
    expect(out.headers.authorization).toBe('Bearer sk-acme');
    const fromAuthorization = await adapter.authorize(call(), { Authorization: 'Bearer sk-b' });
    expect(fromAuthorization.headers.authorization).toBe('Bearer sk-b');
    const noKey = await adapter.authorize(call(), {});
    expect(noKey.headers.authorization).toBeUndefined();
  });

  test('a header auth kind puts the key in that header and sends no Authorization', async () => {
    const adapter = openAICompatible({ id: 'hdr', baseUrl: 'https://x/v1', auth: { kind: 'header', name: 'api-key' } });
    const out = await adapter.authorize(call(), { api_key: 'k' });
    expect(out.headers['api-key']).toBe('k');
    expect(out.headers.authorization).toBeUndefined();
  });

  test('auth "none" sends no credential even when the target has a key', async () => {
    const adapter = openAICompatible({ id: 'local', baseUrl: 'http://localhost:11434/v1', auth: { kind: 'none' } });
    const out = await adapter.authorize(call(), { api_key: 'k' });
    expect(out.headers).toEqual(call().headers);
  });

  test('vendor headers are added per target, after the credential, without mutating the input', async () => {
    const adapter = openAICompatible({
      id: 'scoped',
      baseUrl: 'https://x/v1',
      headers: (target: TargetConfig): Record<string, string> =>
        target.svcD_organization ? { 'openai-organization': target.svcD_organization } : {},
    });
    const input = call();
    const before = structuredClone(input);
    const out = await adapter.authorize(input, { api_key: 'k', svcD_organization: 'org-1' });
    expect(out.headers).toEqual({ ...before.headers, authorization: 'Bearer k', 'openai-organization': 'org-1' });
    expect(input).toEqual(before);
  });

  test('a base URL may depend on the target', () => {
    const adapter = openAICompatible({ id: 'regional', baseUrl: (t) => `https://${String(t.svcA_region ?? 'us')}.vendor.example/v1` });
    expect(adapter.baseUrl({ svcA_region: 'eu' })).toBe('https://eu.vendor.example/v1');
    expect(adapter.baseUrl({})).toBe('https://us.vendor.example/v1');
  });
});

describe('streamOptions', () => {
  test('a vendor that honours stream_options has its streaming endpoints ask for usage; others do not', () => {
    const withOption = openAICompatible({ id: 'v', baseUrl: 'https://api.vendor.example/v1', streamOptions: true });
    expect(withOption.endpoints.chatComplete?.stream).toEqual({ framing: 'sse', requestsUsage: true });
    expect(withOption.endpoints.complete?.stream).toEqual({ framing: 'sse', requestsUsage: true });
    expect(withOption.endpoints.embed?.stream).toBeUndefined();
    expect(withOption.endpoints.chatComplete?.path({}, {}, ctx)).toBe('/chat/completions');
    const plain = openAICompatible({ id: 'w', baseUrl: 'https://api.vendor.example/v1' });
    expect(plain.endpoints.chatComplete?.stream).toBeUndefined();
    // Unsupported endpoints stay removed.
    expect(openAICompatible({ id: 'x', baseUrl: 'https://x.example/v1', streamOptions: true, unsupported: ['complete'] }).endpoints.complete).toBeUndefined();
  });
});
