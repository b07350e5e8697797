// Provider servers that break their streams on cue, for the continuation tests (issue #15): OpenAI chat-completion
// SSE and Anthropic Messages SSE written byte for byte as the two APIs write them, on the shared mock harness
// (tests/mocks/harness.ts), which records every request. Each request takes the next scripted answer from the queue:
// the text in pieces (one content event each), then how the answer ends — whole, whole without `[DONE]` (or without
// `message_stop`), cut (the connection dropped), stalled (nothing more, never ended), closed early (no finish), or an
// invalid event — or a fixed status and body.

import { isObj, type MockServer, parseJson, type RecordedRequest, startMockServer } from '../mocks/harness.ts';

export type Ending = 'whole' | 'no-done' | 'cut' | 'stall' | 'closed' | 'invalid';

export interface StreamScript {
  pieces: string[];
  end: Ending;
  /** Before the first content event (after the opening role / message_start event). */
  firstContentDelayMs?: number;
  /** The invalid bytes of `end: 'invalid'` (default: a data line that is not JSON). */
  invalid?: string;
}

/** A fixed answer: a status and a body sent verbatim, optionally with a content-length shorter than promised. */
export interface FixedScript {
  status: number;
  body: string;
  /** Send only this many bytes of `body`, then drop the connection. */
  cutAfterBytes?: number;
}

export type Script = StreamScript | FixedScript;

export interface FaultyProvider extends MockServer<RecordedRequest> {
  /** The base URL a config's `custom_host` takes (`…/v1`). */
  base: string;
  enqueue(...scripts: Script[]): void;
  reset(): void;
  /** The JSON bodies the provider was sent, in order. */
  bodies(): Record<string, unknown>[];
}

const encoder = new TextEncoder();
const PROMPT_TOKENS = 11;

/** Lets Bun write what was enqueued before the connection is dropped. */
const CUT_SETTLE_MS = 30;

function sseResponse(write: (send: (text: string) => void) => Promise<'close' | 'cut' | 'stall'>, signal: AbortSignal): Response {
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      let how: 'close' | 'cut' | 'stall';
      try {
        how = await write((text) => {
          if (!signal.aborted) controller.enqueue(encoder.encode(text));
        });
      } catch {
        return;
      }
      if (how === 'close') controller.close();
      else if (how === 'cut') {
        await Bun.sleep(CUT_SETTLE_MS);
        controller.error(); // Bun drops the connection: no terminating chunk
      }
      // stall: neither
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' } });
}

function fixedResponse(script: FixedScript): Response {
  if (script.cutAfterBytes === undefined) return new Response(script.body, { status: script.status, headers: { 'content-type': 'application/json' } });
  const bytes = encoder.encode(script.body);
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(bytes.slice(0, script.cutAfterBytes));
      await Bun.sleep(CUT_SETTLE_MS);
      controller.error();
    },
  });
  return new Response(body, { status: script.status, headers: { 'content-type': 'application/json', 'content-length': String(bytes.byteLength) } });
}

const isStream = (s: Script): s is StreamScript => 'pieces' in s;

/** OpenAI's chat.completion.chunk events, as its API writes them (usage only when the request asked for it). */
async function openAIStream(script: StreamScript, body: Record<string, unknown>, id: string, send: (t: string) => void): Promise<'close' | 'cut' | 'stall'> {
  const withUsage = isObj(body.stream_options) && body.stream_options.include_usage === true;
  const model = typeof body.model === 'string' ? body.model : 'gpt-4o-mini';
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created: 1_750_000_000,
      model,
      system_fingerprint: 'fp_mock',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(withUsage ? { usage: null } : {}),
    })}\n\n`;
  send(chunk({ role: 'assistant', content: '', refusal: null }, null));
  if (script.firstContentDelayMs) await Bun.sleep(script.firstContentDelayMs);
  for (const piece of script.pieces) send(chunk({ content: piece }, null));
  switch (script.end) {
    case 'cut':
      return 'cut';
    case 'stall':
      return 'stall';
    case 'closed':
      return 'close';
    case 'invalid':
      send(script.invalid ?? 'data: {"id":"chatcmpl-broken","choices":[{"delta":{"content":"GARBAGE\n\n');
      return 'stall';
  }
  send(chunk({}, 'stop'));
  if (withUsage) {
    const usage = { prompt_tokens: PROMPT_TOKENS, completion_tokens: script.pieces.length, total_tokens: PROMPT_TOKENS + script.pieces.length };
    send(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1_750_000_000, model, system_fingerprint: 'fp_mock', choices: [], usage })}\n\n`);
  }
  if (script.end === 'whole') send('data: [DONE]\n\n');
  return 'close';
}

/** Anthropic's Messages events, as its API writes them. */
async function anthropicStream(script: StreamScript, body: Record<string, unknown>, id: string, send: (t: string) => void): Promise<'close' | 'cut' | 'stall'> {
  const model = typeof body.model === 'string' ? body.model : 'claude-sonnet-4-5';
  const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  send(
    event('message_start', {
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: PROMPT_TOKENS, output_tokens: 1 } },
    }),
  );
  send(event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
  send(event('ping', { type: 'ping' }));
  if (script.firstContentDelayMs) await Bun.sleep(script.firstContentDelayMs);
  for (const piece of script.pieces) send(event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } }));
  switch (script.end) {
    case 'cut':
      return 'cut';
    case 'stall':
      return 'stall';
    case 'closed':
      return 'close';
    case 'invalid':
      send(script.invalid ?? 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":\n\n');
      return 'stall';
  }
  send(event('content_block_stop', { type: 'content_block_stop', index: 0 }));
  send(event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: script.pieces.length } }));
  if (script.end === 'whole') send(event('message_stop', { type: 'message_stop' }));
  return 'close';
}

/** A faulty provider speaking OpenAI's (`openai`) or Anthropic's (`anthropic`) wire format. */
export function startFaultyProvider(wire: 'openai' | 'anthropic'): FaultyProvider {
  let queue: Script[] = [];
  let n = 0;
  const server = startMockServer({
    idleTimeout: 0, // a stall must stall: Bun would close an idle request after 10 s
    handle: ({ request, text }) => {
      const script = queue.shift();
      if (!script) return Response.json({ error: { message: 'no answer scripted', type: 'server_error' } }, { status: 500 });
      if (!isStream(script)) return fixedResponse(script);
      const body = (parseJson(text)?.value ?? {}) as Record<string, unknown>;
      n++;
      const id = wire === 'openai' ? `chatcmpl-mock${n}` : `msg_mock${n}`;
      return sseResponse((send) => (wire === 'openai' ? openAIStream(script, body, id, send) : anthropicStream(script, body, id, send)), request.signal);
    },
  });
  return {
    ...server,
    base: `${server.url}/v1`,
    enqueue: (...scripts) => {
      queue.push(...scripts);
    },
    reset: () => {
      queue = [];
      n = 0;
      server.requests.length = 0;
    },
    bodies: () => server.requests.map((r) => (parseJson(r.body)?.value ?? {}) as Record<string, unknown>),
  };
}

/** OpenAI's error body, as its API writes it. */
export function openAIError(status: number, message: string): FixedScript {
  return { status, body: JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } }) };
}
