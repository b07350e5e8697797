import { describe, expect, test } from 'bun:test';
import { PassthroughUsage } from './passthrough-usage.ts';

const enc = new TextEncoder();
const sse = (events: unknown[]) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');

/** Feeds `text` in pieces of `size` bytes (cutting lines, and a multi-byte character, anywhere). */
function feed(text: string, size: number): PassthroughUsage {
  const counter = new PassthroughUsage();
  const bytes = enc.encode(text);
  for (let i = 0; i < bytes.length; i += size) counter.push(bytes.subarray(i, i + size));
  return counter;
}

describe('PassthroughUsage', () => {
  const anthropic = sse([
    { type: 'message_start', message: { id: 'msg_1', usage: { input_tokens: 25, output_tokens: 1, cache_read_input_tokens: 3 } } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'héllo "usage" in text' } },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 15 } },
    { type: 'message_stop' },
  ]);

  test("Anthropic's split usage adds up (input from message_start, final output from message_delta), however the bytes are cut", () => {
    for (const size of [1, 2, 7, 64, 100_000])
      expect(feed(anthropic, size).result()).toEqual({ input_tokens: 25, output_tokens: 15, cache_read_input_tokens: 3 });
  });

  test('the Responses API: response.usage of the completed event; a null usage earlier changes nothing', () => {
    const text = sse([
      { type: 'response.created', response: { id: 'r', usage: null } },
      { type: 'response.output_text.delta', delta: 'x'.repeat(5000) },
      { type: 'response.completed', response: { id: 'r', usage: { input_tokens: 9, output_tokens: 4, total_tokens: 13 } } },
    ]);
    expect(feed(text, 333).result()).toEqual({ input_tokens: 9, output_tokens: 4, total_tokens: 13 });
  });

  test('a last event without a trailing newline is read at the end; a stream without usage gives undefined', () => {
    expect(feed('data: {"usage":{"prompt_tokens":2,"completion_tokens":3}}', 5).result()).toEqual({ prompt_tokens: 2, completion_tokens: 3 });
    expect(feed(`${sse([{ choices: [{ delta: { content: 'hi' } }] }])}data: [DONE]\n\n`, 4).result()).toBeUndefined();
    expect(feed('event: x\ndata: {not json "usage"\n\n', 3).result()).toBeUndefined();
  });
});
