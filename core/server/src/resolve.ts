import { parseConfigHeader } from '@gateway/config';
import type { ResolvedTarget } from '@gateway/pipeline';
import {
  type Caller,
  Errors,
  type GatewayConfig,
  type GatewayRequest,
  markSavedConfig,
  type ModelRoute,
  type ModelRouting,
  type ProviderAdapter,
  savedConfigIdOf,
  type StoredAccess,
  type TargetConfig,
} from '@gateway/sdk';

/** What the administration side resolves from memory (service `storedAccess`). */
export type { StoredAccess };

/** Pinned on every stored target: the adapter and its host. */
const ALWAYS_PINNED: readonly string[] = ['provider', 'custom_host'];

/** `merged` (a fresh object: the stored target under the request's fields) with the stored value of each pinned field. */
function pinStored(merged: TargetConfig, stored: TargetConfig, fields: readonly string[]): TargetConfig {
  const out = merged as Record<string, unknown>;
  const from = stored as Record<string, unknown>;
  for (const field of fields) {
    if (from[field] !== undefined) out[field] = from[field];
    else if (field in out) delete out[field];
  }
  return merged;
}

/** RFC 9110 token: what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Request header values by lower-case name: `Headers.toJSON()`, read once per request. */
export type HeaderValues = Readonly<Record<string, string | undefined>>;

/** The value of an `Authorization` header, without its `Bearer ` scheme. */
export function bearerValue(auth: string | null | undefined): string | undefined {
  if (!auth) return undefined;
  return auth.startsWith('Bearer ') || auth.startsWith('bearer ') ? auth.slice(7).trim() : auth.trim();
}

/**
 * The provider key in `Authorization`. Only beside `x-gateway-api-key`: without it, Authorization carried the gateway
 * key (gateway-handler.ts, `gatewaySecret`), which is never sent to a provider.
 */
function providerKey(headers: HeaderValues): string | undefined {
  return headers['x-gateway-api-key'] ? bearerValue(headers.authorization) : undefined;
}

/** `@<slug>/<model>`: the model names its stored provider (INTERFACE.md). */
function namesStoredProvider(model: unknown): boolean {
  return typeof model === 'string' && model.startsWith('@') && model.indexOf('/') > 1;
}

/** Whether the request names its route in a header: a config, a provider or a virtual key. */
export function headersNameRoute(headers: HeaderValues): boolean {
  return !!(headers['x-gateway-config']?.trim() || headers['x-gateway-provider'] || headers['x-gateway-virtual-key']);
}

/** A call routed by its model (or its workspace's default): the config, and the model to send instead, if any. */
export interface ModelRouted {
  readonly config: GatewayConfig;
  readonly model?: string;
}

/** The provider resolver reads the provider from the model itself (`afterVirtualKey`). */
const FROM_MODEL: ModelRouted = Object.freeze({ config: Object.freeze({}) });
/** One config object per provider alias (the store hands out the same route until the alias changes). */
const providerConfigs = new WeakMap<ModelRoute, GatewayConfig>();

/**
 * A call that names no config, provider or virtual key: `@<slug>/<model>`, else an alias of the caller's workspace,
 * else its default config; undefined when none applies. From memory: the store's maps, the config header cache.
 */
export function routeByModel(model: unknown, caller: Caller, routing: ModelRouting | undefined): ModelRouted | undefined {
  if (namesStoredProvider(model)) return FROM_MODEL;
  const route = routing?.route(typeof model === 'string' ? model : undefined, caller);
  if (!route) return undefined;
  if (route.savedConfig !== undefined) return { config: parseConfigHeader(route.savedConfig, caller), model: route.model };
  if (route.provider === undefined) return undefined;
  let config = providerConfigs.get(route);
  if (!config) {
    config = Object.freeze({ provider: route.provider });
    providerConfigs.set(route, config);
  }
  return { config, model: route.model };
}

/** Headers equivalent to the stream time limits of the config (docs/streaming.md). */
const STREAM_TIMEOUT_HEADERS = [
  ['x-gateway-first-token-timeout', 'first_token_timeout'],
  ['x-gateway-stream-idle-timeout', 'stream_idle_timeout'],
] as const;

