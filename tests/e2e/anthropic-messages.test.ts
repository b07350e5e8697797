/**
 * Issue #25, item 2: Anthropic's Messages API for every provider, through the real Anthropic SDK over HTTP, with
 * both base URL forms (`http://host` — the SDK then calls /v1/messages — and `http://host/v1`, for which it calls
 * /v1/v1/messages). Against the local OpenAI server and the local Gemini server the gateway translates Messages to
 * chat completions and back (whole answers, streams, a tool_use round trip, errors in Anthropic's shape, the
 * count_tokens estimate); against the local Anthropic server it passes the call through untouched.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import Anthropic from '@anthropic-ai/sdk';
import { RequestLogServices } from '@gateway/plugin-request-log';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { type AnthropicTestServer, startAnthropicServer } from '../providers/anthropic/server.ts';
import { THOUGHT_TEXT } from '../providers/google/gemini-wire.ts';
import { GEMINI_KEY, type GeminiTestServer, startGeminiServer } from '../providers/google/server.ts';

const OPENAI_KEY = 'sk-openai-provider-key';
const ANTHROPIC_KEY = 'sk-ant-provider-key';
const T = 20_000;

let gateway: Gateway;
let server: ReturnType<typeof Bun.serve>;
let openai: OpenAIMock;
let gemini: GeminiTestServer;
let claude: AnthropicTestServer;
let origin: string;

beforeAll(async () => {
  gateway = await startInProcessGateway();
  server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => gateway.handle(request) });
  origin = `http://127.0.0.1:${server.port}`;
  openai = await startOpenAIMock({ apiKey: OPENAI_KEY });
  gemini = startGeminiServer();
  claude = startAnthropicServer();
});
afterAll(async () => {
  server?.stop(true);
  await openai?.stop();
  gemini?.stop();
  await claude?.stop();
  await gateway?.close();
});

type Target = 'openai' | 'google' | 'anthropic';

/** The Anthropic SDK at the gateway, routed to a local provider server; the provider key goes as the bearer token. */
function sdk(target: Target, baseURL: string, headers: Record<string, string> = {}): Anthropic {
  const route: Record<Target, { host: string; key: string }> = {
    openai: { host: openai.url, key: OPENAI_KEY },
    google: { host: gemini.baseUrl, key: GEMINI_KEY },
    anthropic: { host: claude.baseUrl, key: ANTHROPIC_KEY },
  };
  // The local Anthropic server knows the versions of its time; the SDK's own is newer.
  const version: Record<string, string> = target === 'anthropic' ? { 'anthropic-version': '2023-06-01' } : {};
  return new Anthropic({
    baseURL,
    apiKey: null,
    authToken: route[target].key,
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-provider': target, 'x-gateway-custom-host': route[target].host, ...version, ...headers },
  });
}

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'The weather of a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

/** The JSON body of the n-th request a server received. */
const sent = (requests: { body: string }[], n: number) => JSON.parse(requests[n]?.body ?? 'null') as Record<string, unknown>;

const BASES = [
  ['without /v1', () => origin],
  ['with /v1', () => `${origin}/v1`],
] as const;

