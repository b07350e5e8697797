import { isIP } from 'node:net';
import { Errors, type GatewayError, type OutboundGuard, type OutboundInit } from '@gateway/sdk';

/**
 * The outbound-URL guard (SSRF): a URL from a user, an admin or a config may not reach a private, loopback,
 * link-local or metadata address unless its host is trusted (TRUSTED_CUSTOM_HOSTS).
 *
 * The address checked is the address connected to. A name is resolved once, every address it resolves to is
 * checked, and the request goes to the first of them: the URL's host becomes that IP, the `Host` header keeps the
 * name, and for https the TLS `serverName` keeps it too (SNI and certificate verification are on the name; Bun's
 * connection pool is keyed by it as well). No second DNS lookup happens between the check and the connection, so an
 * answer that changes (DNS rebinding) can only ever be connected to after it was checked.
 *
 * Resolved addresses are kept for `ttlMs` per origin; a request within that time connects to the kept, checked
 * address. Trusted hosts and literal addresses need no lookup and are connected to as written.
 */
export type Resolver = (hostname: string) => Promise<string[]>;
/** What makes the connection: `fetch` by default (looked up at call time, so a test's spy sees it). */
export type Connector = (url: string, init: OutboundInit) => Promise<Response>;

export interface HostGuardOptions {
  /** How long resolved addresses (and refusals) are kept per origin. */
  ttlMs?: number;
  connect?: Connector;
}

const defaultResolver: Resolver = async (hostname) =>
  (await Bun.dns.lookup(hostname, {})).map((entry) => entry.address);

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => (acc << 8) + Number(part), 0) >>> 0;
}

const V4_BLOCKS: [string, number][] = [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];
// Bitwise results are signed in JavaScript: every value is brought back to unsigned with `>>> 0` before comparing.
const V4_RANGES = V4_BLOCKS.map(([base, bits]) => {
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return { net: (v4ToInt(base) & mask) >>> 0, mask };
});

function isPrivateV4Int(n: number): boolean {
  return V4_RANGES.some((r) => ((n & r.mask) >>> 0) === r.net);
}

function isPrivateV4(ip: string): boolean {
  return isPrivateV4Int(v4ToInt(ip));
}

/** The eight 16-bit groups of an IPv6 address (with `::` expanded and a dotted IPv4 tail converted). */
export function ipv6Groups(ip: string): number[] | undefined {
  let text = ip.toLowerCase().replace(/^\[|\]$/g, '');
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = v4ToInt(dotted[1] as string);
    text = `${text.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const head = parse(halves[0] as string);
  const tail = halves.length === 2 ? parse(halves[1] as string) : [];
  const fill = 8 - head.length - tail.length;
  if ((halves.length === 1 && fill !== 0) || fill < 0) return undefined;
  const groups = [...head, ...new Array<number>(halves.length === 2 ? fill : 0).fill(0), ...tail];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

function isPrivateV6(ip: string): boolean {
  const g = ipv6Groups(ip);
  if (!g) return true; // unreadable: refuse
  const [a, b, c, d, e, f] = g as [number, number, number, number, number, number, number, number];
  const embeddedV4 = (((g[6] as number) << 16) | (g[7] as number)) >>> 0;
  const zeroPrefix = a === 0 && b === 0 && c === 0 && d === 0 && e === 0;
  if (zeroPrefix && (f === 0 || f === 0xffff)) {
    // :: and ::1, IPv4-compatible ::a.b.c.d and IPv4-mapped ::ffff:a.b.c.d (however the URL parser spells them)
    if (f === 0 && (embeddedV4 === 0 || embeddedV4 === 1)) return true;
    return isPrivateV4Int(embeddedV4);
  }
  // NAT64 64:ff9b::/96 carries an IPv4 address too.
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return isPrivateV4Int(embeddedV4);
  return (
    (a & 0xfe00) === 0xfc00 || // unique local fc00::/7 (includes AWS metadata fd00:ec2::254)
    (a & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (a & 0xff00) === 0xff00 || // multicast
    (a === 0x2001 && b === 0xdb8) // documentation
  );
}

export function isPrivateAddress(ip: string): boolean {
  const kind = isIP(ip.replace(/^\[|\]$/g, ''));
  if (kind === 4) return isPrivateV4(ip);
  if (kind === 6) return isPrivateV6(ip);
  return false;
}

const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata', 'instance-data', 'metadata.azure.internal']);

/**
 * How to reach one origin, decided once: `prefix` is the URL's text up to the end of its authority
 * (`https://user@name:8443`); `origin` replaces it when the connection must go to a resolved address.
 */
export interface Route {
  readonly prefix: string;
  /** The checked address's origin (`https://203.0.113.5:8443`); undefined: connect as written (trusted or literal). */
  readonly origin?: string;
  /** `Host` header: the URL's own host (name and port). */
  readonly host?: string;
  /** TLS server name (https only): SNI and certificate verification stay on the URL's name. */
  readonly serverName?: string;
}

type Cached = { route: Route; error?: undefined; until: number } | { route?: undefined; error: GatewayError; until: number };

const MAX_CACHED = 10_000;

/**
 * The text of an absolute http(s) URL up to the end of its authority, found without parsing the URL: the WHATWG
 * parser ends an http(s) authority at the first `/`, `\`, `?` or `#`, and so does this. Undefined for anything else
 * (another scheme, another spelling: those go through the URL parser first).
 */
function prefixOf(url: string): string | undefined {
  let from: number;
  if (url.startsWith('https://')) from = 8;
  else if (url.startsWith('http://')) from = 7;
  else return undefined;
  let i = from;
  for (; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 47 /* / */ || c === 92 /* \ */ || c === 63 /* ? */ || c === 35 /* # */) break;
  }
  return url.slice(0, i);
}