/** Header settings that INTERFACE.md makes equivalent to config fields; they apply where the config is silent. */
function headerSettings(headers: HeaderValues): Partial<GatewayConfig> | undefined {
  let out: Partial<GatewayConfig> | undefined;
  const timeout = headers['x-gateway-request-timeout'];
  if (timeout !== undefined) {
    const ms = Number(timeout);
    if (!Number.isInteger(ms) || ms <= 0) throw Errors.badRequest('x-gateway-request-timeout must be a positive integer of milliseconds', 'x-gateway-request-timeout');
    (out ??= {}).request_timeout = ms;
  }
  // Issue #15's stream time limits, read the same way.
  for (const [header, field] of STREAM_TIMEOUT_HEADERS) {
    const value = headers[header];
    if (value === undefined) continue;
    const ms = Number(value);
    if (!Number.isInteger(ms) || ms <= 0) throw Errors.badRequest(`${header} must be a positive integer of milliseconds`, header);
    (out ??= {})[field] = ms;
  }
  const forward = headers['x-gateway-forward-headers'];
  if (forward !== undefined) {
    const names = forward.split(',').map((h) => h.trim()).filter(Boolean);
    const bad = names.find((name) => !HEADER_NAME.test(name));
    if (bad !== undefined) throw Errors.badRequest(`x-gateway-forward-headers: "${bad.slice(0, 64)}" is not a valid header name`, 'x-gateway-forward-headers');
    (out ??= {}).forward_headers = names;
  }
  const strict = headers['x-gateway-strict-wire-compliance'];
  if (strict !== undefined) (out ??= {}).strict_wire_compliance = strict.trim().toLowerCase() !== 'false';
  return out;
}

/**
 * The config of a request: `x-gateway-config` (JSON or a saved config's id), else one built from
 * `x-gateway-provider` + `Authorization` (+ `x-gateway-custom-host`), else a virtual key, else `routed` (what the
 * model or the workspace's default config names: `routeByModel`).
 */
export function resolveConfig(headers: HeaderValues, caller?: Caller, routed?: ModelRouted): GatewayConfig {
  const header = headers['x-gateway-config'];
  let config: GatewayConfig;
  const text = header?.trim();
  // A saved config (named by id: anything but inline JSON) may hold stored secrets; it goes only where it says.
  // So does a stored provider or config a model names.
  let saved = text !== undefined && text !== '' && !text.startsWith('{');
  if (text !== undefined && text !== '') {
    config = parseConfigHeader(header as string, caller);
  } else {
    const provider = headers['x-gateway-provider'];
    const virtualKey = headers['x-gateway-virtual-key'];
    if (!provider && !virtualKey) {
      if (!routed)
        throw Errors.badRequest(
          'Say which provider to use: a model of the form @<provider>/<model> or a model alias of the workspace, x-gateway-provider with Authorization, x-gateway-virtual-key, or x-gateway-config (or give the workspace a default config)',
          'x-gateway-provider',
        );
      config = routed.config;
      saved = true;
    } else {
      config = {};
      if (provider) config.provider = provider;
      if (virtualKey) config.virtual_key = virtualKey;
      const key = providerKey(headers);
      if (key) config.api_key = key;
    }
  }
  const customHost = saved ? undefined : headers['x-gateway-custom-host'];
  const settings = headerSettings(headers);
  if (!customHost && !settings) return config;
  const merged: GatewayConfig = { ...config };
  // The copy is still the saved config for the request log (config_id).
  const savedId = saved ? savedConfigIdOf(config) : undefined;
  if (savedId !== undefined) markSavedConfig(merged, savedId);
  if (customHost && merged.custom_host === undefined && !merged.targets) merged.custom_host = customHost;
  const open = merged as Record<string, unknown>;
  for (const [key, value] of Object.entries(settings ?? {})) if (open[key] === undefined) open[key] = value;
  return merged;
}

