/**
 * A server-sent-events stream passed through message by message: each event's `data` that is JSON goes to
 * `onMessage`, which may give a replacement (a filtered tools/list result), or a promise of one (a tool result the
 * tool-call phase judges: the event waits for it, the ones after it too); the event is sent on unchanged otherwise.
 * `onEnd` runs once when the stream ends, fails or is cancelled by the client.
 */
const encoder = new TextEncoder();
const EVENT_END = /\r\n\r\n|\n\n|\r\r/;

export type MessageHook = (message: unknown) => unknown;

function rewrite(block: string, onMessage: MessageHook): string | Promise<string> {
  const lines = block.split(/\r\n|\n|\r/);
  const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
  if (data.length === 0) return block;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.join('\n'));
  } catch {
    return block;
  }
  const replaced = onMessage(parsed);
  const rebuilt = (value: unknown) => (value === undefined ? block : [...lines.filter((l) => !l.startsWith('data:')), `data: ${JSON.stringify(value)}`].join('\n'));
  return replaced instanceof Promise ? replaced.then(rebuilt) : rebuilt(replaced);
}

export function passEvents(body: ReadableStream<Uint8Array>, onMessage: MessageHook, onEnd: (error?: unknown) => void): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let ended = false;
  const end = (error?: unknown) => {
    if (ended) return;
    ended = true;
    onEnd(error);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) {
            buffer += decoder.decode();
            if (buffer.trim()) controller.enqueue(encoder.encode(`${await rewrite(buffer, onMessage)}\n\n`));
            controller.close();
            end();
            return;
          }
          buffer += decoder.decode(value, { stream: true });
          let out = '';
          for (let match = EVENT_END.exec(buffer); match; match = EVENT_END.exec(buffer)) {
            out += `${await rewrite(buffer.slice(0, match.index), onMessage)}\n\n`;
            buffer = buffer.slice(match.index + match[0].length);
          }
          if (out) {
            controller.enqueue(encoder.encode(out));
            return;
          }
        }
      } catch (error) {
        end(error);
        controller.error(error);
      }
    },
    async cancel(reason) {
      end(reason ?? new Error('the client went away'));
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}
