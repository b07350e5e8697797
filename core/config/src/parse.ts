/**
 * The `x-gateway-config` header: a config as JSON, or the id of a saved config. Each distinct header value is
 * parsed and validated once; the result (or the violations) is kept in a bounded LRU map, and configs are frozen
 * because every request with that header shares the same object. A config that names saved guardrails (a field a
 * plugin declares `perSender`) means something different to each caller (only their organisation's and workspace's
 * guardrails exist for them): it is validated, and what it names put in, once per header value and caller's scope.
 */
import { type Caller, Errors, type GatewayConfig, type SavedConfigResolver } from '@gateway/sdk';
import { deepFreeze } from './freeze.ts';
import { dependsOnSender, type GuardrailScope, resolvedForSender } from './field-rules.ts';
import { Seam } from './seam.ts';
import { validateConfig } from './validate.ts';

/** The type of service `savedConfigs`, declared in the SDK with its token. */
export type { SavedConfigResolver } from '@gateway/sdk';

const MAX_HEADER_CHARS = 256 * 1024;
const CACHE_ENTRIES = 1000;
/** Bound on the summed length of cached header strings, so 1000 huge headers cannot pin much memory. */
const CACHE_CHARS = 8 * 1024 * 1024;

/**
 * `used`: read since it was last passed over by eviction (second chance). `scoped`: the header names saved
 * guardrails (`dependsOnSender`); its result is kept under `scopedKey` for each caller's scope.
 */
type Entry = ({ config: GatewayConfig } | { violations: readonly string[] } | { scoped: true }) & { used?: boolean };
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
    return 'scoped' in hit ? forScope(value, caller) : unwrap(hit);
  }
  const text = value.trim();
  if (!text.startsWith('{')) return resolveSavedConfig(text, caller);
  if (text.length > MAX_HEADER_CHARS) throw Errors.invalidConfig([`config: longer than ${MAX_HEADER_CHARS} characters`]);

  const parsed = parse(text);
  if ('value' in parsed && dependsOnSender(parsed.value)) {
    remember(value, { scoped: true });
    return forScope(value, caller);
  }
  const entry = 'value' in parsed ? evaluate(parsed.value, undefined) : parsed;
  remember(value, entry);
  return unwrap(entry);
}

/** Whose saved guardrails a caller may name: an organisation-service key acts for every workspace of its organisation. */
const scopeOf = (caller: Caller): GuardrailScope => ({
  organisationId: caller.organisationId,
  workspaceId: caller.keyType === 'organisation-service' ? null : caller.workspaceId,
});

/** A header value never holds NUL, so these keys meet no header value. */
const scopedKey = (scope: GuardrailScope | undefined, value: string) => `\0${scope?.organisationId ?? ''}\0${scope?.workspaceId ?? '*'}\0${value}`;

/** A header that names saved guardrails, for the caller's scope (parsed again: each scope gets its own object). */
function forScope(value: string, caller: Caller | undefined): GatewayConfig {
  const scope = caller ? scopeOf(caller) : undefined;
  const key = scopedKey(scope, value);
  const hit = cache.get(key);
  if (hit) {
    hit.used = true;
    return unwrap(hit);
  }
  const parsed = parse(value.trim());
  const entry = 'value' in parsed ? evaluate(parsed.value, scope) : parsed;
  remember(key, entry);
  return unwrap(entry);
}

function parse(text: string): { value: unknown } | { violations: readonly string[] } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    // The parser's own message quotes the offending text, which may be a key: only its kind is repeated.
    return { violations: [`config: not valid JSON (${error instanceof SyntaxError ? 'syntax error' : 'unreadable'})`] };
  }
}

/** `scope`: whose saved guardrails the config may name; they are put in once it is valid. */
function evaluate(parsed: unknown, scope: GuardrailScope | undefined): Entry {
  const result = validateConfig(parsed, scope);
  if (!result.ok) return { violations: result.violations };
  return { config: deepFreeze(scope ? resolvedForSender(result.config, scope) : result.config) };
}

/** A fresh error per throw: callers annotate errors (plugin, phase), so one must not be shared. */
function unwrap(entry: Entry): GatewayConfig {
  if ('config' in entry) return entry.config;
  if ('violations' in entry) throw Errors.invalidConfig(entry.violations);
  throw Errors.internal('a scoped config entry was read as a config');
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
