import { describe, expect, test } from 'bun:test';
import { isSecretName, MAX_VALUE_CHARS, REDACTED, redact } from './redact.ts';

describe('secret-looking field names', () => {
  test.each([
    'key',
    'api_key',
    'apiKey',
    'x-gateway-api-key',
    'secret',
    'client_secret',
    'pending_secret',
    'token',
    'access_token',
    'refreshToken',
    'password',
    'db_password',
    'hash',
    'previous_hash',
    'credentials',
    'aws_credentials_json',
    'authorization',
    'Authorization',
    'privateKey',
    'API_KEY',
  ])('%s is redacted', (name) => expect(isSecretName(name)).toBe(true));

  test.each(['api_key_id', 'key_type', 'prefix_hint', 'token_count', 'secret_id', 'name', 'scopes', 'key_transition_period_ms', 'max_tokens', 'workspace_id'])(
    '%s is kept',
    (name) => expect(isSecretName(name)).toBe(false),
  );
});

describe('redact', () => {
  test('replaces secret values at any depth, in arrays too, and keeps the rest', () => {
    const value = {
      id: 'k1',
      name: 'prod',
      api_key: 'sk-live-123',
      scopes: ['a', 'b'],
      config: { provider: 'openai', credentials: { user: 'u', pass: 'p' }, headers: { authorization: 'Bearer x' } },
      targets: [{ virtual_key: 'vk-1', weight: 1 }],
      nothing: null,
      secret: null,
    };
    expect(redact(value)).toEqual({
      id: 'k1',
      name: 'prod',
      api_key: REDACTED,
      scopes: ['a', 'b'],
      config: { provider: 'openai', credentials: REDACTED, headers: { authorization: REDACTED } },
      targets: [{ virtual_key: REDACTED, weight: 1 }],
      nothing: null,
      secret: null,
    });
    expect(JSON.stringify(redact(value))).not.toContain('sk-live-123');
  });

  test('turns the value into plain JSON: dates as ISO, no functions or undefined, cycles cut', () => {
    const cyclic: Record<string, unknown> = { a: 1, when: new Date(0), fn: () => 1, gone: undefined, big: 10n, nan: Number.NaN };
    cyclic.self = cyclic;
    expect(redact(cyclic)).toEqual({ a: 1, when: '1970-01-01T00:00:00.000Z', big: '10', nan: null, self: '[…]' });
    expect(redact(undefined)).toBeNull();
    expect(redact('text')).toBe('text');
  });

  test('a very large value is replaced by a note of its size', () => {
    const huge = { body: 'x'.repeat(MAX_VALUE_CHARS + 10) };
    expect(redact(huge)).toEqual({ truncated: true, chars: JSON.stringify(huge).length });
  });
});
