/** One table of cases, run against every provider fixture (see protocol.ts for what the test servers answer). */
import { expect } from 'bun:test';
import OpenAI from 'openai';
import type { Feature, StartedServer } from './fixture.ts';
import { CONFORMANCE_ERROR_MODEL, embeddingFor, ERROR_MESSAGE, expectedText, wordCount } from './protocol.ts';

export interface Case {
  feature: Feature;
  title: string;
  /** Other features the case relies on (skipped when any is unsupported). */
  needs?: Feature[];
  run(client: OpenAI, server: StartedServer, raw: (path: string, body: unknown) => Promise<Response>): Promise<void>;
}

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const timeTool = {
  type: 'function' as const,
  function: { name: 'get_time', description: 'Time in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

async function collect(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  let content = '';
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | undefined;
  const calls: { id?: string; name: string; args: string }[] = [];
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      content += choice.delta.content ?? '';
      for (const call of choice.delta.tool_calls ?? []) {
        const slot = (calls[call.index] ??= { name: '', args: '' });
        if (call.id) slot.id = call.id;
        slot.name += call.function?.name ?? '';
        slot.args += call.function?.arguments ?? '';
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  return { content, finish, usage, calls };
}

export const CASES: Case[] = [
  {
    feature: 'plain',
    title: 'a plain answer: content, finish reason, model, usage',
    async run(client, server) {
      const res = await client.chat.completions.create({ model: server.chatModel, messages: [{ role: 'user', content: 'Hello there' }] });
      expect(res.object).toBe('chat.completion');
      expect(res.choices[0]?.message.role).toBe('assistant');
      expect(res.choices[0]?.message.content).toBe(expectedText({ lastUser: 'Hello there' }));
      expect(res.choices[0]?.finish_reason).toBe('stop');
      expect(typeof res.id).toBe('string');
      expect(Number.isInteger(res.created)).toBe(true);
      expect(res.usage?.prompt_tokens).toBe(2);
      expect(res.usage?.completion_tokens).toBe(wordCount(expectedText({ lastUser: 'Hello there' })));
      expect(res.usage?.total_tokens).toBe((res.usage?.prompt_tokens ?? 0) + (res.usage?.completion_tokens ?? 0));
    },
  },
  {
    feature: 'streaming',
    title: 'a streamed answer: every piece, the finish reason, usage with include_usage',
    async run(client, server) {
      const stream = await client.chat.completions.create({
        model: server.chatModel,
        messages: [{ role: 'user', content: 'Stream this answer please' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const got = await collect(stream);
      expect(got.content).toBe(expectedText({ lastUser: 'Stream this answer please' }));
      expect(got.finish).toBe('stop');
      expect(got.usage?.completion_tokens).toBe(wordCount(got.content));
    },
  },
  {
    feature: 'system',
    title: 'system and developer messages reach the provider as its system prompt',
    async run(client, server) {
      const a = await client.chat.completions.create({
        model: server.chatModel,
        messages: [{ role: 'system', content: 'Be brief' }, { role: 'user', content: 'Hi' }],
      });
      expect(a.choices[0]?.message.content).toBe(expectedText({ system: 'Be brief', lastUser: 'Hi' }));
      const b = await client.chat.completions.create({
        model: server.chatModel,
        messages: [{ role: 'developer', content: 'Be kind' }, { role: 'user', content: 'Hi' }],
      });
      expect(b.choices[0]?.message.content).toBe(expectedText({ system: 'Be kind', lastUser: 'Hi' }));
    },
  },
  {
    feature: 'multiTurn',
    title: 'a multi-turn conversation keeps every turn in order',
    async run(client, server) {
      const res = await client.chat.completions.create({
        model: server.chatModel,
        messages: [
          { role: 'user', content: 'One' },
          { role: 'assistant', content: 'Two' },
          { role: 'user', content: 'Three' },
        ],
      });
      expect(res.choices[0]?.message.content).toBe(expectedText({ turns: 3, lastUser: 'Three' }));
    },
  },
  {
    feature: 'tools',
    title: 'tools: a tool call comes back in OpenAI shape, and its result goes back to the provider',
    async run(client, server) {
      const first = await client.chat.completions.create({
        model: server.chatModel,
        messages: [{ role: 'user', content: 'What is the weather?' }],
        tools: [weatherTool],
        tool_choice: 'auto',
      });
      const choice = first.choices[0];
      expect(choice?.finish_reason).toBe('tool_calls');
      const call = choice?.message.tool_calls?.[0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall | undefined;
      expect(call?.type).toBe('function');
      expect(call?.function.name).toBe('get_weather');
      expect(JSON.parse(call?.function.arguments ?? '')).toEqual({ city: 'Paris' });
      expect(typeof call?.id).toBe('string');
      const second = await client.chat.completions.create({
        model: server.chatModel,
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'What is the weather?' },
          { role: 'assistant', content: null, tool_calls: [call as OpenAI.Chat.Completions.ChatCompletionMessageToolCall] },
          { role: 'tool', tool_call_id: call?.id ?? '', content: '18C' },
        ],
      });
      expect(second.choices[0]?.message.content).toBe('Tool said: 18C');
    },
  },
  {
    feature: 'parallelTools',
    title: 'parallel tool calls come back as two calls',
    async run(client, server) {
      const res = await client.chat.completions.create({
        model: server.chatModel,
        messages: [{ role: 'user', content: 'weather and time for both' }],
        tools: [weatherTool, timeTool],
      });
      const calls = (res.choices[0]?.message.tool_calls ?? []) as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[];
      expect(calls.map((c) => c.function.name)).toEqual(['get_weather', 'get_time']);
      expect(calls.map((c) => JSON.parse(c.function.arguments))).toEqual([{ city: 'Paris' }, { city: 'Rome' }]);
      expect(res.choices[0]?.finish_reason).toBe('tool_calls');
    },
  },
  {
    feature: 'streamedTools',
    title: 'a streamed tool call: argument deltas assemble into the arguments',
    needs: ['tools', 'streaming'],
    async run(client, server) {
      const stream = await client.chat.completions.create({
        model: server.chatModel,
        messages: [{ role: 'user', content: 'What is the weather?' }],
        tools: [weatherTool],
        stream: true,
      });
      const got = await collect(stream);
      expect(got.finish).toBe('tool_calls');
      expect(got.calls[0]?.name).toBe('get_weather');
      expect(JSON.parse(got.calls[0]?.args ?? '')).toEqual({ city: 'Paris' });
      expect(typeof got.calls[0]?.id).toBe('string');
    },
  },
  {
    feature: 'jsonMode',
    title: 'JSON mode: the answer is the JSON the provider produced in its JSON mode',
    async run(client, server) {
      const res = await client.chat.completions.create({
        model: server.chatModel,
        messages: [{ role: 'user', content: 'Give JSON' }],
        response_format: { type: 'json_object' },
      });
      expect(JSON.parse(res.choices[0]?.message.content ?? '')).toEqual({ answer: 'Give JSON' });
    },
  },
  {
    feature: 'images',
    title: 'an image part reaches the provider as an image',
    async run(client, server) {
      const res = await client.chat.completions.create({
        model: server.chatModel,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: PIXEL } }] }],
      });
      expect(res.choices[0]?.message.content).toBe(expectedText({ images: 1, lastUser: 'Look' }));
    },
  },
  {
    feature: 'stop',
    title: 'stop sequences reach the provider',
    async run(client, server) {
      const res = await client.chat.completions.create({ model: server.chatModel, messages: [{ role: 'user', content: 'Hi' }], stop: ['END'] });
      expect(res.choices[0]?.message.content).toBe(expectedText({ stop: ['END'], lastUser: 'Hi' }));
    },
  },
  {
    feature: 'cachedTokens',
    title: 'cached input tokens map to prompt_tokens_details.cached_tokens',
    async run(client, server) {
      const res = await client.chat.completions.create({ model: server.chatModel, messages: [{ role: 'user', content: 'Hi' }] });
      expect(res.usage?.prompt_tokens_details?.cached_tokens).toBe(2);
    },
  },
  {
    feature: 'reasoningTokens',
    title: 'reasoning tokens map to completion_tokens_details.reasoning_tokens',
    async run(client, server) {
      const res = await client.chat.completions.create({ model: server.chatModel, messages: [{ role: 'user', content: 'Hi' }] });
      expect(res.usage?.completion_tokens_details?.reasoning_tokens).toBe(3);
    },
  },
  {
    feature: 'providerError',
    title: "a provider error keeps the provider's status and message, with provider set",
    async run(client, _server, raw) {
      let caught: unknown;
      try {
        await client.chat.completions.create({ model: CONFORMANCE_ERROR_MODEL, messages: [{ role: 'user', content: 'Hi' }] });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(OpenAI.APIError);
      expect((caught as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
      expect((caught as Error).message).toContain(ERROR_MESSAGE);
      const res = await raw('/v1/chat/completions', { model: CONFORMANCE_ERROR_MODEL, messages: [{ role: 'user', content: 'Hi' }] });
      const body = (await res.json()) as { error: { message: string; type: string }; provider?: string };
      expect(res.status).toBe(400);
      expect(body.error.message).toContain(ERROR_MESSAGE);
      expect(typeof body.provider).toBe('string');
    },
  },
  {
    feature: 'embeddings',
    title: 'embeddings: one vector per input, floats and base64 alike',
    async run(client, server) {
      const model = server.embeddingModel ?? server.chatModel;
      const floats = await client.embeddings.create({ model, input: ['a', 'bb'], encoding_format: 'float' });
      expect(floats.object).toBe('list');
      expect(floats.data.map((d) => d.index)).toEqual([0, 1]);
      floats.data.forEach((d, i) => {
        const want = embeddingFor(['a', 'bb'][i] as string);
        (d.embedding as number[]).forEach((v, j) => expect(v).toBeCloseTo(want[j] as number, 5));
      });
      // The SDK asks for base64 by default and decodes it.
      const b64 = await client.embeddings.create({ model, input: ['ccc'] });
      const want = embeddingFor('ccc');
      (b64.data[0]?.embedding as number[]).forEach((v, j) => expect(v).toBeCloseTo(want[j] as number, 5));
    },
  },
];