/** True when `url`'s authority ends where `prefix` ends: `prefix` is then exactly what prefixOf(url) would return. */
function isUnder(url: string, prefix: string): boolean {
  if (!url.startsWith(prefix)) return false;
  if (url.length === prefix.length) return true;
  const c = url.charCodeAt(prefix.length);
  return c === 47 || c === 92 || c === 63 || c === 35;
}

function invalid(url: string): GatewayError {
  return Errors.badRequest(`custom host is not a valid http or https URL: ${url.slice(0, 200)}`, 'custom_host');
}

/** The URL as the WHATWG parser reads it (so that every spelling of a host is judged as fetch would read it). */
function canonical(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(url);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw Errors.badRequest('custom host must be an http or https URL', 'custom_host');
  return parsed.href;
}

export class HostGuard implements OutboundGuard {
  private readonly trusted: Set<string>;
  private readonly ttlMs: number;
  private readonly connect: Connector;
  /** By origin prefix. */
  private readonly routes = new Map<string, Cached>();
  /** The same entries by the exact string asked about (a config's custom host): one lookup, no slicing or hashing of a new string. */
  private readonly byUrl = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<Cached>>();

  constructor(trusted: Iterable<string>, private readonly resolve: Resolver = defaultResolver, options: HostGuardOptions = {}) {
    this.trusted = new Set([...trusted].map((h) => h.trim().toLowerCase()).filter(Boolean));
    this.ttlMs = options.ttlMs ?? 30_000;
    this.connect = options.connect ?? ((url, init) => fetch(url, init));
  }

