import { isIP } from 'node:net';
import { Errors } from '@gateway/sdk';

/**
 * Refuses custom hosts that point at private, loopback, link-local or metadata addresses (SSRF), unless the host is
 * trusted. The check runs before any connection is made: literal addresses directly, names after a DNS lookup.
 */
export type Resolver = (hostname: string) => Promise<string[]>;

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

export class HostGuard {
  private readonly trusted: Set<string>;
  private readonly verdicts = new Map<string, { ok: boolean; unresolvable: boolean; until: number }>();

  constructor(
    trusted: Iterable<string>,
    private readonly resolve: Resolver = defaultResolver,
    private readonly ttlMs = 30_000,
  ) {
    this.trusted = new Set([...trusted].map((h) => h.trim().toLowerCase()).filter(Boolean));
  }

  /** Custom-host strings already judged allowed, so the common case costs one Map lookup and no URL parsing. */
  private readonly allowedUrls = new Map<string, number>();

  /**
   * Rejects when the URL's host may not be used as a custom host. Cached per host for `ttlMs`; a URL already judged
   * allowed returns undefined at once, without a promise.
   */
  check(url: string): Promise<void> | undefined {
    const until = this.allowedUrls.get(url);
    if (until !== undefined && until > Date.now()) return undefined;
    return this.judge(url).then(() => {
      if (this.allowedUrls.size > 10_000) this.allowedUrls.clear();
      this.allowedUrls.set(url, Date.now() + this.ttlMs);
    });
  }

  private async judge(url: string): Promise<void> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw Errors.badRequest(`custom host is not a valid URL: ${url}`, 'custom_host');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw Errors.badRequest('custom host must be an http or https URL', 'custom_host');
    const host = parsed.hostname.toLowerCase().replace(/^\[|\]$/g, '');
    if (this.trusted.has(host) || this.trusted.has(parsed.host.toLowerCase())) return;
    const now = Date.now();
    const cached = this.verdicts.get(host);
    if (cached && cached.until > now) {
      if (!cached.ok) throw Errors.forbiddenHost(host, cached.unresolvable);
      return;
    }
    const verdict = await this.judgeHost(host);
    if (this.verdicts.size > 10_000) this.verdicts.clear();
    this.verdicts.set(host, { ...verdict, until: now + this.ttlMs });
    if (!verdict.ok) throw Errors.forbiddenHost(host, verdict.unresolvable);
  }

  private async judgeHost(host: string): Promise<{ ok: boolean; unresolvable: boolean }> {
    if (METADATA_NAMES.has(host) || host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal'))
      return { ok: false, unresolvable: false };
    if (isIP(host)) return { ok: !isPrivateAddress(host), unresolvable: false };
    let addresses: string[];
    try {
      addresses = await this.resolve(host);
    } catch {
      // An unresolvable name cannot be checked; refusing it is the safe answer.
      return { ok: false, unresolvable: true };
    }
    if (addresses.length === 0) return { ok: false, unresolvable: true };
    return { ok: !addresses.some(isPrivateAddress), unresolvable: false };
  }
}
