import { describe, expect, test } from 'bun:test';
import { Errors } from '@gateway/sdk';
import { jsonRpcError, jsonRpcErrorMessage } from './json-rpc.ts';
import { stringsIn, textIn } from './tool-calls.ts';

describe('what guardrails judge of a tool call', () => {
  test('stringsIn: every string of the arguments, keys left out, one per line', () => {
    expect(stringsIn({ path: '/tmp', options: { recursive: true, names: ['a', 'b'] }, count: 3, query: 'rm -rf' })).toBe('/tmp\na\nb\nrm -rf');
    expect(stringsIn(undefined)).toBe('');
  });

  test('textIn: the strings under a text key (MCP content, A2A parts), nothing else', () => {
    const result = { content: [{ type: 'text', text: 'one' }, { type: 'image', data: 'aGk=' }, { type: 'resource', resource: { uri: 'x', text: 'two' } }] };
    expect(textIn(result)).toBe('one\ntwo');
    expect(textIn({ parts: [{ kind: 'text', text: 'hi' }], messageId: 'm-1' })).toBe('hi');
  });
});

describe('a gateway error as a JSON-RPC error', () => {
  test('the error object goes in data; 4xx is -32000, 5xx -32603; status and headers kept', async () => {
    const limited = Errors.rateLimitExceeded('slow down', { 'retry-after': '7' });
    expect(jsonRpcErrorMessage(limited, 3)).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32000, message: 'slow down', data: { message: 'slow down', type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null } },
    });
    const response = jsonRpcError(limited, 'a');
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(jsonRpcErrorMessage(Errors.upstreamInvalid('mcp x', 'too big'), undefined)).toMatchObject({ id: null, error: { code: -32603, data: { type: 'upstream_error', provider: 'mcp x' } } });
  });
});
