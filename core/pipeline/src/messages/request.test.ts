import { describe, expect, test } from 'bun:test';
import { GatewayError } from '@gateway/sdk';
import { effortOf, messagesToChat } from './request.ts';

const OPENAI = { translates: false };
const TRANSLATING = { translates: true };

describe('messagesToChat', () => {
  test('system, text turns and the sampling fields', () => {
    const chat = messagesToChat(
      {
        model: 'm',
        max_tokens: 64,
        system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Be kind.', cache_control: { type: 'ephemeral' } }],
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: [{ type: 'text', text: 'Hello' }, { type: 'text', text: '!' }] },
          { role: 'user', content: [{ type: 'text', text: 'One' }, { type: 'text', text: 'Two' }] },
        ],
        stop_sequences: ['END'],
        temperature: 0.5,
        top_p: 0.9,
        top_k: 40,
        metadata: { user_id: 'u-1' },
      },
      OPENAI,
    );
    expect(chat).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.\nBe kind.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'One\nTwo' },
      ],
      max_tokens: 64,
      stop: ['END'],
      temperature: 0.5,
      top_p: 0.9,
      user: 'u-1',
    });
    // top_k only for a provider whose chat translator reads it.
    expect(messagesToChat({ model: 'm', max_tokens: 1, messages: [], top_k: 40 }, TRANSLATING).top_k).toBe(40);
  });

  test('images (base64 and url) and documents become OpenAI parts', () => {
    const chat = messagesToChat(
      {
        model: 'm',
        max_tokens: 1,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.jpg' } },
              { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' }, title: 'a.pdf' },
              { type: 'text', text: 'What are these?' },
            ],
          },
        ],
      },
      OPENAI,
    );
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBER', filename: 'a.pdf' } },
          { type: 'text', text: 'What are these?' },
        ],
      },
    ]);
  });

  test('a tool_use round trip: tools, tool_choice, the call and its result (before the rest of the turn)', () => {
    const chat = messagesToChat(
      {
        model: 'm',
        max_tokens: 100,
        tools: [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hmm', signature: 'sig' },
              { type: 'text', text: 'Let me look.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Here:' },
              { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Sunny' }, { type: 'text', text: '21C' }] },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'boom', is_error: true }] },
        ],
      },
      OPENAI,
    );
    expect(chat.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ]);
    expect(chat.tool_choice).toBe('required');
    expect(chat.parallel_tool_calls).toBe(false);
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'Let me look.', tool_calls: [{ type: 'function', id: 'toolu_1', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Sunny\n21C' },
      { role: 'user', content: 'Here:' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: boom' },
    ]);
  });

  test('tool_choice forms', () => {
    const base = { model: 'm', max_tokens: 1, messages: [], tools: [{ name: 't', input_schema: { type: 'object' } }] };
    expect(messagesToChat({ ...base, tool_choice: { type: 'auto' } }, OPENAI).tool_choice).toBe('auto');
    expect(messagesToChat({ ...base, tool_choice: { type: 'none' } }, OPENAI).tool_choice).toBe('none');
    expect(messagesToChat({ ...base, tool_choice: { type: 'tool', name: 't' } }, OPENAI).tool_choice).toEqual({ type: 'function', function: { name: 't' } });
    expect(messagesToChat(base, OPENAI).tool_choice).toBeUndefined();
  });

  test('thinking: the gateway extension for translating adapters, reasoning_effort for OpenAI-speaking servers', () => {
    const body = { model: 'm', max_tokens: 20000, messages: [], thinking: { type: 'enabled', budget_tokens: 10000 } };
    expect(messagesToChat(body, TRANSLATING)).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 10000 }, max_tokens: 20000 });
    const openai = messagesToChat(body, OPENAI);
    expect(openai).toMatchObject({ reasoning_effort: 'medium', max_completion_tokens: 20000 });
    expect(openai.thinking).toBeUndefined();
    expect(openai.max_tokens).toBeUndefined();
    expect(messagesToChat({ ...body, thinking: { type: 'disabled' } }, OPENAI).reasoning_effort).toBeUndefined();
    expect([effortOf(1024), effortOf(4096), effortOf(4097), effortOf(16384), effortOf(16385)]).toEqual(['low', 'low', 'medium', 'medium', 'high']);
  });

  test('a stream asks for usage (message_delta reports it)', () => {
    expect(messagesToChat({ model: 'm', max_tokens: 1, messages: [], stream: true }, OPENAI)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  test('what has no chat equivalent is a 400 naming the field', () => {
    const refuse = (body: Record<string, unknown>) => {
      try {
        messagesToChat({ model: 'm', max_tokens: 1, ...body } as never, OPENAI);
      } catch (error) {
        expect(error).toBeInstanceOf(GatewayError);
        return [(error as GatewayError).status, (error as GatewayError).param];
      }
      return 'accepted';
    };
    expect(refuse({ messages: [], tools: [{ type: 'web_search_20250305', name: 'web_search' }] })).toEqual([400, 'tools[0]']);
    expect(refuse({ messages: [{ role: 'user', content: [{ type: 'search_result', source: 'x' }] }] })).toEqual([400, 'messages[0].content[0].type']);
    expect(refuse({ messages: [{ role: 'system', content: 'x' }] })).toEqual([400, 'messages[0].role']);
    expect(refuse({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] })).toEqual([400, 'messages[0].content[0].source']);
  });
});
