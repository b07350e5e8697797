/**
 * Issue #19, item 1: the Responses API for every provider, through the openai SDK (`responses.create`, `.stream`,
 * `.retrieve`, `.inputItems.list`, `.delete`). Anthropic, Bedrock, Gemini, Vertex (Gemini and Anthropic publisher),
 * Mistral and Cohere are translated to and from their chat APIs by the gateway (the local servers answer by
 * tests/conformance/protocol.ts: `System: …`, `Turns: n`, a weather tool call, `Tool said: …`); the
 * OpenAI-compatible server speaks Responses itself and the call is forwarded. Every
 * Response is kept by the gateway, so retrieve and previous_response_id work for all of them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import OpenAI from 'openai';
import type { ResponseFunctionToolCall } from 'openai/resources/responses/responses';
import anthropicFixture from '../conformance/providers/anthropic.ts';
import { THINKING_TEXT } from '../providers/anthropic/server.ts';
import bedrockFixtures from '../conformance/providers/bedrock.ts';
import cohereFixture from '../conformance/providers/cohere.ts';
import googleFixture from '../conformance/providers/google.ts';
import mistralFixture from '../conformance/providers/mistral-ai.ts';
import vertexFixtures from '../conformance/providers/vertex-ai.ts';
import type { ProviderFixture, StartedServer } from '../conformance/fixture.ts';
import { expectedText, wordCount } from '../conformance/protocol.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

let gateway: Gateway;
beforeAll(async () => {
  gateway = await startInProcessGateway();
}, 30_000);
afterAll(async () => {
  await gateway?.close();
});

function client(headers: Record<string, string>, apiKey = 'unused'): OpenAI {
  return new OpenAI({
    baseURL: 'http://gateway.test/v1',
    apiKey,
    maxRetries: 0,
    defaultHeaders: { ...headers, 'x-gateway-api-key': TEST_ADMIN_KEY },
    fetch: (url: string | URL | Request, init?: RequestInit) =>
      gateway.handle(url instanceof Request ? new Request(url, init) : new Request(url instanceof URL ? url.href : url, init)),
  });
}

/** How a call failed (the SDK's APIPromise is not a plain promise for expect().rejects). */
async function failure(call: PromiseLike<unknown>): Promise<{ status?: number; param?: string | null } | 'resolved'> {
  try {
    await call;
    return 'resolved';
  } catch (error) {
    const e = error as { status?: number; param?: string | null };
    return { status: e.status, param: e.param };
  }
}


/** The fixture's routing as a config (a header provider becomes the config's provider and custom host). */
function configOf(server: StartedServer): Record<string, unknown> {
  const config = server.headers['x-gateway-config'];
  if (config) return JSON.parse(config) as Record<string, unknown>;
  return { provider: server.headers['x-gateway-provider'], custom_host: server.headers['x-gateway-custom-host'] };
}

const TRANSLATED: ProviderFixture[] = [anthropicFixture, (bedrockFixtures as ProviderFixture[])[0]!, googleFixture, ...(vertexFixtures as ProviderFixture[]), mistralFixture, cohereFixture];

