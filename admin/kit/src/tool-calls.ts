/**
 * What the proxies of tool and agent calls (MCP, A2A) share to run the tool-call phase (sdk tool-calls.ts): the
 * services it needs, a call described from the administration request (the config it runs under and its metadata,
 * as a model call's), and the text guardrails judge.
 */
import {
  type AdminRequest,
  type GatewayCalls,
  type GatewayConfig,
  type Json,
  type ModelRouting,
  type PluginApi,
  RoutingServices,
  Services,
  type ToolCall,
  type ToolCallPhase,
  type WorkspaceDefaults,
} from '@gateway/sdk';

export interface ToolCallServices {
  phase?: ToolCallPhase;
  calls?: GatewayCalls;
  routing?: ModelRouting;
  defaults?: WorkspaceDefaults;
}

/** The services, looked up once every plugin is ready (empty until then). */
export function toolCallServices(api: PluginApi): ToolCallServices {
  const services: ToolCallServices = {};
  api.onReady(() => {
    services.phase = api.optional(Services.toolCalls);
    services.calls = api.optional(Services.gatewayCalls);
    services.routing = api.optional(RoutingServices.modelRouting);
    services.defaults = api.optional(RoutingServices.workspaceDefaults);
  });
  return services;
}

/**
 * The config the call runs under, as for a model call: `x-gateway-config` (inline JSON or a saved config's id,
 * resolved for the caller; the same 400s), else the workspace's default config; undefined without either.
 */
function configOf(req: AdminRequest, services: ToolCallServices): GatewayConfig | undefined {
  if (!services.calls) return undefined;
  const header = req.headers.get('x-gateway-config');
  if (header) return services.calls.resolveConfig(header, req.caller);
  const saved = services.routing?.route(undefined, req.caller)?.savedConfig;
  return saved ? services.calls.resolveConfig(saved, req.caller) : undefined;
}

/** `x-gateway-metadata` (a JSON object; its string values) over the workspace's default metadata. */
function metadataOf(req: AdminRequest, services: ToolCallServices): Readonly<Record<string, string>> {
  const defaults = services.defaults?.metadata(req.caller.workspaceId) ?? {};
  const header = req.headers.get('x-gateway-metadata');
  if (!header) return defaults;
  let parsed: unknown;
  try {
    parsed = JSON.parse(header);
  } catch {
    return defaults;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return defaults;
  const own = Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
  return { ...defaults, ...own };
}

/** For a request that carries no signal (an in-process call). */
const NEVER_ABORTED = new AbortController().signal;

export interface ToolCallFields {
  kind: string;
  method: string;
  server: { id: string; slug: string };
  tool: string;
  arguments: Json;
  text: string;
  traceId: string;
}

/** A call of the tool-call phase from the administration request that carries it. */
export function describeToolCall(req: AdminRequest, services: ToolCallServices, fields: ToolCallFields): ToolCall {
  return { ...fields, caller: req.caller, config: configOf(req, services), metadata: metadataOf(req, services), signal: req.signal ?? NEVER_ABORTED, locals: {} };
}

/** Every string in a JSON value, one per line (object keys left out): the text of a tool's arguments. */
export function stringsIn(value: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(value);
  return out.join('\n');
}

/** Every string under a `text` key, one per line: MCP text content, A2A text parts. */
export function textIn(value: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object')
      for (const [key, inner] of Object.entries(v)) {
        if (key === 'text' && typeof inner === 'string') out.push(inner);
        else walk(inner);
      }
  };
  walk(value);
  return out.join('\n');
}
