/**
 * POST /prompts/:promptId/render and /completions. `:promptId` is an id or a slug (the caller's workspace), with
 * `@latest` or `@<n>`; without a suffix the published version. The body is `variables` (required) and any
 * hyperparameter at its root, over the saved ones (render.ts). Render answers `{success: true, data}`, data being the
 * body for /chat/completions (or /completions for a text template). Completions sends that body through the
 * gateway's own pipeline (service `gatewayCalls`) to the prompt's target, as the caller: hooks, cache, limits, retries
 * and the request log apply as to a client's call, with its `x-gateway-trace-id`, `x-gateway-span-name` and
 * `x-gateway-metadata`. A whole answer comes back as `{status, headers, body}`; with
 * `stream: true` the events come as /chat/completions streams them; an error comes as the gateway's error answer.
 */
import type { AdminRequest, AdminRoute, Caller, GatewayCalls, GatewayConfig, JsonObject } from '@gateway/sdk';
import { Errors } from '@gateway/sdk';
import type { PromptAccessRules } from '../access.ts';
import type { PromptTarget } from '../definition.ts';
import { renderBody } from '../render.ts';
import { type LoadedVersion, parseReference, type PromptStore, type StoredEntry, versionNumber } from '../store.ts';

export interface RunRouteDeps {
  store: PromptStore;
  access: PromptAccessRules;
  /** The gateway's pipeline; undefined until the gateway is ready. */
  calls: () => GatewayCalls | undefined;
}

interface Rendered {
  entry: StoredEntry;
  loaded: LoadedVersion;
  body: JsonObject;
}

/** The body: `variables` (an object) and the hyperparameters beside it. */
function splitBody(raw: unknown): { variables: Record<string, unknown>; overrides: JsonObject } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw Errors.badRequest('The request needs a JSON object body with variables', 'body');
  const { variables, ...overrides } = raw as Record<string, unknown>;
  if (variables === undefined) throw Errors.badRequest('variables is required (an object; {} when the template has none)', 'variables');
  if (variables === null || typeof variables !== 'object' || Array.isArray(variables)) throw Errors.badRequest('variables must be an object', 'variables');
  if (overrides.stream !== undefined && typeof overrides.stream !== 'boolean') throw Errors.badRequest('stream must be a boolean', 'stream');
  return { variables: variables as Record<string, unknown>, overrides: overrides as JsonObject };
}

/** `x-gateway-metadata` as a client's call reads it: a JSON object, non-string values as their JSON; 400 otherwise. */
export function metadataOf(value: string | null): Readonly<Record<string, string>> | undefined {
  if (value === null || value === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw Errors.badRequest('x-gateway-metadata must be a JSON object of string values', 'x-gateway-metadata');
  const out: Record<string, string> = Object.create(null);
  for (const [key, item] of Object.entries(parsed)) out[key] = typeof item === 'string' ? item : JSON.stringify(item);
  return out;
}

/** The stored target as a config, resolved for the caller as the config header would be. */
export function targetConfig(calls: GatewayCalls, target: PromptTarget, caller: Caller): GatewayConfig {
  if ('config' in target) return calls.resolveConfig(target.config, caller);
  return calls.resolveConfig(JSON.stringify(target), caller);
}

/** An organisation-service key runs a prompt of any workspace in that workspace (its stored access, its log). */
function callerFor(caller: Caller, entry: StoredEntry): Caller {
  return caller.workspaceId === entry.workspaceId ? caller : { ...caller, workspaceId: entry.workspaceId };
}

export function runRoutes(deps: RunRouteDeps): AdminRoute[] {
  const { store, access } = deps;

  async function rendered(req: AdminRequest, want: 'view' | 'run'): Promise<Rendered> {
    const { variables, overrides } = splitBody(req.body);
    const { ref, choice } = parseReference(req.params.promptId ?? '');
    const entry = store.find(ref, req.caller);
    await access.require(req, entry.workspaceId, want, 'No such prompt');
    const loaded = await store.version(entry, versionNumber(entry, choice));
    const partials = await store.partials(loaded.compiled, entry.workspaceId);
    return { entry, loaded, body: renderBody(loaded.compiled, variables, overrides, partials) };
  }

  const render: AdminRoute = {
    method: 'POST',
    path: '/prompts/:promptId/render',
    // Reading a prompt, or running it: an application key that may run prompts may see what it would send.
    scope: ['prompts.read', 'completions.write'],
    audit: false,
    async handle(req) {
      const { body } = await rendered(req, 'view');
      return Response.json({ success: true, data: body });
    },
  };

  const completions: AdminRoute = {
    method: 'POST',
    path: '/prompts/:promptId/completions',
    // A model call: the scope of /chat/completions (docs/security.md, "Scopes on model calls").
    scope: 'completions.write',
    audit: false,
    async handle(req) {
      const calls = deps.calls();
      if (!calls) throw Errors.internal('prompts: completions called before the gateway was ready');
      const metadata = metadataOf(req.headers.get('x-gateway-metadata'));
      const { entry, loaded, body } = await rendered(req, 'run');
      const caller = callerFor(req.caller, entry);
      const config = targetConfig(calls, loaded.definition.target, caller);
      const response = await calls.call({
        endpoint: loaded.compiled.kind === 'chat' ? 'chatComplete' : 'complete',
        body,
        config,
        caller,
        traceId: req.headers.get('x-gateway-trace-id') || undefined,
        spanName: req.headers.get('x-gateway-span-name') || undefined,
        prompt: { id: entry.id, version: loaded.version },
        metadata,
        // The client going away ends the provider call too (a stream included).
        signal: req.signal,
      });
      if (body.stream === true || !response.ok) return response;
      const headers: Record<string, string> = {};
      response.headers.forEach((value, key) => {
        headers[key] = value;
      });
      const answer = await response.json();
      const outer = new Headers({ 'content-type': 'application/json' });
      for (const [key, value] of Object.entries(headers)) if (key.startsWith('x-gateway-')) outer.set(key, value);
      return new Response(JSON.stringify({ status: 'success', headers, body: answer }), { status: 200, headers: outer });
    },
  };

  return [render, completions];
}
