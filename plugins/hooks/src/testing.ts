/** Test support: small checks (pass, fail, throw, slow, transform) and a request as the pipeline hands it over. */
import type { GatewayConfig, GatewayRequest, GuardrailCheck, GuardrailCheckContext, JsonObject } from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';

/** The text a test check judges: the last message (input) or the first choice (output). */
export function judgedText(ctx: GuardrailCheckContext): string {
  if (ctx.phase === 'output') {
    const choice = (ctx.responseBody?.choices as JsonObject[] | undefined)?.[0];
    const message = choice?.message as JsonObject | undefined;
    return String(message?.content ?? choice?.text ?? '');
  }
  const messages = ctx.request.body?.messages as JsonObject[] | undefined;
  return String(messages?.[messages.length - 1]?.content ?? '');
}

export interface Calls {
  /** Check id → how many times it ran. */
  count: Record<string, number>;
  /** What each run saw (the judged text). */
  seen: { id: string; phase: string; text: string }[];
}

/** The test checks, under the `test` plugin prefix; `calls` records every run. */
export function testChecks(calls: Calls = { count: {}, seen: [] }): GuardrailCheck[] {
  const note = (id: string, ctx: GuardrailCheckContext) => {
    calls.count[id] = (calls.count[id] ?? 0) + 1;
    calls.seen.push({ id, phase: ctx.phase, text: judgedText(ctx) });
  };
  const replaceText = (ctx: GuardrailCheckContext, fn: (text: string) => string): JsonObject => {
    if (ctx.phase === 'output') {
      const body = ctx.responseBody as JsonObject;
      const choices = (body.choices as JsonObject[]).map((c) => ({ ...c, message: { ...(c.message as JsonObject), content: fn(String((c.message as JsonObject).content)) } }));
      return { ...body, choices };
    }
    const body = ctx.request.body as JsonObject;
    const messages = (body.messages as JsonObject[]).map((m) => ({ ...m, content: typeof m.content === 'string' ? fn(m.content) : m.content }));
    return { ...body, messages };
  };
  return [
    {
      id: 'test.pass',
      run: async (ctx) => {
        note('test.pass', ctx);
        return { verdict: true, data: { ok: true } };
      },
    },
    {
      id: 'test.fail',
      run: async (ctx) => {
        note('test.fail', ctx);
        return { verdict: false, data: { reason: 'always fails' } };
      },
    },
    {
      // Fails when the judged text contains `word`.
      id: 'test.contains',
      validate: (p) => {
        const params = p as Record<string, unknown>;
        return typeof params.word === 'string' && params.word !== '' ? [] : ['word: must be a non-empty string'];
      },
      run: async (ctx, params) => {
        note('test.contains', ctx);
        const found = judgedText(ctx).includes(String(params.word));
        return { verdict: !found, data: { found } };
      },
    },
    {
      id: 'test.throws',
      run: async (ctx) => {
        note('test.throws', ctx);
        throw new Error('the check broke');
      },
    },
    {
      id: 'test.throwsSync',
      run: ((ctx: GuardrailCheckContext) => {
        note('test.throwsSync', ctx);
        throw new Error('broke before any promise');
      }) as GuardrailCheck['run'],
    },
    {
      // Answers after `ms` (parameter), passing.
      id: 'test.slow',
      run: async (ctx, params) => {
        note('test.slow', ctx);
        await Bun.sleep(Number(params.ms ?? 50));
        calls.count['test.slow:done'] = (calls.count['test.slow:done'] ?? 0) + 1;
        return { verdict: params.verdict !== false, data: { slept: Number(params.ms ?? 50) } };
      },
    },
    {
      // Replaces every `from` with `to` (parameters) in the judged text; passes.
      id: 'test.replace',
      run: async (ctx, params) => {
        note('test.replace', ctx);
        return { verdict: true, transformed: replaceText(ctx, (t) => t.split(String(params.from)).join(String(params.to))) };
      },
    },
    {
      // Appends `suffix` to the judged text; passes.
      id: 'test.append',
      run: async (ctx, params) => {
        note('test.append', ctx);
        return { verdict: true, transformed: replaceText(ctx, (t) => t + String(params.suffix)) };
      },
    },
    {
      id: 'test.nonsense',
      run: (async () => ({ verdict: 'yes' })) as unknown as GuardrailCheck['run'],
    },
    {
      id: 'test.cheap',
      run: (ctx) => Promise.resolve({ verdict: ctx.request.body !== undefined }),
    },
  ];
}

export function checkMap(calls?: Calls): Map<string, GuardrailCheck> {
  return new Map(testChecks(calls).map((c) => [c.id, c]));
}

export function chatBody(content = 'hello there'): JsonObject {
  return { model: 'gpt-test', messages: [{ role: 'user', content }] };
}

/** A request as the server builds it, with a config. */
export function testRequest(config: GatewayConfig, body: JsonObject | undefined = chatBody(), overrides: Partial<GatewayRequest> = {}): GatewayRequest {
  return buildGatewayRequest({ traceId: 'trace-hooks', body, config, ...overrides });
}

export function chatAnswer(content = 'the answer'): JsonObject {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-test',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  };
}

/** SSE chunks of a chat answer, a word at a time, then `[DONE]` unless `done` is false. */
export function sseChunks(text: string, done = true): string[] {
  const meta = { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-test' };
  const words = text.split(/(?<= )/);
  const events = [
    { ...meta, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    ...words.map((w) => ({ ...meta, choices: [{ index: 0, delta: { content: w }, finish_reason: null }] })),
    { ...meta, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  ];
  const out = events.map((e) => `data: ${JSON.stringify(e)}\n\n`);
  if (done) out.push('data: [DONE]\n\n');
  return out;
}
