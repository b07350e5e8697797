import { describe, expect, test } from 'bun:test';
import { ChatToResponsesStream } from './stream.ts';

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'm1', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;

function events(text: string): { event: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      return { event: eventLine!.slice(7), data: JSON.parse(dataLine!.slice(6)) as Record<string, unknown> };
    });
}

const frame = { id: 'resp_x', createdAt: 1, body: { model: 'm', input: 'hi' } };

describe('chat stream → Responses events', () => {
  test('text: created, in_progress, the message item and part, deltas, their done events, completed with usage', () => {
    const s = new ChatToResponsesStream(frame);
    let out = s.push(chunk({ role: 'assistant', content: 'Hel' }));
    // Split mid-event: nothing is sent until the event is whole.
    const second = chunk({ content: 'lo' });
    out += s.push(second.slice(0, 10));
    out += s.push(second.slice(10));
    out += s.push(chunk({}, 'stop'));
    out += s.push(`data: ${JSON.stringify({ id: 'c', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } })}\n\ndata: [DONE]\n\n`);
    out += s.end();
    const got = events(out);
    expect(got.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(got.map((e) => e.data.sequence_number)).toEqual(got.map((_, i) => i));
    expect(got.every((e) => e.data.type === e.event)).toBe(true);
    expect(got[6]?.data.text).toBe('Hello');
    const completed = got[9]!.data.response as Record<string, unknown>;
    expect(completed).toMatchObject({ id: 'resp_x', status: 'completed', model: 'm1', usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 } });
    expect(completed.output).toEqual([got[8]!.data.item]);
    expect(s.final as Record<string, unknown> | undefined).toEqual(completed);
  });

  test('tool calls: one function_call item each, argument deltas, done events at the end', () => {
    const s = new ChatToResponsesStream(frame);
    let out = s.push(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }));
    out += s.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }));
    out += s.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }));
    out += s.push(chunk({}, 'tool_calls'));
    out += s.push('data: [DONE]\n\n');
    const got = events(out);
    expect(got.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(got[2]?.data.item).toMatchObject({ type: 'function_call', call_id: 'call_1', name: 'f', arguments: '', status: 'in_progress' });
    expect(got[5]?.data.arguments).toBe('{"a":1}');
    expect(got[6]?.data.item).toMatchObject({ type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a":1}', status: 'completed' });
  });

  test('reasoning then text: a reasoning item with its summary, then the message at the next output index', () => {
    const s = new ChatToResponsesStream(frame);
    const out = s.push(`${chunk({ reasoning_content: 'Hmm' })}${chunk({ content: 'Yes' })}${chunk({}, 'stop')}data: [DONE]\n\n`);
    const got = events(out);
    const added = got.filter((e) => e.event === 'response.output_item.added').map((e) => [e.data.output_index, (e.data.item as { type: string }).type]);
    expect(added).toEqual([
      [0, 'reasoning'],
      [1, 'message'],
    ]);
    expect(got.find((e) => e.event === 'response.reasoning_summary_text.done')?.data.text).toBe('Hmm');
  });

  test('length: response.incomplete; an error frame: error then response.failed; a cut stream fails', () => {
    const cut = new ChatToResponsesStream(frame);
    expect(events(cut.push(chunk({ content: 'a' }, 'length')) + cut.push('data: [DONE]\n\n')).at(-1)?.event).toBe('response.incomplete');

    const failed = new ChatToResponsesStream(frame);
    const got = events(failed.push(chunk({ content: 'a' })) + failed.push(`data: ${JSON.stringify({ error: { message: 'boom', code: 'upstream_error' } })}\n\n`));
    expect(got.slice(-2).map((e) => e.event)).toEqual(['error', 'response.failed']);
    expect(got.at(-2)?.data).toMatchObject({ code: 'upstream_error', message: 'boom' });
    expect(failed.final?.status).toBe('failed');

    const broken = new ChatToResponsesStream(frame);
    const ended = events(broken.push(chunk({ content: 'a' })) + broken.end());
    expect(ended.at(-1)?.event).toBe('response.failed');
    expect(ended.at(-2)?.data.code).toBe('stream_interrupted');
  });
});