describe.each(TRANSLATED.map((f) => [f.name, f] as const))('%s (translated)', (_, fixture) => {
  let server: StartedServer;
  let openai: OpenAI;
  beforeAll(async () => {
    server = await fixture.start();
    openai = client(server.headers, server.headers.authorization?.replace(/^Bearer /, ''));
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('create: instructions first, the answer as a message item, usage, and the Response kept for retrieve', async () => {
    const res = await openai.responses.create({ model: server.chatModel, instructions: 'Be brief.', input: 'Hello there', metadata: { team: 'a' } });
    expect(res.object).toBe('response');
    expect(res.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(res.status).toBe('completed');
    expect(res.output_text).toBe(expectedText({ system: 'Be brief.', lastUser: 'Hello there' }));
    expect(res.output[0]?.type).toBe('message');
    expect(res.instructions).toBe('Be brief.');
    expect(res.metadata).toEqual({ team: 'a' });
    expect(res.usage?.output_tokens).toBe(wordCount(res.output_text));
    expect(res.usage?.total_tokens).toBe((res.usage?.input_tokens ?? 0) + (res.usage?.output_tokens ?? 0));

    const again = await openai.responses.retrieve(res.id);
    expect(again.id).toBe(res.id);
    expect(again.output).toEqual(res.output);
    expect(again.output_text).toBe(res.output_text);
    const items = await openai.responses.inputItems.list(res.id);
    expect(items.data).toHaveLength(1);
    expect(items.data[0]).toMatchObject({ type: 'message', role: 'user', content: 'Hello there' });
    expect(items.data[0]?.id).toMatch(/^msg_/);
  });

  test('previous_response_id: the stored turns come first, the earlier instructions do not', async () => {
    const first = await openai.responses.create({ model: server.chatModel, instructions: 'Only the first.', input: 'My name is Ada' });
    const second = await openai.responses.create({ model: server.chatModel, previous_response_id: first.id, input: 'What is my name?' });
    // user, assistant, user: three turns and no system text (instructions are not carried over).
    expect(second.output_text).toBe(expectedText({ turns: 3, lastUser: 'What is my name?' }));
    expect(second.previous_response_id).toBe(first.id);
    const third = await openai.responses.create({ model: server.chatModel, previous_response_id: second.id, instructions: 'New rule.', input: 'Again' });
    expect(third.output_text).toBe(expectedText({ system: 'New rule.', turns: 5, lastUser: 'Again' }));
  });

  test('function tools: a function_call item, then its function_call_output on previous_response_id', async () => {
    const call = await openai.responses.create({ model: server.chatModel, input: 'What is the weather in Paris?', tools: [WEATHER] });
    const fc = call.output.find((item) => item.type === 'function_call') as ResponseFunctionToolCall;
    expect(fc).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' });
    expect(fc.id).toMatch(/^fc_/);
    const done = await openai.responses.create({
      model: server.chatModel,
      previous_response_id: call.id,
      input: [{ type: 'function_call_output', call_id: fc.call_id, output: 'Sunny, 24 C' }],
      tools: [WEATHER],
    });
    expect(done.output_text).toBe('Tool said: Sunny, 24 C');
  });

  test('stream: the Responses events in order, text deltas adding up, the final Response kept', async () => {
    const stream = openai.responses.stream({ model: server.chatModel, input: 'Stream this answer please' });
    const types: string[] = [];
    let deltas = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') deltas += event.delta;
    }
    const final = await stream.finalResponse();
    const want = expectedText({ lastUser: 'Stream this answer please' });
    expect(deltas).toBe(want);
    expect(final.output_text).toBe(want);
    expect(final.status).toBe('completed');
    expect(final.usage?.output_tokens).toBe(wordCount(want));
    const distinct = types.filter((t, i) => t !== types[i - 1]);
    expect(distinct).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect((await openai.responses.retrieve(final.id)).output_text).toBe(want);
  });

  test('stream with a function tool: function_call_arguments deltas and done, then the tool result streamed', async () => {
    const stream = openai.responses.stream({ model: server.chatModel, input: 'And the weather in Paris, please', tools: [WEATHER] });
    let args = '';
    let doneArgs: string | undefined;
    for await (const event of stream) {
      if (event.type === 'response.function_call_arguments.delta') args += event.delta;
      if (event.type === 'response.function_call_arguments.done') doneArgs = event.arguments;
    }
    const final = await stream.finalResponse();
    expect(args).toBe('{"city":"Paris"}');
    expect(doneArgs).toBe('{"city":"Paris"}');
    const fc = final.output.find((item) => item.type === 'function_call') as ResponseFunctionToolCall;
    expect(fc.name).toBe('get_weather');
    const next = openai.responses.stream({
      model: server.chatModel,
      previous_response_id: final.id,
      input: [{ type: 'function_call_output', call_id: fc.call_id, output: 'Rain' }],
      tools: [WEATHER],
    });
    expect((await next.finalResponse()).output_text).toBe('Tool said: Rain');
  });

  test('delete: gone for retrieve and for previous_response_id', async () => {
    const res = await openai.responses.create({ model: server.chatModel, input: 'Forget me' });
    await openai.responses.delete(res.id);
    expect(await failure(openai.responses.retrieve(res.id))).toMatchObject({ status: 404 });
    expect(await failure(openai.responses.create({ model: server.chatModel, previous_response_id: res.id, input: 'x' }))).toMatchObject({ status: 404 });
  });

  test('a hosted tool kind cannot be translated: 400 naming it, nothing sent to the provider', async () => {
    const before = server.requests.length;
    expect(await failure(openai.responses.create({ model: server.chatModel, input: 'x', tools: [{ type: 'web_search_preview' }] }))).toMatchObject({
      status: 400,
      param: 'tools[0].type',
    });
    expect(server.requests.length).toBe(before);
  });

  test('input guardrails judge the instructions and input items: a denied call reaches no provider', async () => {
    const before = server.requests.length;
    const guarded = client(
      { ...server.headers, 'x-gateway-config': JSON.stringify({ ...configOf(server), input_guardrails: [{ id: 'no-pw', deny: true, 'default.contains': { words: ['password'], operator: 'none' } }] }) },
      server.headers.authorization?.replace(/^Bearer /, ''),
    );
    const denied = await failure(guarded.responses.create({ model: server.chatModel, input: [{ role: 'user', content: [{ type: 'input_text', text: 'my password is x' }] }] }));
    expect(denied).toMatchObject({ status: 400 });
    expect(server.requests.length).toBe(before);
    const passed = await guarded.responses.create({ model: server.chatModel, input: 'nothing secret' });
    expect(passed.output_text).toBe(expectedText({ lastUser: 'nothing secret' }));
  });

  test('store: false is answered but not kept', async () => {
    const res = await openai.responses.create({ model: server.chatModel, input: 'Do not keep', store: false });
    expect(res.output_text).toBe(expectedText({ lastUser: 'Do not keep' }));
    expect(await failure(openai.responses.retrieve(res.id))).toMatchObject({ status: 404 });
  });
});

describe('reasoning where the adapter has it (Anthropic thinking, surfaced with strict_wire_compliance false)', () => {
  let server: StartedServer;
  let openai: OpenAI;
  beforeAll(async () => {
    server = await anthropicFixture.start();
    const config = { provider: 'anthropic', custom_host: server.headers['x-gateway-custom-host'], strict_wire_compliance: false };
    openai = client({ authorization: server.headers.authorization!, 'x-gateway-config': JSON.stringify(config) }, 'sk-ant-conformance');
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('reasoning.effort becomes a thinking budget; the thinking comes back as a reasoning item, whole and streamed', async () => {
    const res = await openai.responses.create({ model: server.chatModel, input: 'Think first', reasoning: { effort: 'low' } });
    expect((JSON.parse(server.requests.at(-1)!.body) as { thinking: unknown }).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(res.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(res.output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: THINKING_TEXT }] });
    expect(res.reasoning?.effort).toBe('low');

    const stream = openai.responses.stream({ model: server.chatModel, input: 'Think first', reasoning: { effort: 'low' } });
    let summary = '';
    for await (const event of stream) if (event.type === 'response.reasoning_summary_text.delta') summary += event.delta;
    const final = await stream.finalResponse();
    expect(summary).toBe(THINKING_TEXT);
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(final.output_text).toBe(res.output_text);
  });
});

describe('the OpenAI-compatible server (native: forwarded as it is)', () => {
  let mock: OpenAIMock;
  let openai: OpenAI;
  const KEY = 'sk-openai-native';
  beforeAll(async () => {
    mock = await startOpenAIMock({ apiKey: KEY });
    openai = client({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url }, KEY);
  });
  afterAll(async () => {
    await mock?.stop();
  });

  test('create goes to /responses unchanged; retrieve, input items and delete are served from the gateway store', async () => {
    const before = mock.requests.length;
    const res = await openai.responses.create({ model: 'gpt-4o-mini', input: 'Hello native', metadata: { k: 'v' } });
    expect(mock.requests.length).toBe(before + 1);
    const upstream = mock.requests.at(-1)!;
    expect(upstream.path).toBe('/v1/responses');
    expect(upstream.json).toEqual({ model: 'gpt-4o-mini', input: 'Hello native', metadata: { k: 'v' } });
    expect(res.output_text).toBe('You said: Hello native');
    const again = await openai.responses.retrieve(res.id);
    expect(again).toEqual(res);
    expect(mock.requests.length).toBe(before + 1); // not asked again
    const items = await openai.responses.inputItems.list(res.id);
    expect(items.data[0]).toMatchObject({ type: 'message', role: 'user', content: 'Hello native' });
    await openai.responses.delete(res.id);
    // The provider's own copy is deleted too (the call names the provider); then neither has it.
    expect(mock.requests.some((r) => r.method === 'DELETE' && r.path === `/v1/responses/${res.id}`)).toBe(true);
    expect(await failure(openai.responses.retrieve(res.id))).toMatchObject({ status: 404 });
  });

  test('the config applies as to any call: override_params reach the native body', async () => {
    const configured = client({ 'x-gateway-config': JSON.stringify({ provider: 'openai', custom_host: mock.url, override_params: { temperature: 0.25 } }) }, KEY);
    const res = await configured.responses.create({ model: 'gpt-4o-mini', input: 'Configured' });
    expect((mock.requests.at(-1)!.json as { temperature?: number }).temperature).toBe(0.25);
    expect(res.temperature).toBe(0.25);
  });

  test('previous_response_id of its own response is forwarded: the provider keeps its conversation', async () => {
    const first = await openai.responses.create({ model: 'gpt-4o-mini', input: 'First' });
    const second = await openai.responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: 'Second' });
    expect((mock.requests.at(-1)!.json as { previous_response_id?: string; input: { type: string; role?: string }[] }).previous_response_id).toBe(first.id);
    expect(second.previous_response_id).toBe(first.id);
  });

  test('a previous_response_id the gateway never kept (made at the provider directly) is forwarded for the provider to judge', async () => {
    const direct = await fetch(`${mock.url}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 'Made elsewhere' }),
    });
    const made = (await direct.json()) as { id: string };
    const next = await openai.responses.create({ model: 'gpt-4o-mini', previous_response_id: made.id, input: 'Continue' });
    expect(next.previous_response_id).toBe(made.id);
    // Not in the gateway's store: retrieve and delete go on to the provider the call names.
    expect((await openai.responses.retrieve(made.id)).output_text).toBe('You said: Made elsewhere');
    expect(mock.requests.at(-1)).toMatchObject({ method: 'GET', path: `/v1/responses/${made.id}` });
    await openai.responses.delete(made.id);
    expect(mock.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `/v1/responses/${made.id}` });
    expect(await failure(openai.responses.retrieve(made.id))).toMatchObject({ status: 404 });
    expect(await failure(openai.responses.create({ model: 'gpt-4o-mini', previous_response_id: 'resp_nowhere', input: 'x' }))).toMatchObject({ status: 404, param: 'previous_response_id' });
  });

  test('a function tool forced, then its output, streamed: the events as the provider sent them, the Response kept', async () => {
    const stream = openai.responses.stream({ model: 'gpt-4o-mini', input: 'Call it', tools: [WEATHER], tool_choice: 'required' });
    const types = new Set<string>();
    for await (const event of stream) types.add(event.type);
    const final = await stream.finalResponse();
    expect(types.has('response.function_call_arguments.delta')).toBe(true);
    const fc = final.output[0] as ResponseFunctionToolCall;
    expect(fc.type).toBe('function_call');
    // The stream helper adds parsed_arguments of its own; the stored item is the provider's.
    expect((await openai.responses.retrieve(final.id)).output).toEqual([{ id: fc.id, type: 'function_call', status: 'completed', arguments: fc.arguments, call_id: fc.call_id, name: 'get_weather' }]);
    const next = await openai.responses.create({
      model: 'gpt-4o-mini',
      previous_response_id: final.id,
      input: [{ type: 'function_call_output', call_id: fc.call_id, output: 'done' }],
    });
    expect(next.status).toBe('completed');
  });

  test('a previous response another provider produced is sent to the native one as input items', async () => {
    const claude = await anthropicFixture.start();
    try {
      const translated = client(claude.headers, 'sk-ant-conformance');
      const first = await translated.responses.create({ model: claude.chatModel, input: 'Remember blue' });
      const res = await openai.responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: 'What colour?' });
      const body = (mock.requests.at(-1)!.json as { previous_response_id?: string; input: { type: string; role?: string }[] });
      expect(body.previous_response_id).toBeUndefined();
      expect(body.input.map((i: { type: string; role?: string }) => `${i.type}:${i.role}`)).toEqual(['message:user', 'message:assistant', 'message:user']);
      expect(res.output_text).toBe('You said: What colour?');
    } finally {
      await claude.stop();
    }
  });
});

describe('validation before routing (SPEC.md)', () => {
  const openai = () => client({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': 'http://127.0.0.1:9' });
  const cases: [string, Record<string, unknown>, string][] = [
    ['17 metadata pairs', { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
    ['a 65-character metadata key', { metadata: { ['k'.repeat(65)]: 'v' } }, 'metadata'],
    ['a 513-character metadata value', { metadata: { k: 'v'.repeat(513) } }, 'metadata.k'],
    ['temperature 2.5', { temperature: 2.5 }, 'temperature'],
    ['top_p 1.5', { top_p: 1.5 }, 'top_p'],
    ['truncation "middle"', { truncation: 'middle' }, 'truncation'],
    ['a code_interpreter tool', { tools: [{ type: 'code_interpreter' }] }, 'tools[0].type'],
  ];
  test.each(cases)('%s: 400 naming the parameter', async (_, extra, param) => {
    expect(await failure(openai().responses.create({ model: 'gpt-4o-mini', input: 'x', ...extra } as never))).toMatchObject({ status: 400, param });
  });
});
