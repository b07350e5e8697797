/** The reference fixture: OpenAI's own wire format (the gateway passes it through untranslated). */
import type { ProviderFixture, StartedServer } from '../fixture.ts';
import { embeddingFor, ERROR_MESSAGE } from '../protocol.ts';
import { answer, type NeutralRequest, pieces } from '../protocol-answer.ts';

type Part = { type: string; text?: string };
type Message = { role: string; content: string | Part[] | null; tool_calls?: unknown[] };

function neutral(body: Record<string, unknown>): NeutralRequest {
  const messages = body.messages as Message[];
  const text = (c: Message['content']) => (typeof c === 'string' ? c : (c ?? []).filter((p) => p.type === 'text').map((p) => p.text).join(' '));
  return {
    model: String(body.model),
    system: messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => text(m.content)),
    turns: messages
      .filter((m) => m.role !== 'system' && m.role !== 'developer')
      .map((m) => ({
        role: m.role === 'tool' ? 'tool' : (m.role as 'user' | 'assistant'),
        text: text(m.content),
        images: Array.isArray(m.content) ? m.content.filter((p) => p.type === 'image_url').length : 0,
      })),
    tools: ((body.tools as { function: { name: string } }[] | undefined) ?? []).map((t) => t.function.name),
    jsonMode: (body.response_format as { type?: string } | undefined)?.type === 'json_object',
    stop: typeof body.stop === 'string' ? [body.stop] : ((body.stop as string[] | undefined) ?? []),
  };
}

function usage(input: number, output: number) {
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: 2 },
    completion_tokens_details: { reasoning_tokens: 3 },
  };
}

async function start(): Promise<StartedServer> {
  const requests: StartedServer['requests'] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url);
      const bodyText = await request.text();
      requests.push({ method: request.method, path: url.pathname, headers: Object.fromEntries(request.headers), body: bodyText });
      const body = JSON.parse(bodyText || '{}') as Record<string, unknown>;
      if (url.pathname === '/v1/embeddings') {
        const inputs = (Array.isArray(body.input) ? body.input : [body.input]) as string[];
        const data = inputs.map((s, index) => {
          const v = embeddingFor(s);
          const embedding = body.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v;
          return { object: 'embedding', index, embedding };
        });
        return Response.json({ object: 'list', data, model: body.model, usage: { prompt_tokens: inputs.length, total_tokens: inputs.length } });
      }
      const result = answer(neutral(body));
      if (result.kind === 'error')
        return Response.json({ error: { message: ERROR_MESSAGE, type: 'invalid_request_error', param: null, code: null } }, { status: 400 });
      const id = 'chatcmpl-conformance';
      const created = Math.floor(Date.now() / 1000);
      const toolCalls = result.kind === 'tools' ? result.calls.map((c, i) => ({ id: `call_${i}`, type: 'function', function: { name: c.name, arguments: c.args } })) : undefined;
      const finish = result.kind === 'tools' ? 'tool_calls' : 'stop';
      if (!body.stream) {
        const message = result.kind === 'tools' ? { role: 'assistant', content: null, tool_calls: toolCalls } : { role: 'assistant', content: result.text };
        return Response.json({ id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message, finish_reason: finish, logprobs: null }], usage: usage(result.inputTokens, result.outputTokens) });
      }
      const chunk = (delta: object, finish_reason: string | null = null) =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason }] })}\n\n`;
      let out = chunk({ role: 'assistant', content: '' });
      if (result.kind === 'text') for (const p of pieces(result.text)) out += chunk({ content: p });
      else
        result.calls.forEach((c, index) => {
          out += chunk({ tool_calls: [{ index, id: `call_${index}`, type: 'function', function: { name: c.name, arguments: '' } }] });
          for (const p of pieces(c.args, 6)) out += chunk({ tool_calls: [{ index, function: { arguments: p } }] });
        });
      out += chunk({}, finish);
      if ((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage)
        out += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage: usage(result.inputTokens, result.outputTokens) })}\n\n`;
      out += 'data: [DONE]\n\n';
      return new Response(out, { headers: { 'content-type': 'text/event-stream' } });
    },
  });
  return {
    headers: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `http://127.0.0.1:${server.port}/v1`, authorization: 'Bearer sk-conformance' },
    chatModel: 'gpt-4o-mini',
    embeddingModel: 'text-embedding-3-small',
    requests,
    stop: () => server.stop(true),
  };
}

const fixture: ProviderFixture = { name: 'openai', start };
export default fixture;
