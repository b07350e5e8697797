/** The local Anthropic server refuses what Anthropic refuses, in Anthropic's error shape, and answers by the protocol. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ERROR_MESSAGE } from '../../conformance/protocol.ts';
import { type AnthropicTestServer, JSON_TOOL, startAnthropicServer, validateMessagesBody } from './server.ts';

let server: AnthropicTestServer;
beforeAll(() => {
  server = startAnthropicServer();
});
afterAll(() => server?.stop());

const HEADERS = { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
const VALID = { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hello there' }] };

function post(body: unknown, headers: Record<string, string> = HEADERS) {
  return fetch(`${server.baseUrl}/messages`, { method: 'POST', headers, body: JSON.stringify(body) });
}

async function refusal(res: Response, status: number, type: string): Promise<string> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { type: string; error: { type: string; message: string } };
  expect(body.type).toBe('error');
  expect(body.error.type).toBe(type);
  return body.error.message;
}

describe('headers', () => {
  test('x-api-key is required (401 authentication_error)', async () => {
    const { 'x-api-key': _, ...rest } = HEADERS;
    expect(await refusal(await post(VALID, rest), 401, 'authentication_error')).toContain('x-api-key');
    // a bearer token is not Anthropic's API key header
    expect(await refusal(await post(VALID, { ...rest, authorization: 'Bearer sk' }), 401, 'authentication_error')).toContain('x-api-key');
  });

  test('anthropic-version is required and must be a known version', async () => {
    const { 'anthropic-version': _, ...rest } = HEADERS;
    expect(await refusal(await post(VALID, rest), 400, 'invalid_request_error')).toContain('anthropic-version');
    expect(await refusal(await post(VALID, { ...HEADERS, 'anthropic-version': '2099-01-01' }), 400, 'invalid_request_error')).toContain('anthropic-version');
  });
});

describe('body', () => {
  test('max_tokens is required', async () => {
    const { max_tokens: _, ...rest } = VALID;
    expect(await refusal(await post(rest), 400, 'invalid_request_error')).toBe('max_tokens: Field required');
  });

  test('unknown top-level fields are refused (OpenAI-only fields would be)', async () => {
    for (const field of ['stream_options', 'n', 'seed', 'response_format', 'user', 'max_completion_tokens', 'stop'])
      expect(await refusal(await post({ ...VALID, [field]: 1 }), 400, 'invalid_request_error')).toBe(`${field}: Extra inputs are not permitted`);
  });

  test('message and block rules', () => {
    const v = (extra: object) => validateMessagesBody({ ...VALID, ...extra });
    expect(v({})).toBeUndefined();
    expect(v({ messages: [{ role: 'system', content: 'x' }] })).toContain("'user' or 'assistant'");
    expect(v({ messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] })).toContain('non-empty');
    expect(v({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'AA' } }] }] })).toContain('media_type');
    expect(v({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }] })).toBeUndefined();
    expect(v({ messages: [{ role: 'user', content: 'x', name: 'bob' }] })).toContain('Extra inputs');
    expect(v({ system: [{ type: 'image' }] })).toContain('system.0');
    expect(v({ temperature: 1.5 })).toContain('temperature');
    expect(v({ metadata: { user_id: 'u', other: 1 } })).toContain('metadata.other');
    expect(v({ tools: [{ name: 'f', input_schema: { type: 'object' }, strict: true }] })).toContain('tools.0.strict');
    expect(v({ tools: [{ name: 'f', input_schema: { type: 'string' } }] })).toContain('input_schema');
    expect(v({ tools: [{ name: 'f', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 'g' } })).toContain("'g' not found");
    expect(v({ tool_choice: { type: 'required' } })).toContain('tool_choice.type');
    expect(v({ thinking: { type: 'enabled', budget_tokens: 500 } })).toContain('budget_tokens');
    expect(v({ thinking: { type: 'enabled', budget_tokens: 2000 } })).toContain('max_tokens');
  });

  test('tool_use must be answered by tool_result blocks in the next user message, and only those', () => {
    const use = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] };
    const tools = [{ name: 'f', input_schema: { type: 'object' } }];
    expect(validateMessagesBody({ ...VALID, tools, messages: [{ role: 'user', content: 'q' }, use, { role: 'user', content: 'no result' }] })).toContain('without `tool_result`');
    expect(
      validateMessagesBody({ ...VALID, tools, messages: [{ role: 'user', content: 'q' }, use, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'x' }] }] }),
    ).toContain('toolu_1');
    expect(
      validateMessagesBody({ ...VALID, tools, messages: [{ role: 'user', content: 'q' }, use, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] }] }),
    ).toBeUndefined();
  });
});

describe('answers', () => {
  test('a message in Anthropic shape, with usage counting 2 cached input tokens', async () => {
    const res = await post(VALID);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      id: 'msg_conformance',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'You said: Hello there' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 2, output_tokens: 4 },
    });
  });

  test('the conformance error model answers 400 in Anthropic shape', async () => {
    expect(await refusal(await post({ ...VALID, model: 'conformance-error' }), 400, 'invalid_request_error')).toBe(ERROR_MESSAGE);
  });

  test('JSON mode is the forced json_response tool, answered as a call of it', async () => {
    const res = await post({
      ...VALID,
      messages: [{ role: 'user', content: 'Give JSON' }],
      tools: [{ name: JSON_TOOL, input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: JSON_TOOL },
    });
    const body = (await res.json()) as { content: unknown[]; stop_reason: string };
    expect(body.content).toEqual([{ type: 'tool_use', id: 'toolu_conformance_json', name: JSON_TOOL, input: { answer: 'Give JSON' } }]);
    expect(body.stop_reason).toBe('tool_use');
  });

  test('a stream of named events in order, ending with message_stop', async () => {
    const res = await post({ ...VALID, stream: true });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    const names = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(names[0]).toBe('message_start');
    expect(names[1]).toBe('ping');
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    for (const frame of text.trim().split('\n\n')) {
      const [event, data] = frame.split('\n');
      expect(JSON.parse((data as string).slice(6)).type).toBe((event as string).slice(7));
    }
  });

  test('GET /v1/models lists models in Anthropic shape', async () => {
    const res = await fetch(`${server.baseUrl}/models`, { headers: HEADERS });
    const body = (await res.json()) as { data: { type: string; id: string }[]; has_more: boolean };
    expect(body.has_more).toBe(false);
    expect(body.data.every((m) => m.type === 'model')).toBe(true);
  });

  test('an unknown path is a not_found_error', async () => {
    await refusal(await fetch(`${server.baseUrl}/embeddings`, { method: 'POST', headers: HEADERS, body: '{}' }), 404, 'not_found_error');
  });
});
