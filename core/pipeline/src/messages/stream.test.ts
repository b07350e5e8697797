import { describe, expect, test } from 'bun:test';
import type { JsonObject } from '@gateway/sdk';
import { ChatToMessagesStream, eventsOfMessage } from './stream.ts';

const data = (chunk: unknown) => `data: ${JSON.stringify(chunk)}\n\n`;
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'chatcmpl-7',
  object: 'chat.completion.chunk',
  model: 'gpt-x',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** The events of a Messages SSE text, as [event name, data]. */
function events(text: string): [string, unknown][] {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      expect(eventLine).toStartWith('event: ');
      expect(dataLine).toStartWith('data: ');
      const name = (eventLine as string).slice(7);
      const payload = JSON.parse((dataLine as string).slice(6)) as { type: string };
      expect(payload.type).toBe(name); // the SDK dispatches on the event name, the data repeats it
      return [name, payload];
    });
}

/** Feeds the text in pieces of `size` characters (events split anywhere). */
function run(text: string, size = 7): string {
  const s = new ChatToMessagesStream('asked');
  let out = '';
  for (let i = 0; i < text.length; i += size) out += s.push(text.slice(i, i + size));
  return out + s.end();
}

describe('ChatToMessagesStream', () => {
  test('thinking, text and two tool calls, each block opened, filled and closed in turn; usage in message_delta', () => {
    const chat =
      data(chunk({ role: 'assistant', content: '' })) +
      data(chunk({ reasoning_content: 'Hmm' })) +
      data(chunk({ content: 'Hel' })) +
      data(chunk({ content: 'lo' })) +
      data(chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] })) +
      data(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] })) +
      data(chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] })) +
      data(chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } }] })) +
      data(chunk({}, 'tool_calls')) +
      data({ id: 'chatcmpl-7', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 12, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 2 } } }) +
      'data: [DONE]\n\n';
    expect(events(run(chat))).toEqual([
      [
        'message_start',
        {
          type: 'message_start',
          message: {
            id: 'msg_chatcmpl-7',
            type: 'message',
            role: 'assistant',
            model: 'gpt-x',
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
          },
        },
      ],
      ['ping', { type: 'ping' }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hel' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'lo' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 1 }],
      ['content_block_start', { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_a', name: 'get_weather', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 2 }],
      ['content_block_start', { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{}' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 3 }],
      [
        'message_delta',
        {
          type: 'message_delta',
          delta: { stop_reason: 'tool_use', stop_sequence: null },
          usage: { input_tokens: 10, output_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 2 },
        },
      ],
      ['message_stop', { type: 'message_stop' }],
    ]);
  });

  test('CRLF line ends and multi-line data are read as SSE allows', () => {
    const chat = `data: ${JSON.stringify(chunk({ content: 'a' }))}\r\n\r\ndata: ${JSON.stringify(chunk({}, 'length'))}\r\n\r\ndata: [DONE]\r\n\r\n`;
    const names = events(run(chat, 3)).map(([name]) => name);
    expect(names).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(events(run(chat))[5]?.[1]).toMatchObject({ delta: { stop_reason: 'max_tokens' } });
  });

  test("the gateway's error frame becomes an error event, and nothing follows it", () => {
    const chat =
      data(chunk({ content: 'partial' })) +
      data({ error: { message: 'stream interrupted: no data for 30000 ms', type: 'stream_interrupted', code: 'stream_interrupted', param: null } }) +
      data(chunk({ content: 'ignored' }));
    const all = events(run(chat));
    expect(all.map(([name]) => name)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'error']);
    expect(all[4]?.[1]).toEqual({ type: 'error', error: { type: 'api_error', message: 'stream interrupted: no data for 30000 ms' } });
  });

  test('a provider error chunk keeps a type Anthropic knows', () => {
    const all = events(run(data({ error: { message: 'Overloaded', type: 'overloaded_error' } })));
    expect(all).toEqual([['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]]);
  });

  test('a stream cut before [DONE] ends with an error event, never with message_stop', () => {
    const all = events(run(data(chunk({ content: 'cut' }))));
    expect(all.map(([name]) => name)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'error']);
  });

  test('an empty answer still has message_start, message_delta and message_stop', () => {
    const all = events(run('data: [DONE]\n\n'));
    expect(all.map(([name]) => name)).toEqual(['message_start', 'ping', 'message_delta', 'message_stop']);
    expect(all[0]?.[1]).toMatchObject({ message: { model: 'asked' } });
  });
});

describe('eventsOfMessage', () => {
  test('a whole answer as the events of a stream, one delta per block', () => {
    const usage = { input_tokens: 3, output_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const message: JsonObject = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [
        { type: 'thinking', thinking: 'Hmm', signature: '' },
        { type: 'text', text: 'Calling.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage,
    };
    expect(events(eventsOfMessage(message))).toEqual([
      ['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null } }],
      ['ping', { type: 'ping' }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Calling.' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 1 }],
      ['content_block_start', { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":"Paris"}' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 2 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage }],
      ['message_stop', { type: 'message_stop' }],
    ]);
  });
});
