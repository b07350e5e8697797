import { describe, expect, test } from 'bun:test';
import { GatewayError } from '@gateway/sdk';
import { isJsonObject, validateBody, type BodyEndpoint } from './index.ts';
import { rejection } from './test-support.ts';

const ENDPOINTS: readonly BodyEndpoint[] = ['chatComplete', 'complete', 'embed', 'moderate'];

describe('validateBody', () => {
  test('a body that is not a JSON object is a 400 on every endpoint', () => {
    for (const endpoint of ENDPOINTS) {
      for (const body of [null, undefined, [], [{}], 'text', 42, true]) {
        expect(rejection(endpoint, body)).toEqual({
          status: 400,
          code: 'invalid_request',
          param: null,
          message: 'body: must be a JSON object',
        });
      }
    }
  });

  test('the error is a GatewayError with the documented body', () => {
    let thrown: unknown;
    try {
      validateBody('chatComplete', { messages: [] });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GatewayError);
    expect((thrown as GatewayError).toBody()).toEqual({
      error: {
        message: 'messages: must contain at least 1 item',
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'messages',
      },
    });
  });

  test('only the first violation is reported, in schema order', () => {
    const result = rejection('chatComplete', { temperature: 9, messages: [], top_p: 7 });
    expect(result?.param).toBe('messages');
  });

  test('cross-field rules run only once the schema passed', () => {
    expect(rejection('chatComplete', { messages: [{ role: 'user' }], top_logprobs: 50 })?.message).toBe(
      'top_logprobs: must be <= 20',
    );
  });

  test('the body is neither changed nor given defaults', () => {
    const body = { messages: [{ role: 'user', content: 'x' }], extra: { deep: [1] } };
    const before = JSON.stringify(body);
    validateBody('chatComplete', body);
    expect(JSON.stringify(body)).toBe(before);
  });

  test('own __proto__ keys from JSON.parse are plain unknown fields', () => {
    const body: unknown = JSON.parse('{"messages":[{"role":"user","__proto__":{"role":5}}],"__proto__":{"x":1}}');
    expect(rejection('chatComplete', body)).toBeUndefined();
    const missing: unknown = JSON.parse('{"messages":[{"__proto__":{"role":"user"}}]}');
    expect(rejection('chatComplete', missing)?.param).toBe('messages[0].role');
  });

  test('an endpoint without a schema is a programming error, not a 400', () => {
    let thrown: unknown;
    try {
      validateBody('proxy' as BodyEndpoint, {});
    } catch (error) {
      thrown = error;
    }
    expect((thrown as GatewayError).status).toBe(500);
  });
});

describe('isJsonObject', () => {
  test('accepts objects, refuses null, arrays and primitives', () => {
    expect(isJsonObject({})).toBe(true);
    expect(isJsonObject(Object.create(null))).toBe(true);
    for (const value of [null, undefined, [], '{}', 1, false]) expect(isJsonObject(value)).toBe(false);
  });
});