/** Finds the adapter of a leaf target; a passthrough target takes its provider from the request. */
export function makeProviderResolver(providers: ReadonlyMap<string, ProviderAdapter>, stored: StoredAccess) {
  const byName = (name: string): ProviderAdapter | undefined =>
    providers.get(name) ?? (name.startsWith('@') ? providers.get(name.slice(1)) : undefined);

  /**
   * Pinned on a stored target of `provider`: its adapter and host, and the destination fields the provider declares
   * (`targetFields.destination`), a third party's host or identity field as a built-in one's. Once per provider.
   */
  const pinnedBy = new Map<string, readonly string[]>();
  const pinned = (provider: string | undefined): readonly string[] => {
    if (!provider) return ALWAYS_PINNED;
    let fields = pinnedBy.get(provider);
    if (!fields) {
      const declared = byName(provider)?.targetFields?.destination ?? [];
      fields = [...new Set([...ALWAYS_PINNED, ...declared])];
      if (byName(provider)) pinnedBy.set(provider, fields); // only loaded providers: the map stays as small as they are
    }
    return fields;
  };

  const fromSlug = (name: string, t: TargetConfig, slug: { provider: string; target: TargetConfig; integrationId?: string } | undefined): ResolvedTarget => {
    const adapter = slug ? byName(slug.provider) : undefined;
    if (!slug || !adapter) throw Errors.unknownProvider(name);
    // The stored credentials go only where the stored object says: a request's host, region, resource or identity
    // fields are not applied to them.
    const target = pinStored({ ...slug.target, ...t, provider: slug.provider }, slug.target, pinned(slug.provider));
    return { provider: adapter, target, integrationId: slug.integrationId, providerSlug: name.slice(1) };
  };

  const withCredentials = (resolved: ResolvedTarget, req: GatewayRequest): ResolvedTarget => {
    const t = resolved.target;
    if (t.api_key !== undefined || t.Authorization !== undefined) return resolved;
    // Without x-gateway-api-key, Authorization carried the gateway key: it is no provider key.
    if (!req.headers.get('x-gateway-api-key')) return resolved;
    const key = bearerValue(req.headers.get('authorization'));
    return key ? { ...resolved, target: { ...t, api_key: key } } : resolved;
  };

  const afterVirtualKey = (target: TargetConfig, req: GatewayRequest): ResolvedTarget | Promise<ResolvedTarget> => {
    let t = target;
    let name = t.provider;
    if (t.passthrough || !name) {
      name = req.headers.get('x-gateway-provider') ?? undefined;
      const model = req.body?.model;
      if (!name && typeof model === 'string' && model.startsWith('@')) {
        const slash = model.indexOf('/');
        if (slash > 1) {
          name = model.slice(0, slash);
          t = { ...t, override_params: { ...t.override_params, model: model.slice(slash + 1) } };
        }
      }
    }
    if (!name) throw Errors.badRequest('No provider: set x-gateway-provider, a config provider, or a model of the form @<provider>/<model>', 'provider');
    const adapter = byName(name);
    if (adapter) return withCredentials({ provider: adapter, target: t }, req);
    if (!name.startsWith('@') || !stored.providerSlug) throw Errors.unknownProvider(name);
    const found = name;
    const model = t.override_params?.model ?? req.body?.model;
    const slug = stored.providerSlug(name.slice(1), req.caller, typeof model === 'string' ? model : undefined);
    return slug instanceof Promise
      ? slug.then((s) => withCredentials(fromSlug(found, t, s), req))
      : withCredentials(fromSlug(found, t, slug), req);
  };

  return (target: TargetConfig, req: GatewayRequest): ResolvedTarget | Promise<ResolvedTarget> => {
    if (target.virtual_key === undefined) return afterVirtualKey(target, req);
    if (!stored.virtualKey) {
      if (!target.provider) throw Errors.badRequest('Virtual keys are resolved by the administration side, which is not loaded', 'x-gateway-virtual-key');
      return afterVirtualKey(target, req);
    }
    const id = target.virtual_key as string;
    const merge = (resolved: TargetConfig | undefined): TargetConfig => {
      if (!resolved) throw Errors.badRequest(`Unknown virtual key ${id}`, 'x-gateway-virtual-key');
      // As for `@slug`: the stored key is sent only where the stored object says, never where the request names.
      return pinStored({ ...resolved, ...target }, resolved, pinned(resolved.provider));
    };
    const vk = stored.virtualKey(id, req.caller);
    return vk instanceof Promise ? vk.then((v) => afterVirtualKey(merge(v), req)) : afterVirtualKey(merge(vk), req);
  };
}