  /**
   * The checked route to `url`'s origin: the route itself when it is known (one Map lookup, no URL parsing), else a
   * promise of it. Refusals come back as a rejected promise (a 400 `forbidden_custom_host`, or `invalid_request` for
   * a URL that is not http(s)), before any connection.
   */
  route(url: string): Route | Promise<Route> {
    const known = this.byUrl.get(url);
    if (known !== undefined && known.until > Date.now()) return known.route ?? Promise.reject(known.error);
    let prefix = prefixOf(url);
    if (prefix === undefined) {
      try {
        prefix = prefixOf(canonical(url)) as string;
      } catch (error) {
        return Promise.reject(error);
      }
    }
    const cached = this.routes.get(prefix);
    if (cached !== undefined && cached.until > Date.now()) return this.remember(url, cached);
    let pending = this.pending.get(prefix);
    if (!pending) {
      const key = prefix;
      pending = this.decide(key).finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return pending.then((decided) => this.remember(url, decided));
  }

  private remember(url: string, cached: Cached): Route | Promise<Route> {
    if (this.byUrl.size >= MAX_CACHED) this.byUrl.clear();
    this.byUrl.set(url, cached);
    return cached.route ?? Promise.reject(cached.error);
  }

  check(url: string): Promise<void> | undefined {
    const route = this.route(url);
    return route instanceof Promise ? route.then(() => undefined) : undefined;
  }

  /**
   * fetch() to a checked address. `route`, when given, is one this guard returned for the same origin (the pipeline
   * decides it before preparing the call); otherwise the URL's own route is used.
   */
  fetch(input: string | URL, init: OutboundInit = {}, route?: Route): Promise<Response> {
    let url = typeof input === 'string' ? input : input.href;
    if (route !== undefined && isUnder(url, route.prefix)) return this.send(url, route, init);
    if (prefixOf(url) === undefined) {
      try {
        url = canonical(url);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    const found = this.route(url);
    return found instanceof Promise ? found.then((r) => this.send(url, r, init)) : this.send(url, found, init);
  }

  private send(url: string, route: Route, init: OutboundInit): Promise<Response> {
    // A redirect would lead to a URL nobody checked: never followed here (a caller that follows one asks again).
    const out: OutboundInit = init.redirect === 'manual' || init.redirect === 'error' ? init : { ...init, redirect: 'manual' };
    if (route.origin === undefined) return this.connect(url, out);
    const headers = new Headers(init.headers);
    headers.set('host', route.host as string);
    const pinned: OutboundInit = { ...out, headers };
    if (route.serverName !== undefined) pinned.tls = { ...init.tls, serverName: route.serverName };
    return this.connect(route.origin + url.slice(route.prefix.length), pinned);
  }

  /** Judges one origin: trusted, literal, or resolved and every address checked. */
  private async decide(prefix: string): Promise<Cached> {
    const now = Date.now();
    const keep = (cached: Cached): Cached => {
      if (this.routes.size >= MAX_CACHED) this.routes.clear();
      this.routes.set(prefix, cached);
      return cached;
    };
    let parsed: URL;
    try {
      parsed = new URL(prefix);
    } catch {
      // e.g. `http:///name`: the parser skips the extra slashes, this guard does not guess.
      return { error: invalid(prefix), until: now };
    }
    const host = parsed.hostname.toLowerCase().replace(/^\[|\]$/g, '');
    const refuse = (unresolvable: boolean) => keep({ error: Errors.forbiddenHost(host, unresolvable), until: now + this.ttlMs });
    // Trust and literals do not depend on DNS: kept until the cache is cleared.
    if (this.trusted.has(host) || this.trusted.has(parsed.host.toLowerCase())) return keep({ route: { prefix }, until: Number.POSITIVE_INFINITY });
    if (METADATA_NAMES.has(host) || host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal')) return refuse(false);
    if (isIP(host)) {
      if (isPrivateAddress(host)) return refuse(false);
      return keep({ route: { prefix }, until: Number.POSITIVE_INFINITY });
    }
    let addresses: string[];
    try {
      addresses = await this.resolve(host);
    } catch {
      // An unresolvable name cannot be checked; refusing it is the safe answer.
      return refuse(true);
    }
    if (addresses.length === 0) return refuse(true);
    if (addresses.some((a) => !isIP(a) || isPrivateAddress(a))) return refuse(false);
    const address = addresses[0] as string;
    const literal = isIP(address) === 6 ? `[${address}]` : address;
    const userinfo = parsed.username || parsed.password ? `${parsed.username}${parsed.password ? `:${parsed.password}` : ''}@` : '';
    const route: Route = {
      prefix,
      origin: `${parsed.protocol}//${userinfo}${literal}${parsed.port ? `:${parsed.port}` : ''}`,
      host: parsed.host,
      ...(parsed.protocol === 'https:' ? { serverName: parsed.hostname } : {}),
    };
    return keep({ route, until: now + this.ttlMs });
  }
}
