/**
 * The stream relay's cost on a healthy stream (the hot path of every streamed answer): a 200-chunk OpenAI SSE answer
 * relayed through `relayStream` with the pass-through processor, as a provider's stream would be, per chunk and per
 * stream. The continuation machinery (issue #15) must cost a healthy stream next to nothing: it only remembers the
 * text sent.
 */
import { relayStream } from '../../core/pipeline/src/streams/relay.ts';
import { OpenAiSsePassThrough } from '../../core/pipeline/src/streams/processors.ts';
import { best, budget, check, figure } from './measure.ts';

const CHUNKS = 200;
const encoder = new TextEncoder();
const frame = (i: number) =>
  `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"word${i} "},"finish_reason":null}]}\n\n`;
const parts = [
  ...Array.from({ length: CHUNKS }, (_, i) => encoder.encode(frame(i))),
  encoder.encode(
    'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
  ),
];

/** One healthy stream through the relay, read to its end; resolves with the bytes the client got. */
async function relayOnce(): Promise<number> {
  let k = 0;
  const upstream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const part = parts[k++];
      if (part) controller.enqueue(part);
      else controller.close();
    },
  });
  let complete = false;
  const out = relayStream(upstream, {
    provider: 'bench',
    processor: new OpenAiSsePassThrough(),
    captureLimit: 65_536,
    idleTimeoutMs: 60_000,
    abortUpstream: () => {},
    onEnd: (end) => {
      complete = end.complete;
    },
  });
  const reader = out.getReader();
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
  }
  check(complete, 'the relayed stream ended complete');
  return bytes;
}

const expected = parts.reduce((n, p) => n + p.byteLength, 0);
check((await relayOnce()) === expected, 'every byte was relayed');
const { relay } = await best(5, 300, { relay: relayOnce }, 300);
figure('per stream of 200 chunks', relay);
budget('per chunk', relay / (CHUNKS + 1), 15);
