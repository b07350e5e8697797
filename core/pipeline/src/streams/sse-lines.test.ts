import { describe, expect, test } from 'bun:test';
import { SseDataEvents } from './sse-lines.ts';

function collector(): { sse: SseDataEvents; seen: string[] } {
  const seen: string[] = [];
  const sse = new SseDataEvents((payload) => {
    seen.push(payload);
    return `<${payload}>`;
  });
  return { sse, seen };
}

describe('SseDataEvents', () => {
  test('joins lines cut between pieces and returns what onEvent made of each event', () => {
    const { sse, seen } = collector();
    let out = '';
    for (const piece of ['da', 'ta: {"a":', '1}\n', '\ndata: [DONE]\n\n']) out += sse.push(piece);
    expect(seen).toEqual(['{"a":1}', '[DONE]']);
    expect(out).toBe('<{"a":1}><[DONE]>');
  });

  test('accepts CRLF, joins multi-line data with \\n, strips one space, ignores other fields and empty events', () => {
    const { sse, seen } = collector();
    sse.push('event: x\r\n: comment\r\ndata:one\r\ndata:  two\r\n\r\n\r\n');
    expect(seen).toEqual(['one\n two']);
  });

  test('end delivers an event whose blank line, or whole last line, never came', () => {
    const { sse, seen } = collector();
    expect(sse.push('data: a\n\ndata: b')).toBe('<a>');
    expect(sse.end()).toBe('<b>');
    expect(seen).toEqual(['a', 'b']);
  });
});
