/**
 * Anthropic's Messages API against every provider fixture (issue #25, item 2): the Anthropic SDK sends Messages
 * requests through an in-process gateway, which passes them through to `anthropic` and translates them over each other
 * provider's chat translation; every provider's local server answers by the conformance protocol (protocol.ts) in its
 * own wire format, so one set of expectations holds for all. A provider that lacks a feature skips the case with the
 * reason in its name, as in conformance.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import type { Feature, ProviderFixture, StartedServer } from './fixture.ts';
import { CONFORMANCE_ERROR_MODEL, ERROR_MESSAGE, expectedText } from './protocol.ts';

const dir = join(import.meta.dir, 'providers');
const fixtures: ProviderFixture[] = [];
for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts')).sort()) {
  const mod = (await import(join(dir, file))) as { default: ProviderFixture | ProviderFixture[] };
  fixtures.push(...(Array.isArray(mod.default) ? mod.default : [mod.default]));
}

let gateway: Gateway;
beforeAll(async () => {
  gateway = await startInProcessGateway();
});
afterAll(async () => {
  await gateway?.close();
});

/** The SDK at the in-process gateway (through its fetch option), routed to the fixture's server. */
function clientFor(server: StartedServer): Anthropic {
  return new Anthropic({
    baseURL: 'http://gateway.test',
    apiKey: null,
    authToken: null,
    maxRetries: 0,
    // The local Anthropic server knows the versions of its time (a translated call sends no client header on).
    defaultHeaders: { ...server.headers, authorization: server.headers.authorization ?? null, 'anthropic-version': '2023-06-01', 'x-gateway-api-key': TEST_ADMIN_KEY },
    fetch: (url: string | URL | Request, init?: RequestInit) =>
      gateway.handle(url instanceof Request ? new Request(url, init) : new Request(url instanceof URL ? url.href : url, init)),
  });
}

const WEATHER = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
const TIME = { name: 'get_time', description: 'Time in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

interface MessagesCase {
  feature: Feature;
  needs?: Feature[];
  title: string;
  run(client: Anthropic, server: StartedServer): Promise<void>;
}

const text = (message: Anthropic.Message) => message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');

const CASES: MessagesCase[] = [
  {
    feature: 'plain',
    title: 'a plain answer: one text block, end_turn',
    async run(client, server) {
      const message = await client.messages.create({ model: server.chatModel, max_tokens: 100, messages: [{ role: 'user', content: 'Hello there' }] });
      expect(message.type).toBe('message');
      expect(message.role).toBe('assistant');
      expect(message.content).toEqual([{ type: 'text', text: expectedText({ lastUser: 'Hello there' }) }] as never);
      expect(message.stop_reason).toBe('end_turn');
      expect(message.usage.output_tokens).toBeGreaterThan(0);
    },
  },
  {
    feature: 'multiTurn',
    needs: ['system'],
    title: 'system and several turns',
    async run(client, server) {
      const message = await client.messages.create({
        model: server.chatModel,
        max_tokens: 100,
        system: [{ type: 'text', text: 'Be brief' }],
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello' },
          { role: 'user', content: [{ type: 'text', text: 'How are you' }] },
        ],
      });
      expect(text(message)).toBe(expectedText({ system: 'Be brief', turns: 3, lastUser: 'How are you' }));
    },
  },
  {
    feature: 'images',
    title: 'an image block',
    async run(client, server) {
      const message = await client.messages.create({
        model: server.chatModel,
        max_tokens: 100,
        messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL } }, { type: 'text', text: 'What is this' }] }],
      });
      expect(text(message)).toBe(expectedText({ images: 1, lastUser: 'What is this' }));
    },
  },
  {
    feature: 'stop',
    title: 'stop_sequences reach the provider',
    async run(client, server) {
      const message = await client.messages.create({ model: server.chatModel, max_tokens: 100, stop_sequences: ['END', 'STOP'], messages: [{ role: 'user', content: 'Count' }] });
      expect(text(message)).toBe(expectedText({ stop: ['END', 'STOP'], lastUser: 'Count' }));
    },
  },
  {
    feature: 'tools',
    title: 'a tool_use round trip: the call, then its result',
    async run(client, server) {
      const ask = { role: 'user' as const, content: 'What is the weather in Paris' };
      const first = await client.messages.create({ model: server.chatModel, max_tokens: 100, tools: [WEATHER, TIME], messages: [ask] });
      expect(first.stop_reason).toBe('tool_use');
      const call = first.content.find((b) => b.type === 'tool_use');
      if (call?.type !== 'tool_use') throw new Error(`no tool_use block in ${JSON.stringify(first.content)}`);
      expect(call).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
      const second = await client.messages.create({
        model: server.chatModel,
        max_tokens: 100,
        tools: [WEATHER, TIME],
        messages: [ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '22C and sunny' }] }],
      });
      expect(text(second)).toBe('Tool said: 22C and sunny');
      expect(second.stop_reason).toBe('end_turn');
    },
  },
  {
    feature: 'streaming',
    title: 'a streamed answer: text deltas add up to the answer, message_stop at the end',
    async run(client, server) {
      const stream = client.messages.stream({ model: server.chatModel, max_tokens: 100, messages: [{ role: 'user', content: 'Stream please' }] });
      const types: string[] = [];
      let deltas = '';
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') deltas += event.delta.text;
      }
      expect(deltas).toBe(expectedText({ lastUser: 'Stream please' }));
      expect(types[0]).toBe('message_start');
      expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
      const final = await stream.finalMessage();
      expect(final.stop_reason).toBe('end_turn');
      expect(final.usage.output_tokens).toBeGreaterThan(0);
    },
  },
  {
    feature: 'streamedTools',
    title: 'a streamed tool call: input_json_delta pieces add up to the input',
    async run(client, server) {
      const final = await client.messages
        .stream({ model: server.chatModel, max_tokens: 100, tools: [WEATHER], messages: [{ role: 'user', content: 'weather please' }] })
        .finalMessage();
      expect(final.stop_reason).toBe('tool_use');
      expect(final.content.filter((b) => b.type === 'tool_use')).toMatchObject([{ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } }]);
    },
  },
  {
    feature: 'providerError',
    title: "the provider's error in Anthropic's shape, with its status",
    async run(client) {
      const error = await client.messages.create({ model: CONFORMANCE_ERROR_MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      const body = (error as InstanceType<typeof Anthropic.BadRequestError>).error as { type: string; error: { type: string; message: string } };
      expect(body.type).toBe('error');
      expect(body.error.type).toBe('invalid_request_error');
      expect(body.error.message).toContain(ERROR_MESSAGE);
    },
  },
];

for (const fixture of fixtures) {
  describe(`messages conformance: ${fixture.name}`, () => {
    let server: StartedServer;
    beforeAll(async () => {
      server = await fixture.start();
    });
    afterAll(async () => {
      await server?.stop();
    });
    for (const c of CASES) {
      const missing = [c.feature, ...(c.needs ?? [])].find((f) => fixture.unsupported?.[f]);
      if (missing) {
        test.skip(`${c.title} — skipped: ${fixture.name} ${fixture.unsupported?.[missing]}`, () => {});
        continue;
      }
      test(c.title, () => c.run(clientFor(server), server));
    }
  });
}
