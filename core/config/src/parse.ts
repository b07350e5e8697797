/**
 * The `x-gateway-config` header: a config as JSON, or the id of a saved config. Each distinct header value is
 * parsed and validated once; the result (or the violations) is kept in a bounded LRU map, and configs are frozen
 * because every request with that header shares the same object.
 */
import { type Caller, Errors, type GatewayConfig } from '@gateway/sdk';
import { deepFreeze } from './freeze.ts';
import { Seam } from './seam.ts';
import { validateConfig } from './validate.ts';

/**
 * The config store's lookup of a saved config by id, for the calling workspace: the config (validated when it was
 * saved), undefined when there is none, or a thrown GatewayError (403 for a workspace without access).
 */
export type SavedConfigResolver = (id: string, caller: Caller | undefined) => GatewayConfig | undefined;

const MAX_HEADER_CHARS = 256 * 1024;
const CACHE_ENTRIES = 1000;
/** Bound on the summed length of cached header strings, so 1000 huge headers cannot pin much memory. */
const CACHE_CHARS = 8 * 1024 * 1024;

/** `used`: read since it was last passed over by eviction (second chance). */
type Entry = ({ config: GatewayConfig } | { violations: readonly string[] }) & { used?: boolean };
const cache = new Map<string, Entry>();
let cachedChars = 0;
const savedConfigs = new Seam<SavedConfigResolver>(() => clearConfigCache());

/**
 * The config store registers itself here; without it a saved-config id is rejected. Returns the function that takes
 * it out again (a gateway closing).
 */
export function setSavedConfigResolver(resolver: SavedConfigResolver | undefined): () => void {
  return savedConfigs.push(resolver);
}

/** Forgets every parsed header (tests, or after a change of validation rules). */
export function clearConfigCache(): void {
  cache.clear();
  cachedChars = 0;
}

/**
 * Returns the deeply frozen config of a header value; throws GatewayError `invalid_config`. A saved config id is
 * looked up for `caller`'s workspace (not cached here: the store answers from memory).
 */
export function parseConfigHeader(value: string, caller?: Caller): GatewayConfig {
  const hit = cache.get(value);
  if (hit) {
    // A flag, not a re-insertion: deleting and re-adding a Map key costs time in proportion to the Map's size in
    // JavaScriptCore, and this runs on every request that carries a config.
    hit.used = true;
    return unwrap(hit);
  }
  const text = value.trim();
  if (!text.startsWith('{')) return resolveSavedConfig(text, caller);
  if (text.length > MAX_HEADER_CHARS) throw Errors.invalidConfig([`config: longer than ${MAX_HEADER_CHARS} characters`]);

  const entry = evaluate(text);
  remember(value, entry);
  return unwrap(entry);
}

function evaluate(text: string): Entry {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // The parser's own message quotes the offending text, which may be a key: only its kind is repeated.
    return { violations: [`config: not valid JSON (${error instanceof SyntaxError ? 'syntax error' : 'unreadable'})`] };
  }
  const result = validateConfig(parsed);
  return result.ok ? { config: deepFreeze(result.config) } : { violations: result.violations };
}

/** A fresh error per throw: callers annotate errors (plugin, phase), so one must not be shared. */
function unwrap(entry: Entry): GatewayConfig {
  if ('config' in entry) return entry.config;
  throw Errors.invalidConfig(entry.violations);
}

/**
 * Adds an entry and evicts down to the bounds, oldest first, except that an entry read since it was last passed
 * over gets a second chance (moved to the back, flag cleared): least recently used, approximately, at the cost of
 * work on inserts only.
 */
function remember(key: string, entry: Entry): void {
  cache.set(key, entry);
  cachedChars += key.length;
  let passes = cache.size * 2;
  while ((cache.size > CACHE_ENTRIES || cachedChars > CACHE_CHARS) && passes-- > 0) {
    const oldest = cache.keys().next().value as string;
    const candidate = cache.get(oldest) as Entry;
    cache.delete(oldest);
    if (candidate.used && oldest !== key) {
      candidate.used = false;
      cache.set(oldest, candidate);
    } else {
      cachedChars -= oldest.length;
    }
  }
}

/** Saved configs already frozen: a store hands out the same objects until they change. */
const frozen = new WeakSet<GatewayConfig>();

function resolveSavedConfig(id: string, caller: Caller | undefined): GatewayConfig {
  const resolveSaved = savedConfigs.current;
  // Only something shaped like an id is repeated back; any other text (a pasted key, say) is not echoed.
  const shown = /^[A-Za-z0-9_.:-]{1,64}$/.test(id) ? JSON.stringify(id) : 'the header value';
  if (id === '') throw Errors.invalidConfig(['config: empty']);
  if (!resolveSaved) {
    throw Errors.invalidConfig([
      `config: ${shown} is not a JSON object; it would be a saved config id, and saved configs are resolved by the config store, which is not available`,
    ]);
  }
  const config = resolveSaved(id, caller);
  if (!config) throw Errors.invalidConfig([`config: no saved config with id ${shown}`]);
  if (!frozen.has(config)) {
    deepFreeze(config);
    frozen.add(config);
  }
  return config;
}
