/**
 * The adapter as the gateway uses it: authorization, endpoints, and whole calls through an in-process gateway to the
 * local Anthropic server (tests/providers/anthropic/server.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { ProviderCall } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../../../tests/helpers/in-process.ts';
import { type AnthropicTestServer, anthropicError, startAnthropicServer, THINKING_TEXT } from '../../../tests/providers/anthropic/server.ts';
import plugin, { ANTHROPIC_VERSION, anthropic, authorizeAnthropic, JSON_TOOL_NAME, toAnthropicRequest } from './index.ts';

/** An SSE answer sent in separate writes, a moment apart (as a real stream arrives). */
function slowly(...parts: string[]): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const part of parts) {
        controller.enqueue(encoder.encode(part));
        await Bun.sleep(5);
      }
      controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

const call = (): ProviderCall => ({ url: 'https://api.anthropic.com/v1/messages', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

describe('the adapter', () => {
  test('id, base URL, endpoints: chat completions, the model list, and Messages with its token count natively', () => {
    expect(anthropic.id).toBe('anthropic');
    expect(anthropic.baseUrl({})).toBe('https://api.anthropic.com/v1');
    expect(Object.keys(anthropic.endpoints).sort()).toEqual(['chatComplete', 'countTokens', 'listModels', 'messages']);
    // Native: a path only, so the core passes the call through (no request, response or stream translation).
    expect(anthropic.endpoints.messages).toEqual({ path: expect.any(Function) });
    expect(anthropic.endpoints.countTokens).toEqual({ path: expect.any(Function) });
    const ctx = { endpoint: 'chatComplete' as const, model: 'm', strictWireCompliance: true, now: 0 };
    expect(anthropic.endpoints.chatComplete?.path({}, {}, ctx)).toBe('/messages');
    expect(anthropic.endpoints.chatComplete?.stream?.framing).toBe('sse');
    expect(anthropic.endpoints.listModels?.path({}, {}, ctx)).toBe('/models?limit=1000');
    expect(anthropic.endpoints.messages?.path({}, {}, ctx)).toBe('/messages');
    expect(anthropic.endpoints.countTokens?.path({}, {}, ctx)).toBe('/messages/count_tokens');
    expect(typeof plugin.setup).toBe('function');
    expect(typeof toAnthropicRequest).toBe('function');
  });

  test('authorize: x-api-key from the target key and anthropic-version, never a bearer; the input is not changed', () => {
    const input = call();
    const before = structuredClone(input);
    const out = authorizeAnthropic(input, { Authorization: 'Bearer sk-ant-1' });
    expect(out.headers).toEqual({ 'content-type': 'application/json', 'x-api-key': 'sk-ant-1', 'anthropic-version': ANTHROPIC_VERSION });
    expect(input).toEqual(before);
    expect(authorizeAnthropic(call(), { api_key: 'sk-ant-2' }).headers['x-api-key']).toBe('sk-ant-2');
    expect(authorizeAnthropic(call(), {}).headers['x-api-key']).toBeUndefined();
  });

  test('a forwarded anthropic-version is kept; anthropic-beta is left to forward_headers', () => {
    const forwarded = { ...call(), headers: { 'anthropic-version': '2023-01-01', 'anthropic-beta': 'x' } };
    expect(authorizeAnthropic(forwarded, { api_key: 'k' }).headers).toEqual({ 'anthropic-version': '2023-01-01', 'anthropic-beta': 'x', 'x-api-key': 'k' });
    expect(authorizeAnthropic(call(), { api_key: 'k' }).headers['anthropic-beta']).toBeUndefined();
  });
});

describe('through the gateway', () => {
  let gateway: Gateway;
  let server: AnthropicTestServer;
  /** Answers that the protocol does not give, keyed by model name. */
  const special: Record<string, () => Response> = {
    'malformed-json': () => new Response('this is not json', { headers: { 'content-type': 'application/json' } }),
    'malformed-shape': () => Response.json({ hello: 'world' }),
    'stream-error': () =>
      slowly(
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_e","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n' +
          'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
          'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Partial"}}\n\n',
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
      ),
    'stream-cut': () =>
      new Response(
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_c","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n' +
          'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
        { headers: { 'content-type': 'text/event-stream' } },
      ),
    overloaded: () => anthropicError(529, 'overloaded_error', 'Overloaded'),
  };

  beforeAll(async () => {
    server = startAnthropicServer({ respond: (body) => special[String(body.model)]?.() });
    gateway = await startInProcessGateway();
  });
  afterAll(async () => {
    server?.stop();
    await gateway?.close();
  });

  const headers = (extra: Record<string, string> = {}) => ({
    'content-type': 'application/json',
    'x-gateway-api-key': TEST_ADMIN_KEY,
    'x-gateway-provider': 'anthropic',
    'x-gateway-custom-host': server.baseUrl,
    authorization: 'Bearer sk-ant-test',
    ...extra,
  });
  const chat = (body: object, extra?: Record<string, string>) =>
    gateway.handle(new Request('http://gateway.test/v1/chat/completions', { method: 'POST', headers: headers(extra), body: JSON.stringify(body) }));
  const lastRequest = () => server.requests[server.requests.length - 1] as AnthropicTestServer['requests'][number];

  test('the wire: POST /v1/messages with x-api-key and anthropic-version, the translated body, no bearer', async () => {
    const res = await chat({ model: 'claude-sonnet-4-5', messages: [{ role: 'system', content: 'Be brief' }, { role: 'user', content: 'Hi' }], max_tokens: 100 });
    expect(res.status).toBe(200);
    const sent = lastRequest();
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('sk-ant-test');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(JSON.parse(sent.body)).toEqual({
      model: 'claude-sonnet-4-5',
      system: [{ type: 'text', text: 'Be brief' }],
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 100,
    });
    const json = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(json.choices[0]?.message.content).toBe('System: Be brief | You said: Hi');
  });

  test('anthropic-beta reaches Anthropic only through forward_headers', async () => {
    await chat({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] }, { 'anthropic-beta': 'prompt-caching-2024-07-31' });
    expect(lastRequest().headers['anthropic-beta']).toBeUndefined();
    await chat(
      { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] },
      { 'anthropic-beta': 'prompt-caching-2024-07-31', 'x-gateway-forward-headers': 'anthropic-beta' },
    );
    expect(lastRequest().headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
  });

  test('a malformed answer (not JSON, or not a message) → 502 upstream_invalid_response', async () => {
    for (const model of ['malformed-json', 'malformed-shape']) {
      const res = await chat({ model, messages: [{ role: 'user', content: 'Hi' }] });
      expect(res.status).toBe(502);
      const body = (await res.json()) as { error: { code: string }; provider: string };
      expect(body.error.code).toBe('upstream_invalid_response');
      expect(body.provider).toBe('anthropic');
    }
  });

  test("a provider error keeps Anthropic's status, message and error type", async () => {
    const res = await chat({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }], temperature: 1.5 });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; type: string }; provider: string };
    expect(body.error.message).toContain('temperature');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.provider).toBe('anthropic');
    const overloaded = await chat({ model: 'overloaded', messages: [{ role: 'user', content: 'Hi' }] });
    expect(overloaded.status).toBe(529);
    expect(((await overloaded.json()) as { error: { message: string } }).error.message).toBe('Overloaded');
  });

  test('a request the gateway cannot translate is a 400 before any call', async () => {
    const before = server.requests.length;
    const res = await chat({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] });
    expect(res.status).toBe(400);
    expect(server.requests.length).toBe(before);
  });

  test('thinking, strict (default): not sent, nothing surfaced', async () => {
    const res = await chat({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }], thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(res.status).toBe(200);
    expect(JSON.parse(lastRequest().body).thinking).toBeUndefined();
    const json = (await res.json()) as { choices: { message: Record<string, unknown> }[] };
    expect(json.choices[0]?.message.reasoning_content).toBeUndefined();
    expect(json.choices[0]?.message.content).toBe('You said: Hi');
  });

  test('thinking, strict_wire_compliance false: sent, and surfaced as reasoning_content (whole and streamed)', async () => {
    const body = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }], thinking: { type: 'enabled', budget_tokens: 1024 } };
    const loose = { 'x-gateway-strict-wire-compliance': 'false' };
    const res = await chat(body, loose);
    expect(res.status).toBe(200);
    expect(JSON.parse(lastRequest().body).thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    const json = (await res.json()) as { choices: { message: Record<string, unknown> }[] };
    expect(json.choices[0]?.message.reasoning_content).toBe(THINKING_TEXT);
    expect(json.choices[0]?.message.content).toBe('You said: Hi');

    const streamed = await chat({ ...body, stream: true }, loose);
    const text = await streamed.text();
    const chunks = text
      .split('\n\n')
      .filter((f) => f.startsWith('data: {'))
      .map((f) => JSON.parse(f.slice(6)) as { choices: { delta: Record<string, string> }[] });
    const reasoning = chunks.map((c) => c.choices[0]?.delta.reasoning_content ?? '').join('');
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(reasoning).toBe(THINKING_TEXT);
    expect(content).toBe('You said: Hi');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  test('a stream: SSE frames, usage only with include_usage, [DONE] at the end', async () => {
    const body = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hello there' }], stream: true };
    const plain = await (await chat(body)).text();
    expect(plain.includes('"usage"')).toBe(false);
    expect(plain.endsWith('data: [DONE]\n\n')).toBe(true);
    const withUsage = await (await chat({ ...body, stream_options: { include_usage: true } })).text();
    const frames = withUsage.split('\n\n').filter(Boolean);
    expect(frames[frames.length - 1]).toBe('data: [DONE]');
    const usage = JSON.parse((frames[frames.length - 2] as string).slice(6)) as { choices: unknown[]; usage: Record<string, unknown> };
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toEqual({ prompt_tokens: 2, completion_tokens: 4, total_tokens: 6, prompt_tokens_details: { cached_tokens: 2 } });
    expect(JSON.parse(lastRequest().body).stream_options).toBeUndefined();
  });

  test('an error event in the stream ends it with an error frame carrying the message, and no [DONE]', async () => {
    const res = await chat({ model: 'stream-error', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"content":"Partial"');
    expect(text).not.toContain('[DONE]');
    const last = text.trim().split('\n\n').pop() as string;
    const frame = JSON.parse(last.slice(6)) as { error: { message: string; type: string }; provider: string };
    expect(frame.error.message).toBe('Overloaded');
    expect(frame.error.type).toBe('overloaded_error');
    expect(frame.provider).toBe('anthropic');
  });

  test('a stream cut before message_stop ends with an error frame, no [DONE]', async () => {
    const text = await (await chat({ model: 'stream-cut', messages: [{ role: 'user', content: 'Hi' }], stream: true })).text();
    expect(text).not.toContain('[DONE]');
    expect(text).toContain('stream_interrupted');
  });

  test('JSON mode reaches Anthropic as the forced json_response tool', async () => {
    const res = await chat({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Give JSON' }], response_format: { type: 'json_object' } });
    const sent = JSON.parse(lastRequest().body);
    expect(sent.tool_choice).toEqual({ type: 'tool', name: JSON_TOOL_NAME });
    const json = (await res.json()) as { choices: { message: { content: string; tool_calls?: unknown }; finish_reason: string }[] };
    expect(JSON.parse(json.choices[0]?.message.content ?? '')).toEqual({ answer: 'Give JSON' });
    expect(json.choices[0]?.message.tool_calls).toBeUndefined();
    expect(json.choices[0]?.finish_reason).toBe('stop');
  });

  test('GET /v1/models: Anthropic’s list in OpenAI’s shape', async () => {
    const res = await gateway.handle(new Request('http://gateway.test/v1/models', { headers: headers() }));
    expect(res.status).toBe(200);
    expect(lastRequest().path).toBe('/v1/models');
    expect(lastRequest().search).toBe('?limit=1000');
    expect(lastRequest().headers['x-api-key']).toBe('sk-ant-test');
    const json = (await res.json()) as { object: string; data: { id: string; object: string; owned_by: string; created: number }[] };
    expect(json.object).toBe('list');
    expect(json.data.map((m) => m.id)).toEqual(['claude-sonnet-4-5', 'claude-haiku-4-5']);
    expect(json.data[0]).toEqual({ id: 'claude-sonnet-4-5', object: 'model', created: 1759104000, owned_by: 'anthropic' });
  });

  test('embeddings are not offered', async () => {
    const res = await gateway.handle(
      new Request('http://gateway.test/v1/embeddings', { method: 'POST', headers: headers(), body: JSON.stringify({ model: 'x', input: 'a' }) }),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unsupported_endpoint');
  });
});
