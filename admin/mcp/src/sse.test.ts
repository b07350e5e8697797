import { expect, test } from 'bun:test';
import { passEvents } from './sse.ts';

const encoder = new TextEncoder();

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

test('events split across chunks, CRLF and LF ends, ids kept; only the hooked message is rewritten', async () => {
  const seen: unknown[] = [];
  let ended: unknown = 'not yet';
  const out = passEvents(
    streamOf(['id: 1\r\nevent: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress"', '}\r\n\r\nid: 2\ndata: {"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a"},{"name":"b"}]}}\n', '\n: comment\n\n']),
    (message) => {
      seen.push(message);
      const m = message as { id?: number; result?: { tools: { name: string }[] } };
      return m.id === 7 && m.result ? { ...m, result: { tools: m.result.tools.filter((t) => t.name === 'a') } } : undefined;
    },
    (error) => {
      ended = error;
    },
  );
  const text = await new Response(out).text();
  expect(seen).toHaveLength(2);
  expect(text).toContain('id: 1\r\nevent: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}');
  expect(text).toContain('id: 2\ndata: {"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a"}]}}');
  expect(text).toContain(': comment');
  expect(ended).toBeUndefined();
});

test('a client that goes away ends the exchange with a reason', async () => {
  let ended: unknown;
  const never = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => undefined) });
  const out = passEvents(never, () => undefined, (error) => {
    ended = error;
  });
  await out.cancel('gone');
  expect(ended).toBe('gone');
});