describe.each(BASES)('base URL %s', (_, base) => {
  describe('the OpenAI-compatible server (translated)', () => {
    test('a whole answer: the chat request sent, the Messages answer returned', async () => {
      const before = openai.requests.length;
      const message = await sdk('openai', base()).messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 100,
        system: 'Be brief',
        // Older clients send sampling fields that this SDK version no longer types.
        ...({ temperature: 0.5 } as object),
        stop_sequences: ['THE END'],
        metadata: { user_id: 'user-7' },
        messages: [{ role: 'user', content: 'Hello there friend' }],
      });
      expect(openai.requests[before]?.path).toBe('/v1/chat/completions');
      expect(openai.requests[before]?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
      expect(sent(openai.requests, before)).toEqual({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'Be brief' },
          { role: 'user', content: 'Hello there friend' },
        ],
        max_tokens: 100,
        stop: ['THE END'],
        temperature: 0.5,
        user: 'user-7',
      });
      expect(message).toMatchObject({
        type: 'message',
        role: 'assistant',
        model: 'gpt-4o-mini',
        content: [{ type: 'text', text: 'You said: Hello there friend' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        // The mock counts words: 5 in, 5 out.
        usage: { input_tokens: 5, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      });
      expect(message.id).toStartWith('msg_chatcmpl-');
    }, T);

    test('a stream: the events the SDK expects, in order, and the final message', async () => {
      const stream = sdk('openai', base()).messages.stream({ model: 'gpt-4o-mini', max_tokens: 100, messages: [{ role: 'user', content: 'Stream this please' }] });
      const events: string[] = [];
      const texts: string[] = [];
      for await (const event of stream) {
        events.push(event.type);
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') texts.push(event.delta.text);
      }
      expect(events).toEqual([
        'message_start',
        'content_block_start',
        ...texts.map(() => 'content_block_delta'),
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      expect(texts).toEqual(['You', ' said:', ' Stream', ' this', ' please']);
      const final = await stream.finalMessage();
      expect(final.content).toEqual([{ type: 'text', text: 'You said: Stream this please' }] as never);
      expect(final.stop_reason).toBe('end_turn');
      expect(final.usage).toMatchObject({ input_tokens: 3, output_tokens: 5 });
      // The chat request asked for usage, whatever the client did: message_delta carries it.
      expect(sent(openai.requests, openai.requests.length - 1)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    }, T);

    test('the stream on the wire: named events (ping included) whose data repeat the name', async () => {
      const res = await fetch(`${base()}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url, authorization: `Bearer ${OPENAI_KEY}` },
        body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 20, stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toStartWith('text/event-stream');
      const frames = (await res.text()).split('\n\n').filter(Boolean);
      const names = frames.map((frame) => {
        const [event, data] = frame.split('\n');
        const name = event?.replace(/^event: /, '') ?? '';
        expect(JSON.parse(data?.replace(/^data: /, '') ?? '').type).toBe(name);
        return name;
      });
      expect(names).toEqual([
        'message_start',
        'ping',
        'content_block_start',
        'content_block_delta', // "You", " said:", " Hi"
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      expect(JSON.parse(frames[7]?.split('\n')[1]?.slice(6) ?? '')).toEqual({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { input_tokens: 1, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      });
    }, T);

    test('asked to stream, answered whole (a server that ignores stream): the SDK still gets its events', async () => {
      openai.enqueue({
        kind: 'respond',
        body: {
          id: 'chatcmpl-whole',
          object: 'chat.completion',
          created: 1,
          model: 'gpt-4o-mini',
          choices: [{ index: 0, message: { role: 'assistant', content: 'All at once' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
        },
      });
      const stream = sdk('openai', base()).messages.stream({ model: 'gpt-4o-mini', max_tokens: 20, messages: [{ role: 'user', content: 'Hi there' }] });
      const texts: string[] = [];
      stream.on('text', (delta) => texts.push(delta));
      const final = await stream.finalMessage();
      expect(texts).toEqual(['All at once']);
      expect(final).toMatchObject({ id: 'msg_chatcmpl-whole', content: [{ type: 'text', text: 'All at once' }], stop_reason: 'end_turn', usage: { input_tokens: 2, output_tokens: 3 } });
    }, T);

    test('a tool_use round trip, whole and streamed', async () => {
      const client = sdk('openai', base());
      const ask = { role: 'user' as const, content: 'What is the weather in Paris?' };
      // The mock calls a forced tool with {"text": <last user text>}.
      const first = await client.messages.create({ model: 'gpt-4o-mini', max_tokens: 100, tools: [WEATHER_TOOL], tool_choice: { type: 'tool', name: 'get_weather' }, messages: [ask] });
      expect(first.stop_reason).toBe('tool_use');
      expect(first.content).toHaveLength(1);
      const call = first.content[0];
      if (call?.type !== 'tool_use') throw new Error(`expected a tool_use block, got ${JSON.stringify(call)}`);
      expect(call).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { text: 'What is the weather in Paris?' } });
      expect(sent(openai.requests, openai.requests.length - 1)).toMatchObject({
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'The weather of a city', parameters: WEATHER_TOOL.input_schema } }],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
      });

      const streamed = await client.messages
        .stream({ model: 'gpt-4o-mini', max_tokens: 100, tools: [WEATHER_TOOL], tool_choice: { type: 'any' }, messages: [ask] })
        .finalMessage();
      expect(streamed.stop_reason).toBe('tool_use');
      expect(streamed.content).toMatchObject([{ type: 'tool_use', name: 'get_weather', input: { text: 'What is the weather in Paris?' } }]);

      const before = openai.requests.length;
      const second = await client.messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 100,
        tools: [WEATHER_TOOL],
        messages: [ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny, 21C' }] }],
      });
      expect(sent(openai.requests, before).messages).toEqual([
        { role: 'user', content: 'What is the weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ type: 'function', id: call.id, function: { name: 'get_weather', arguments: '{"text":"What is the weather in Paris?"}' } }] },
        { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21C' },
      ]);
      // The mock echoes the last user turn.
      expect(second.content).toEqual([{ type: 'text', text: 'You said: What is the weather in Paris?' }] as never);
      expect(second.stop_reason).toBe('end_turn');
    }, T);

    test("errors in Anthropic's shape: the provider's, the gateway's, and what cannot be translated", async () => {
      const client = sdk('openai', base());
      const notFound = await client.messages.create({ model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(notFound).toBeInstanceOf(Anthropic.NotFoundError);
      expect((notFound as InstanceType<typeof Anthropic.NotFoundError>).error).toEqual({
        type: 'error',
        error: { type: 'not_found_error', message: 'The model `no-such-model` does not exist or you do not have access to it.' },
        provider: 'openai', // the gateway's extra property, kept
      });

      const unauthenticated = await sdk('openai', base(), { 'x-gateway-api-key': 'wrong-key' })
        .messages.create({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(unauthenticated).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((unauthenticated as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });

      const serverTool = await client.messages
        .create({ model: 'gpt-4o-mini', max_tokens: 5, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(serverTool).toBeInstanceOf(Anthropic.BadRequestError);
      expect((serverTool as InstanceType<typeof Anthropic.BadRequestError>).error).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'tools[0]: only client tools (name, description, input_schema) can be translated for this provider' },
      });

      // Checked before routing: max_tokens is required by the Messages API.
      const res = await fetch(`${base()}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: is required' } });
    }, T);

    test('thinking to an OpenAI-speaking server: reasoning_effort, and max_completion_tokens as its reasoning models need', async () => {
      await sdk('openai', base()).messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 20000,
        thinking: { type: 'enabled', budget_tokens: 16385 },
        messages: [{ role: 'user', content: 'Reason' }],
      });
      const body = sent(openai.requests, openai.requests.length - 1);
      expect(body).toMatchObject({ reasoning_effort: 'high', max_completion_tokens: 20000 });
      expect(body.thinking).toBeUndefined();
      expect(body.max_tokens).toBeUndefined();
    }, T);

    test('count_tokens: an estimate, marked as one, without calling the provider', async () => {
      const before = openai.requests.length;
      const { data, response } = await sdk('openai', base())
        .messages.countTokens({ model: 'gpt-4o-mini', system: 'Be brief', messages: [{ role: 'user', content: 'Hello there friend' }] })
        .withResponse();
      // ceil((8 + 18) / 4) characters of system and message text.
      expect(data).toEqual({ input_tokens: 7 });
      expect(response.headers.get('x-gateway-token-count')).toBe('estimate');
      expect(openai.requests.length).toBe(before);
    }, T);
  });

  describe('the Gemini server (translated by the google adapter)', () => {
    test('a whole answer and a stream', async () => {
      const client = sdk('google', base());
      const message = await client.messages.create({ model: 'gemini-2.5-flash', max_tokens: 50, system: 'Sys', messages: [{ role: 'user', content: 'Hello there' }] });
      expect(gemini.requests.at(-1)?.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
      expect(message.content).toEqual([{ type: 'text', text: 'System: Sys | You said: Hello there' }] as never);
      expect(message.stop_reason).toBe('end_turn');
      // The protocol counts words ("Sys Hello there" in, 7 words out), 2 of the input read from Gemini's cache.
      expect(message.usage).toEqual({ input_tokens: 1, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 2 } as never);

      const stream = client.messages.stream({ model: 'gemini-2.5-flash', max_tokens: 50, messages: [{ role: 'user', content: 'Stream please' }] });
      const pieces: string[] = [];
      stream.on('text', (delta) => pieces.push(delta));
      const final = await stream.finalMessage();
      expect(gemini.requests.at(-1)?.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
      expect(pieces.length).toBeGreaterThan(1); // the server streams pieces of at most 8 characters
      expect(pieces.join('')).toBe('You said: Stream please');
      expect(final.content).toEqual([{ type: 'text', text: 'You said: Stream please' }] as never);
      expect(final.usage).toMatchObject({ input_tokens: 0, output_tokens: 4, cache_read_input_tokens: 2 });
    }, T);

    test('thinking: the budget reaches Gemini, its thoughts come back as a thinking block (whole and streamed)', async () => {
      // Gemini's thought summaries are surfaced only where the config allows extra reasoning output.
      const client = sdk('google', base(), { 'x-gateway-strict-wire-compliance': 'false' });
      const params = { model: 'gemini-2.5-flash', max_tokens: 2048, thinking: { type: 'enabled' as const, budget_tokens: 1024 }, messages: [{ role: 'user' as const, content: 'Think first' }] };
      const message = await client.messages.create(params);
      expect(sent(gemini.requests, gemini.requests.length - 1).generationConfig).toMatchObject({ thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });
      expect(message.content).toEqual([
        { type: 'thinking', thinking: THOUGHT_TEXT, signature: '' },
        { type: 'text', text: 'You said: Think first' },
      ] as never);

      const stream = client.messages.stream(params);
      const deltas: string[] = [];
      stream.on('streamEvent', (event) => {
        if (event.type === 'content_block_delta') deltas.push(event.delta.type);
      });
      const final = await stream.finalMessage();
      expect(final.content).toMatchObject([{ type: 'thinking', thinking: THOUGHT_TEXT }, { type: 'text', text: 'You said: Think first' }]);
      expect(deltas[0]).toBe('thinking_delta');
      expect(deltas.at(-1)).toBe('text_delta');
    }, T);

    test('a tool_use round trip, streamed', async () => {
      const client = sdk('google', base());
      const ask = { role: 'user' as const, content: 'What is the weather like?' };
      const events: string[] = [];
      const stream = client.messages.stream({ model: 'gemini-2.5-flash', max_tokens: 50, tools: [WEATHER_TOOL], messages: [ask] });
      const json: string[] = [];
      stream.on('streamEvent', (event) => {
        events.push(event.type === 'content_block_delta' ? `delta:${event.delta.type}` : event.type);
        if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') json.push(event.delta.partial_json);
      });
      const first = await stream.finalMessage();
      expect(first.stop_reason).toBe('tool_use');
      const call = first.content[0];
      if (call?.type !== 'tool_use') throw new Error(`expected a tool_use block, got ${JSON.stringify(call)}`);
      expect(call).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
      expect(json.join('')).toBe('{"city":"Paris"}');
      expect(events[0]).toBe('message_start');
      expect(events.slice(1, -2)).toEqual(['content_block_start', ...json.map(() => 'delta:input_json_delta'), 'content_block_stop']);
      expect(events.slice(-2)).toEqual(['message_delta', 'message_stop']);

      const second = await client.messages.create({
        model: 'gemini-2.5-flash',
        max_tokens: 50,
        tools: [WEATHER_TOOL],
        messages: [ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny' }] }],
      });
      const body = sent(gemini.requests, gemini.requests.length - 1);
      expect(body.contents).toMatchObject([
        { role: 'user', parts: [{ text: 'What is the weather like?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather' } }] },
      ]);
      expect(second.content).toEqual([{ type: 'text', text: 'Tool said: Sunny' }] as never);
    }, T);
  });

  describe('the Anthropic server (native: passed through untouched)', () => {
    test('whole and streamed answers come back as the provider sent them; the body goes as the client sent it', async () => {
      const client = sdk('anthropic', base());
      const before = claude.requests.length;
      const params = { model: 'claude-haiku-4-5', max_tokens: 50, system: 'Sys', messages: [{ role: 'user' as const, content: 'Hello there' }] };
      const message = await client.messages.create(params);
      const received = claude.requests[before];
      expect(received?.path).toBe('/v1/messages');
      expect(received?.headers['x-api-key']).toBe(ANTHROPIC_KEY);
      expect(received?.headers['anthropic-version']).toBe('2023-06-01');
      expect(JSON.parse(received?.body ?? '')).toEqual(params);
      // The local server's own answer, cache counts included: nothing was translated.
      expect(message).toEqual({
        id: 'msg_conformance',
        type: 'message',
        role: 'assistant',
        model: 'claude-haiku-4-5',
        content: [{ type: 'text', text: 'System: Sys | You said: Hello there' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: expect.objectContaining({ input_tokens: 1, cache_read_input_tokens: 2 }),
      } as never);

      const direct = await fetch(`${claude.baseUrl}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': ANTHROPIC_KEY, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ ...params, stream: true }),
      });
      const { response } = await client.messages.create({ ...params, stream: true }).withResponse();
      expect(await response.text()).toBe(await direct.text());
    }, T);

    test("count_tokens natively, and the provider's errors as it sent them", async () => {
      const client = sdk('anthropic', base());
      const { data, response } = await client.messages.countTokens({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'Hello there friend' }] }).withResponse();
      expect(claude.requests.at(-1)?.path).toBe('/v1/messages/count_tokens');
      expect(data).toEqual({ input_tokens: 3 });
      expect(response.headers.get('x-gateway-token-count')).toBeNull();

      const error = await client.messages.create({ model: 'conformance-error', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'conformance: bad request' }, request_id: 'req_test' });
    }, T);
  });
});

describe('the request log', () => {
  const adminGet = async (path: string) =>
    (await (await gateway.handle(new Request(`http://gateway.test/v1${path}`, { headers: { 'x-gateway-api-key': TEST_ADMIN_KEY } }))).json()) as Record<string, unknown>;

  /** The log of a trace, with its bodies, once the request log's queue is written. */
  async function logOf(traceId: string): Promise<Record<string, unknown>> {
    await gateway.service(RequestLogServices.queue).flush();
    const page = (await adminGet(`/logs?trace_id=${traceId}`)) as { data: { id: string }[] };
    expect(page.data).toHaveLength(1);
    return adminGet(`/logs/${page.data[0]?.id}`);
  }

  test("a translated call is logged as a Messages call with the provider's usage, cached prompt included; a native one too", async () => {
    const translated = `messages-log-${crypto.randomUUID()}`;
    await sdk('google', origin, { 'x-gateway-trace-id': translated }).messages.create({
      model: 'gemini-2.5-flash',
      max_tokens: 50,
      system: 'Sys',
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    // The client saw input_tokens 1 and cache_read_input_tokens 2; the log counts the prompt whole, as the cost does.
    const whole = await logOf(translated);
    // The bodies are the client's: the Messages request and the Messages answer.
    expect(JSON.parse(String(whole.request_body))).toMatchObject({ system: 'Sys', max_tokens: 50 });
    expect(JSON.parse(String(whole.response_body))).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'System: Sys | You said: Hello there' }] });
    expect(whole).toMatchObject({
      endpoint: 'messages',
      provider: 'google',
      model: 'gemini-2.5-flash',
      status: 200,
      prompt_tokens: 3,
      completion_tokens: 7,
      cache_read_input_tokens: 2,
    });

    const streamed = `messages-log-${crypto.randomUUID()}`;
    await sdk('openai', origin, { 'x-gateway-trace-id': streamed })
      .messages.stream({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'Stream and log' }] })
      .finalMessage();
    const log = await logOf(streamed);
    expect(log).toMatchObject({ endpoint: 'messages', provider: 'openai', prompt_tokens: 3, completion_tokens: 5 });
    expect(String(log.response_body)).toContain('event: message_stop');

    const native = `messages-log-${crypto.randomUUID()}`;
    await sdk('anthropic', origin, { 'x-gateway-trace-id': native }).messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
    expect(await logOf(native)).toMatchObject({ endpoint: 'messages', provider: 'anthropic', model: 'claude-haiku-4-5', status: 200 });
  }, T);
});

describe('a fallback config', () => {
  test('native and translated attempts in one call: Anthropic fails, OpenAI answers (override_params apply to the Messages body)', async () => {
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: claude.baseUrl },
        { provider: 'openai', api_key: OPENAI_KEY, custom_host: openai.url, override_params: { model: 'gpt-4o-mini' } },
      ],
    };
    const client = new Anthropic({
      baseURL: origin,
      apiKey: null,
      authToken: null,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': JSON.stringify(config), 'anthropic-version': '2023-06-01', authorization: null },
    });
    const claudeBefore = claude.requests.length;
    const openaiBefore = openai.requests.length;
    // The local Anthropic server refuses this model with a 400; the fallback goes on to OpenAI.
    const { data, response } = await client.messages
      .create({ model: 'conformance-error', max_tokens: 20, messages: [{ role: 'user', content: 'Fall back' }] })
      .withResponse();
    expect(claude.requests.length).toBe(claudeBefore + 1);
    expect(JSON.parse(claude.requests[claudeBefore]?.body ?? '')).toMatchObject({ model: 'conformance-error', messages: [{ role: 'user', content: 'Fall back' }] });
    expect(sent(openai.requests, openaiBefore)).toMatchObject({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Fall back' }] });
    expect(openai.requests.length).toBe(openaiBefore + 1);
    expect(data.content).toEqual([{ type: 'text', text: 'You said: Fall back' }] as never);
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
  }, T);
});

describe('keys and stored providers', () => {
  const STORED_KEY = 'sk-stored-integration-key';
  let stored: OpenAIMock;
  let workspace: string | undefined;

  async function admin(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const response = await gateway.handle(
      new Request(`http://gateway.test/v1${path}`, {
        method,
        headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const json = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  }

  /** The SDK with a gateway key of these scopes, at the stored provider `@messages-openai`. */
  async function clientWith(scopes: string[]): Promise<Anthropic> {
    const made = await admin('POST', '/api-keys', { name: `messages ${scopes.join(' ')}`, type: 'workspace-service', workspace_id: workspace, scopes });
    // No provider key from the client (a null authorization header tells the SDK so): the stored one is used.
    return new Anthropic({
      baseURL: origin,
      apiKey: null,
      authToken: null,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': String(made.key), 'x-gateway-provider': '@messages-openai', authorization: null },
    });
  }

  beforeAll(async () => {
    stored = await startOpenAIMock({ apiKey: STORED_KEY });
    const workspaces = (await admin('GET', '/workspaces')).data as { id: string; slug: string }[];
    workspace = workspaces.find((w) => w.slug === 'default')?.id;
    await admin('POST', '/integrations', {
      name: 'Messages OpenAI',
      slug: 'messages-openai',
      ai_provider_id: 'openai',
      key: STORED_KEY,
      configurations: { custom_host: stored.url },
      workspaces: [{ id: workspace, enabled: true }],
    });
  });
  afterAll(async () => {
    await stored?.stop();
  });

  test('completions.write or proxy.write may call; another scope gets a 403 in Anthropic shape before any provider call', async () => {
    const params = { model: 'gpt-4o-mini', max_tokens: 20, messages: [{ role: 'user' as const, content: 'Hello stored' }] };
    for (const scope of ['completions.write', 'proxy.write']) {
      const message = await (await clientWith([scope])).messages.create(params);
      expect(message.content).toEqual([{ type: 'text', text: 'You said: Hello stored' }] as never);
    }
    expect(stored.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${STORED_KEY}`, `Bearer ${STORED_KEY}`]);

    const refused = await (await clientWith(['embeddings.write'])).messages.create(params).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((refused as InstanceType<typeof Anthropic.PermissionDeniedError>).error).toEqual({
      type: 'error',
      error: { type: 'permission_error', message: 'This API key may not make this call: it needs the completions.write or proxy.write scope' },
    });
    const countRefused = await (await clientWith(['embeddings.write'])).messages.countTokens({ model: 'gpt-4o-mini', messages: params.messages }).catch((e: unknown) => e);
    expect(countRefused).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(stored.requests).toHaveLength(2);
  }, T);
});
