import { parseConfigHeader } from '@gateway/config';
import type { ResolvedTarget } from '@gateway/pipeline';
import { type Caller, Errors, type GatewayConfig, type GatewayRequest, type ProviderAdapter, type StoredAccess, type TargetConfig } from '@gateway/sdk';

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

function bearer(headers: HeaderValues): string | undefined {
  const auth = headers.authorization;
  if (!auth) return undefined;
  return auth.startsWith('Bearer ') || auth.startsWith('bearer ') ? auth.slice(7).trim() : auth.trim();
}

/** Header settings that INTERFACE.md makes equivalent to config fields; they apply where the config is silent. */
function headerSettings(headers: HeaderValues): Partial<GatewayConfig> | undefined {
  let out: Partial<GatewayConfig> | undefined;
  const timeout = headers['x-gateway-request-timeout'];
  if (timeout !== undefined) {
    const ms = Number(timeout);
    if (!Number.isInteger(ms) || ms <= 0) throw Errors.badRequest('x-gateway-request-timeout must be a positive integer of milliseconds', 'x-gateway-request-timeout');
    (out ??= {}).request_timeout = ms;
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
 * `x-gateway-provider` + `Authorization` (+ `x-gateway-custom-host`), else a virtual key.
 */
export function resolveConfig(headers: HeaderValues, caller?: Caller): GatewayConfig {
  const header = headers['x-gateway-config'];
  let config: GatewayConfig;
  const text = header?.trim();
  // A saved config (named by id: anything but inline JSON) may hold stored secrets; it goes only where it says.
  const saved = text !== undefined && text !== '' && !text.startsWith('{');
  if (text !== undefined && text !== '') {
    config = parseConfigHeader(header as string, caller);
  } else {
    const provider = headers['x-gateway-provider'];
    const virtualKey = headers['x-gateway-virtual-key'];
    if (!provider && !virtualKey)
      throw Errors.badRequest('Say which provider to use: x-gateway-provider with Authorization, x-gateway-virtual-key, or x-gateway-config', 'x-gateway-provider');
    config = {};
    if (provider) config.provider = provider;
    if (virtualKey) config.virtual_key = virtualKey;
    const key = bearer(headers);
    if (key) config.api_key = key;
  }
  const customHost = saved ? undefined : headers['x-gateway-custom-host'];
  const settings = headerSettings(headers);
  if (!customHost && !settings) return config;
  const merged: GatewayConfig = { ...config };
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
    return { provider: adapter, target, integrationId: slug.integrationId };
  };

  const withCredentials = (resolved: ResolvedTarget, req: GatewayRequest): ResolvedTarget => {
    const t = resolved.target;
    if (t.api_key !== undefined || t.Authorization !== undefined) return resolved;
    const auth = req.headers.get('authorization');
    const key = auth === null ? undefined : bearer({ authorization: auth });
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
