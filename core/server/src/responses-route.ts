/**
 * OpenAI's Responses API on the gateway (docs/responses.md): POST /v1/responses is a gateway call of kind
 * `responses` (the pipeline translates it, or forwards it to a provider that speaks it); GET /v1/responses/{id}
 * (with `include`), DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items are served from the response
 * store, for every provider alike, within the caller's workspace and with the same scopes as POST. An id the store
 * does not have goes on to the provider the call names, if it names one (passthrough: the provider's own responses).
 */
import { responseStore } from '@gateway/pipeline';
import { Errors, GatewayError, type JsonObject, type StoredResponse } from '@gateway/sdk';
import { checkCallScope } from './call-scope.ts';
import { authenticate, gatewaySecret, type HandlerDeps, handleGatewayCall } from './gateway-handler.ts';

export type ResponsesRoute = { op: 'create' } | { op: 'retrieve' | 'delete' | 'inputItems'; id: string };

const PREFIX = '/v1/responses';

/** The Responses route of a request, or undefined (then it is not one: `/cancel` and others pass through). */
export function responsesRoute(method: string, pathname: string): ResponsesRoute | undefined {
  if (!pathname.startsWith(PREFIX)) return undefined;
  const rest = pathname.slice(PREFIX.length);
  if (rest === '' || rest === '/') return method === 'POST' ? { op: 'create' } : undefined;
  const parts = rest.slice(1).split('/');
  const id = decodeURIComponent(parts[0] ?? '');
  if (!id) return undefined;
  if (parts.length === 1) return method === 'GET' ? { op: 'retrieve', id } : method === 'DELETE' ? { op: 'delete', id } : undefined;
  if (parts.length === 2 && parts[1] === 'input_items' && method === 'GET') return { op: 'inputItems', id };
  return undefined;
}

/** The `include` values SPEC.md names, and those OpenAI adds that concern stored content. */
const INCLUDES = new Set([
  'file_search_call.results',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
  'web_search_call.action.sources',
  'code_interpreter_call.outputs',
]);

export function includeOf(params: URLSearchParams): Set<string> {
  const values = [...params.getAll('include'), ...params.getAll('include[]')].flatMap((v) => v.split(',')).filter(Boolean);
  for (const value of values) if (!INCLUDES.has(value)) throw Errors.badRequest(`include: ${JSON.stringify(value)} is not one of ${[...INCLUDES].join(', ')}`, 'include');
  return new Set(values);
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Output items as `include` asks: file search results only when included. */
export function outputAsIncluded(items: readonly unknown[], include: Set<string>): unknown[] {
  if (include.has('file_search_call.results')) return [...items];
  return items.map((item) => (isObject(item) && item.type === 'file_search_call' && 'results' in item ? { ...item, results: null } : item));
}

/** Input items as `include` asks: image URLs of input images and computer screenshots only when included. */
export function inputAsIncluded(items: readonly JsonObject[], include: Set<string>): JsonObject[] {
  const images = include.has('message.input_image.image_url');
  const screenshots = include.has('computer_call_output.output.image_url');
  return items.map((item) => {
    if (!images && Array.isArray(item.content))
      return { ...item, content: item.content.map((part) => (isObject(part) && part.type === 'input_image' && 'image_url' in part ? { ...part, image_url: null } : part)) };
    if (!screenshots && item.type === 'computer_call_output' && isObject(item.output)) return { ...item, output: { ...item.output, image_url: null } };
    return item;
  });
}

/** GET input_items: `after` (an item id), `limit` 1..100 (default 20), `order` asc | desc (default desc). */
export function inputItemsPage(stored: StoredResponse, params: URLSearchParams, include: Set<string>): JsonObject {
  const order = params.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw Errors.badRequest('order: must be asc or desc', 'order');
  const limitText = params.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw Errors.badRequest('limit: must be an integer from 1 to 100', 'limit');
  let items = inputAsIncluded(stored.inputItems, include);
  if (order === 'desc') items = items.reverse();
  const after = params.get('after');
  if (after) {
    const at = items.findIndex((item) => item.id === after);
    if (at < 0) throw Errors.badRequest(`after: no input item ${JSON.stringify(after)} in this response`, 'after');
    items = items.slice(at + 1);
  }
  const data = items.slice(0, limit);
  return {
    object: 'list',
    data,
    first_id: (data[0]?.id as string | undefined) ?? null,
    last_id: (data[data.length - 1]?.id as string | undefined) ?? null,
    has_more: items.length > limit,
  };
}

/** A call that names where it goes (a provider, a config or a virtual key): the provider may have what the store has not. */
function namesProvider(values: Record<string, string | undefined>): boolean {
  return values['x-gateway-provider'] !== undefined || values['x-gateway-config'] !== undefined || values['x-gateway-virtual-key'] !== undefined;
}

/** Not in the store: 404, or the provider's own answer when the call names one (passthrough, as before issue #19). */
function notStored(request: Request, id: string, values: Record<string, string | undefined>, search: string, deps: HandlerDeps): Promise<Response> {
  if (!namesProvider(values)) throw Errors.notFound(`Response with id '${id}' not found`);
  const { pathname } = new URL(request.url);
  return handleGatewayCall(request, 'proxy', pathname.slice(3), search, deps);
}

async function serveStored(request: Request, route: Exclude<ResponsesRoute, { op: 'create' }>, search: string, deps: HandlerDeps): Promise<Response> {
  const values = request.headers.toJSON() as Record<string, string | undefined>;
  try {
    const auth = authenticate(gatewaySecret(values['x-gateway-api-key'], values.authorization, values['x-api-key']), deps.authenticator);
    const caller = auth instanceof Promise ? await auth : auth;
    checkCallScope(caller, 'responses');
    const params = new URLSearchParams(search);
    const store = responseStore();
    if (route.op === 'delete') {
      const kept = await store?.get(caller.workspaceId, route.id);
      if (!store || !kept || !(await store.delete(caller.workspaceId, route.id))) return await notStored(request, route.id, values, search, deps);
      // A native provider's own copy goes too when the call names where it goes; its answer does not undo ours.
      if (!kept.translated && namesProvider(values)) {
        const upstream = await notStored(request, route.id, values, search, deps);
        await upstream.body?.cancel();
      }
      return Response.json({ id: route.id, object: 'response', deleted: true });
    }
    const include = includeOf(params);
    const stored = await store?.get(caller.workspaceId, route.id);
    if (!stored) return await notStored(request, route.id, values, search, deps);
    if (route.op === 'inputItems') return Response.json(inputItemsPage(stored, params, include));
    const output = Array.isArray(stored.response.output) ? stored.response.output : [];
    return Response.json({ ...stored.response, output: outputAsIncluded(output, include) });
  } catch (error) {
    const err = GatewayError.from(error, { phase: 'responses' });
    if (err.status >= 500) deps.logger.error({ err: err.cause ?? err }, 'stored response route failed');
    return err.toResponse();
  }
}

export function handleResponsesCall(request: Request, route: ResponsesRoute, search: string, deps: HandlerDeps): Promise<Response> {
  if (route.op === 'create') return handleGatewayCall(request, 'responses', '/responses', search, deps);
  return serveStored(request, route, search, deps);
}
