// POST /responses of the OpenAI mock: OpenAI's Responses API as its wire shows it (the Response object, and the
// named SSE events `event: <type>` / `data: {...}` with sequence numbers and no `[DONE]`). It answers by echoing the
// last user text, or with a call to the one function tool when tool_choice asks for it, and keeps its responses so that
// `previous_response_id` works as it does at OpenAI (the provider's own state); GET and DELETE /responses/{id} read and
// remove them.

import * as fx from './openai-fixtures.ts';
import type { Json, Reply } from './openai-routes.ts';

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The text of the last user message of a Responses input (a string, or message items). */
function lastUserText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i];
    if (isObj(item) && item.role === 'user') {
      if (typeof item.content === 'string') return item.content;
      if (Array.isArray(item.content)) return item.content.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('');
    }
  }
  return '';
}

export function createResponsesApi(ids: fx.IdSource, seconds: () => number) {
  const kept = new Map<string, { input: unknown[]; output: Json[]; response: Json }>();

  function create(body: Json): Reply {
    if (typeof body.model !== 'string') return { type: 'json', status: 400, body: fx.errors.missingParam('model').body };
    let history: unknown[] = [];
    if (typeof body.previous_response_id === 'string') {
      const prev = kept.get(body.previous_response_id);
      if (!prev)
        return {
          type: 'json',
          status: 404,
          body: fx.errorBody({ message: `Previous response with id '${body.previous_response_id}' not found.`, type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' }),
        };
      history = [...prev.input, ...prev.output];
    }
    const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : Array.isArray(body.input) ? body.input : [];
    const all = [...history, ...input];
    const text = lastUserText(all);
    const tools = Array.isArray(body.tools) ? body.tools.filter(isObj) : [];
    const fn = tools.find((t) => t.type === 'function');
    const callTool = fn && (body.tool_choice === 'required' || (isObj(body.tool_choice) && body.tool_choice.name === fn.name));
    const output: Json[] = callTool
      ? [{ id: ids.next('fc_', 48), type: 'function_call', status: 'completed', arguments: JSON.stringify({ text }), call_id: ids.next('call_', 24), name: String(fn.name) }]
      : [{ id: ids.next('msg_', 48), type: 'message', status: 'completed', content: [{ type: 'output_text', annotations: [], logprobs: [], text: fx.echoAnswer(text) }], role: 'assistant' }];
    const inputTokens = fx.countWords(JSON.stringify(all));
    const outputTokens = fx.countWords(JSON.stringify(output));
    const response: Json = {
      id: ids.next('resp_', 48),
      object: 'response',
      created_at: seconds(),
      status: 'completed',
      background: false,
      error: null,
      incomplete_details: null,
      instructions: body.instructions ?? null,
      max_output_tokens: body.max_output_tokens ?? null,
      model: body.model,
      output,
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      previous_response_id: body.previous_response_id ?? null,
      reasoning: { effort: null, summary: null },
      store: body.store ?? true,
      temperature: body.temperature ?? 1,
      text: { format: { type: 'text' } },
      tool_choice: body.tool_choice ?? 'auto',
      tools,
      top_p: body.top_p ?? 1,
      truncation: body.truncation ?? 'disabled',
      usage: { input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: outputTokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inputTokens + outputTokens },
      user: body.user ?? null,
      metadata: body.metadata ?? {},
    };
    if (body.store !== false) kept.set(response.id as string, { input, output, response });
    if (body.stream !== true) return { type: 'json', status: 200, body: response };
    return { type: 'sse', status: 200, events: events(response, output), named: true, noDone: true };
  }

  /** The stream OpenAI sends for `response`: lifecycle events around each output item's own events. */
  function events(response: Json, output: Json[]): Json[] {
    const out: Json[] = [];
    const start = { ...response, status: 'in_progress', output: [], usage: null };
    out.push({ type: 'response.created', response: start }, { type: 'response.in_progress', response: start });
    output.forEach((item, index) => {
      if (item.type === 'function_call') {
        out.push({ type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
        out.push({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: index, delta: item.arguments });
        out.push({ type: 'response.function_call_arguments.done', item_id: item.id, output_index: index, arguments: item.arguments });
      } else {
        const text = String((item.content as Json[])[0]?.text ?? '');
        out.push({ type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', content: [] } });
        out.push({ type: 'response.content_part.added', item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } });
        for (const delta of fx.tokenize(text)) out.push({ type: 'response.output_text.delta', item_id: item.id, output_index: index, content_index: 0, delta, logprobs: [] });
        out.push({ type: 'response.output_text.done', item_id: item.id, output_index: index, content_index: 0, text, logprobs: [] });
        out.push({ type: 'response.content_part.done', item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', annotations: [], logprobs: [], text } });
      }
      out.push({ type: 'response.output_item.done', output_index: index, item });
    });
    out.push({ type: 'response.completed', response });
    return out.map((event, i) => ({ type: event.type, sequence_number: i, ...event }));
  }

  const notFound = (id: string): Reply => ({
    type: 'json',
    status: 404,
    body: fx.errorBody({ message: `Response with id '${id}' not found.`, type: 'invalid_request_error', param: null, code: null }),
  });

  /** GET /responses/{id} and DELETE: the provider's own copy. */
  function retrieve(id: string): Reply {
    const found = kept.get(id);
    return found ? { type: 'json', status: 200, body: found.response } : notFound(id);
  }
  function remove(id: string): Reply {
    return kept.delete(id) ? { type: 'json', status: 200, body: { id, object: 'response', deleted: true } } : notFound(id);
  }

  return { create, retrieve, remove };
}
