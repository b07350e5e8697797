import { describe, expect, test } from 'bun:test';
import { anthropicErrorInfo, anthropicStreamError, statusOfErrorType } from './errors.ts';

describe('anthropicErrorInfo', () => {
  test("Anthropic's error body: the message and error type are kept", () => {
    expect(
      anthropicErrorInfo({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' }, request_id: 'req_1' }, 400),
    ).toEqual({ message: 'max_tokens: Field required', type: 'invalid_request_error', code: null, param: null });
  });

  test('a bare message is still a message; anything else is not an Anthropic error', () => {
    expect(anthropicErrorInfo({ message: 'Forbidden' }, 403)).toEqual({ message: 'Forbidden', type: undefined });
    expect(anthropicErrorInfo({ error: 'x' }, 500)).toBeUndefined();
    expect(anthropicErrorInfo('text', 500)).toBeUndefined();
    expect(anthropicErrorInfo(null, 500)).toBeUndefined();
  });
});

describe('statusOfErrorType', () => {
  test("Anthropic's documented statuses", () => {
    expect(statusOfErrorType('invalid_request_error')).toBe(400);
    expect(statusOfErrorType('authentication_error')).toBe(401);
    expect(statusOfErrorType('permission_error')).toBe(403);
    expect(statusOfErrorType('not_found_error')).toBe(404);
    expect(statusOfErrorType('request_too_large')).toBe(413);
    expect(statusOfErrorType('rate_limit_error')).toBe(429);
    expect(statusOfErrorType('api_error')).toBe(500);
    expect(statusOfErrorType('overloaded_error')).toBe(529);
    expect(statusOfErrorType('new_kind')).toBe(500);
    expect(statusOfErrorType(undefined)).toBe(500);
  });
});

describe('anthropicStreamError', () => {
  test('a stream error event becomes a relayed provider error', () => {
    const err = anthropicStreamError({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } });
    expect(err.status).toBe(429);
    expect(err.retryable).toBe(true);
    expect(err.toBody()).toEqual({ error: { message: 'slow down', type: 'rate_limit_error', code: 'provider_error', param: null }, provider: 'anthropic' });
  });

  test('an error event without a readable body still says what happened', () => {
    expect(anthropicStreamError({ type: 'error' }).message).toContain('error event');
  });
});
