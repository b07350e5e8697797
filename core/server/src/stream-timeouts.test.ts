// The headers of issue #15's stream time limits, read like x-gateway-request-timeout (docs/streaming.md).
import { describe, expect, test } from 'bun:test';
import { resolveConfig } from './resolve.ts';

describe('x-gateway-first-token-timeout and x-gateway-stream-idle-timeout', () => {
  test('set first_token_timeout and stream_idle_timeout where the config is silent', () => {
    expect(
      resolveConfig({ 'x-gateway-provider': 'openai', authorization: 'Bearer sk', 'x-gateway-api-key': 'gw', 'x-gateway-first-token-timeout': '500', 'x-gateway-stream-idle-timeout': '2000' }),
    ).toEqual({ provider: 'openai', api_key: 'sk', first_token_timeout: 500, stream_idle_timeout: 2000 });
  });

  test('a value that is not a positive integer is a 400 naming the header', () => {
    for (const [header, value] of [
      ['x-gateway-first-token-timeout', '0'],
      ['x-gateway-first-token-timeout', 'soon'],
      ['x-gateway-stream-idle-timeout', '1.5'],
      ['x-gateway-stream-idle-timeout', '-3'],
    ] as const) {
      let caught: unknown;
      try {
        resolveConfig({ 'x-gateway-provider': 'openai', [header]: value });
      } catch (error) {
        caught = error;
      }
      expect(caught).toMatchObject({ status: 400, param: header });
    }
  });
});
