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
const V4_RANGES = V4_BLOCKS.map(([base, bits]) => {
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return { net: v4ToInt(base) & mask, mask };
});

function isPrivateV4(ip: string): boolean {
  const n = v4ToInt(ip);
  return V4_RANGES.some((r) => ((n & r.mask) >>> 0) === r.net);
}

function isPrivateV6(ip: string): boolean {
  const lower = ip.toLowerCase().replace(/^\[|\]$/g, '');
  if (lower === '::' || lower === '::1') return true;
  const mapped = lower.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/);
  if (mapped) return isPrivateV4(mapped[1] as string);
  const first = Number.parseInt(lower.split(':')[0] || '0', 16);
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xff00) === 0xff00 || // multicast
    lower.startsWith('fd00:ec2::') // AWS metadata over IPv6
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
  private readonly verdicts = new Map<string, { ok: boolean; until: number }>();

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
      if (!cached.ok) throw Errors.forbiddenHost(host);
      return;
    }
    const ok = await this.allowed(host);
    if (this.verdicts.size > 10_000) this.verdicts.clear();
    this.verdicts.set(host, { ok, until: now + this.ttlMs });
    if (!ok) throw Errors.forbiddenHost(host);
  }

  private async allowed(host: string): Promise<boolean> {
    if (METADATA_NAMES.has(host) || host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal'))
      return false;
    if (isIP(host)) return !isPrivateAddress(host);
    let addresses: string[];
    try {
      addresses = await this.resolve(host);
    } catch {
      // An unresolvable name cannot be checked; refusing it is the safe answer.
      return false;
    }
    return addresses.length > 0 && !addresses.some(isPrivateAddress);
  }
}
