import { describe, expect, test } from 'bun:test';
import type { EndpointTranslator } from '@gateway/sdk';
import { asksUsageForClient, withUsageRequested } from './stream-usage.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

describe('asking an OpenAI-format provider for usage', () => {
  const openai: EndpointTranslator = { path: () => '/chat/completions', stream: { framing: 'sse', requestsUsage: true } };
  const stream = { model: 'm', stream: true, messages: [] };

  test('only for a stream, from a provider that says it can, whose client did not ask', () => {
    expect(asksUsageForClient(openai, stream)).toBe(true);
    expect(asksUsageForClient(openai, { ...stream, stream_options: { include_usage: false } })).toBe(true);
    expect(asksUsageForClient(openai, { ...stream, stream_options: { include_usage: true } })).toBe(false);
    expect(asksUsageForClient(openai, { ...stream, stream: false })).toBe(false);
    expect(asksUsageForClient({ path: () => '/x' }, stream)).toBe(false);
    expect(asksUsageForClient({ path: () => '/x', stream: { framing: 'sse', requestsUsage: true, toChunks: () => ({ chunks: [] }) } }, stream)).toBe(false);
  });

  test('the client’s bytes with the option spliced in after their opening brace, nothing else touched', () => {
    const raw = enc.encode(' {"model":"m",  "stream":true,"messages":[{"role":"user","content":"é \\u00e9"}]}');
    const out = withUsageRequested(JSON.parse(dec.decode(raw)), raw);
    expect(dec.decode(out as Uint8Array)).toBe(' {"stream_options":{"include_usage":true},"model":"m",  "stream":true,"messages":[{"role":"user","content":"é \\u00e9"}]}');
  });

  test('a body with stream options of its own is serialised with include_usage set and the others kept', () => {
    const body = { model: 'm', stream: true, stream_options: { include_usage: false, other: 1 } };
    expect(JSON.parse(withUsageRequested(body, enc.encode(JSON.stringify(body))) as string)).toEqual({ ...body, stream_options: { include_usage: true, other: 1 } });
    expect(JSON.parse(withUsageRequested({ model: 'm', stream: true }, undefined) as string)).toEqual({ model: 'm', stream: true, stream_options: { include_usage: true } });
  });
});
