import { describe, expect, test } from 'bun:test';
import type { Attempt, GatewayRequest, JsonObject, ProviderAdapter, TargetConfig } from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import { canonicalJson, conversationOf, exactKey, keyHead, SEMANTIC_MAX_CHARS, scopeOf } from './key.ts';

function request(over: { workspaceId?: string; headers?: Record<string, string>; metadata?: Record<string, string>; endpoint?: GatewayRequest['endpoint'] } = {}): GatewayRequest {
  return buildGatewayRequest({ endpoint: over.endpoint, body: undefined, headers: over.headers ?? {}, metadata: over.metadata, caller: { workspaceId: over.workspaceId }, receivedAt: 0 });
}

function attempt(target: TargetConfig, body: JsonObject, providerId = 'openai'): Attempt {
  return { index: 'config', target, provider: { id: providerId } as ProviderAdapter, retry: 0, body };
}

const target: TargetConfig = { provider: 'openai', api_key: 'sk-secret-1', custom_host: 'http://127.0.0.1:1/v1', cache: { mode: 'simple' } };
const body: JsonObject = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], temperature: 0 };

function key(req: GatewayRequest, t: TargetConfig, b: JsonObject, providerId?: string): string {
  return exactKey(keyHead(req, attempt(t, b, providerId), scopeOf(req, t)), b);
}

describe('canonical JSON', () => {
  test('sorts keys at every depth and leaves undefined out', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } })).toBe('{"a":{"d":[1,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson({ b: 2, a: 1 })).toBe(canonicalJson({ a: 1, b: 2 }));
  });
});

describe('exact keys', () => {
  const base = key(request(), target, body);

  test('are 64 hex characters and hold no credential', () => {
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    expect(base).not.toContain('sk-secret');
  });

  test('ignore key order and the stream fields', () => {
    expect(key(request(), target, { temperature: 0, messages: [{ content: 'hi', role: 'user' }], model: 'gpt-4o-mini' })).toBe(base);
    expect(key(request(), target, { ...body, stream: true, stream_options: { include_usage: true } })).toBe(base);
  });

  test('differ by workspace, provider, model, host, credentials, body', () => {
    const others = [
      key(request({ workspaceId: 'ws-2' }), target, body),
      key(request(), target, body, 'groq'),
      key(request(), target, { ...body, model: 'gpt-4o' }),
      key(request(), { ...target, custom_host: 'http://127.0.0.1:2/v1' }, body),
      key(request(), { ...target, api_key: 'sk-secret-2' }, body),
      key(request(), target, { ...body, temperature: 1 }),
      key(request({ endpoint: 'complete' }), target, body),
    ];
    expect(new Set([base, ...others]).size).toBe(others.length + 1);
  });

  test('routing, resilience and hook settings of the target are not part of it', () => {
    expect(key(request(), { ...target, retry: { attempts: 2 }, weight: 3, name: 'x', request_timeout: 5, cache: { mode: 'simple', max_age: 5 } }, body)).toBe(base);
  });

  test('without a namespace, metadata and forwarded headers partition the cache', () => {
    expect(key(request({ metadata: { user: 'a' } }), target, body)).not.toBe(base);
    const fwd = { ...target, forward_headers: ['x-tenant'] };
    expect(key(request({ headers: { 'x-tenant': 'a' } }), fwd, body)).not.toBe(key(request({ headers: { 'x-tenant': 'b' } }), fwd, body));
    // headers that are not forwarded do not matter
    expect(key(request({ headers: { 'x-other': 'a' } }), target, body)).toBe(base);
  });

  test('a namespace partitions the cache and then metadata and forwarded headers are ignored', () => {
    const ns = (n: string, metadata: Record<string, string> = {}, h: Record<string, string> = {}) =>
      key(request({ headers: { 'x-gateway-cache-namespace': n, ...h }, metadata }), { ...target, forward_headers: ['x-tenant'] }, body);
    expect(ns('a')).not.toBe(ns('b'));
    expect(ns('a')).not.toBe(base);
    expect(ns('a', { user: 'x' }, { 'x-tenant': '1' })).toBe(ns('a', { user: 'y' }, { 'x-tenant': '2' }));
  });
});

describe('semantic partitions', () => {
  const head = keyHead(request(), attempt(target, body), scopeOf(request(), target));

  test('the texts are left out, the shape stays', () => {
    const a = conversationOf(head, 'chatComplete', { model: 'm', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is the capital of France?' }] });
    const b = conversationOf(head, 'chatComplete', { model: 'm', messages: [{ role: 'system', content: 'Be long.' }, { role: 'user', content: 'Bake bread?' }], stream: true });
    expect(a?.partition).toBe(b?.partition as string);
    expect(a?.texts).toEqual(['Be brief.', 'What is the capital of France?']);
    // another parameter, another role sequence or another message count: another partition
    expect(conversationOf(head, 'chatComplete', { model: 'm', temperature: 1, messages: [{ role: 'system', content: 'x' }, { role: 'user', content: 'y' }] })?.partition).not.toBe(a?.partition as string);
    expect(conversationOf(head, 'chatComplete', { model: 'm', messages: [{ role: 'user', content: 'x' }, { role: 'user', content: 'y' }] })?.partition).not.toBe(a?.partition as string);
    expect(conversationOf(head, 'chatComplete', { model: 'm', messages: [{ role: 'user', content: 'y' }] })?.partition).not.toBe(a?.partition as string);
  });

  test('text parts are compared, other parts must match exactly', () => {
    const img = (url: string, text: string): JsonObject => ({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text }, { type: 'image_url', image_url: { url } }] }],
    });
    const a = conversationOf(head, 'chatComplete', img('http://a/1.png', 'What is this?'));
    expect(a?.texts).toEqual(['What is this?']);
    expect(conversationOf(head, 'chatComplete', img('http://a/1.png', 'What is that?'))?.partition).toBe(a?.partition as string);
    expect(conversationOf(head, 'chatComplete', img('http://a/2.png', 'What is this?'))?.partition).not.toBe(a?.partition as string);
  });

  test('completions compare prompts; token prompts and embeddings have no conversation', () => {
    expect(conversationOf(head, 'complete', { model: 'm', prompt: 'Say hi' })?.texts).toEqual(['Say hi']);
    expect(conversationOf(head, 'complete', { model: 'm', prompt: [1, 2, 3] })).toBeUndefined();
    expect(conversationOf(head, 'embed', { model: 'm', input: 'x' })).toBeUndefined();
    expect(conversationOf(head, 'complete', { model: 'm', prompt: 'x'.repeat(SEMANTIC_MAX_CHARS + 1) })).toBeUndefined();
  });
});
