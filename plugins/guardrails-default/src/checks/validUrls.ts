/**
 * `default.validUrls` {onlyDNS?=false}: passes when every http(s) URL in the judged text is well-formed. Nothing is
 * fetched or resolved (Portkey's check makes requests; this one never touches the network).
 *
 * URLs are found as `http://` or `https://` followed by non-space characters, minus trailing punctuation (`.,;:!?`,
 * quotes, and closing brackets that have no opening partner inside the URL). A URL is well-formed when:
 * - its host is an IPv4 address, a bracketed IPv6 address, or a DNS name of at least two labels (each 1–63 letters,
 *   digits or hyphens, not starting or ending with a hyphen; internationalised names are checked in their punycode
 *   form), whose top-level label is alphabetic (2+ letters) or punycode (`xn--…`), at most 253 characters in all;
 * - its port, if any, is a number up to 65535;
 * - (unless `onlyDNS`) the rest has no backslash and every `%` starts a two-hex-digit escape.
 * `onlyDNS: true` judges the host (and port) only. Text without URLs, and missing text, pass.
 */
import { Type } from '@sinclair/typebox';
import { isIP } from 'node:net';
import { defineCheck } from '../check.ts';
import { judgedText } from '../text.ts';

const URL_CANDIDATE = /https?:\/\/\S+/gi;
const TRAILING = new Set(['.', ',', ';', ':', '!', '?', '"', "'", '`', '>', '*', '_']);
const CLOSERS: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
const BAD_PERCENT = /%(?![0-9a-fA-F]{2})/;

/** Drops trailing punctuation that belongs to the sentence, not the URL (one pass: bracket counts kept up to date). */
export function trimUrl(candidate: string): string {
  const counts = new Map<string, number>();
  for (const ch of candidate) if (ch in CLOSERS || Object.values(CLOSERS).includes(ch)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let end = candidate.length;
  while (end > 0) {
    const last = candidate[end - 1] as string;
    const opener = CLOSERS[last];
    const unbalanced = opener !== undefined && (counts.get(last) ?? 0) > (counts.get(opener) ?? 0);
    if (!TRAILING.has(last) && !unbalanced) break;
    if (opener !== undefined) counts.set(last, (counts.get(last) ?? 0) - 1);
    end--;
  }
  return candidate.slice(0, end);
}

export function findUrls(text: string): string[] {
  const urls: string[] = [];
  for (const match of text.matchAll(URL_CANDIDATE)) {
    const url = trimUrl(match[0]);
    if (url.length > url.indexOf('//') + 2) urls.push(url);
  }
  return urls;
}

function validHost(hostname: string): boolean {
  if (hostname.startsWith('[')) return isIP(hostname.slice(1, -1)) === 6;
  if (isIP(hostname) === 4) return true;
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  return labels.length >= 2 && labels.every((l) => LABEL.test(l)) && TLD.test(labels.at(-1) as string);
}

/** Why the URL is not well-formed, or undefined when it is. */
export function urlProblem(raw: string, onlyDNS: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'does not parse as a URL';
  }
  if (!validHost(url.hostname)) return `host "${url.hostname}" is not a valid domain name or IP address`;
  if (onlyDNS) return undefined;
  const afterHost = raw.slice(raw.indexOf('//') + 2);
  if (afterHost.includes('\\')) return 'contains a backslash';
  if (BAD_PERCENT.test(afterHost)) return 'contains a malformed %-escape';
  return undefined;
}

export const validUrls = defineCheck({
  name: 'validUrls',
  schema: Type.Object({ onlyDNS: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
  run(ctx, p) {
    const { text, source } = judgedText(ctx);
    const urls = findUrls(text ?? '');
    const invalid: { url: string; problem: string }[] = [];
    for (const url of urls) {
      const problem = urlProblem(url, p.onlyDNS ?? false);
      if (problem) invalid.push({ url: url.length > 200 ? `${url.slice(0, 200)}…` : url, problem });
    }
    const verdict = invalid.length === 0;
    return {
      verdict,
      data: {
        source,
        textFound: text !== undefined,
        urlCount: urls.length,
        invalidUrls: invalid.slice(0, 20),
        explanation:
          urls.length === 0
            ? 'The text holds no URL.'
            : verdict
              ? `All ${urls.length} URLs are well-formed.`
              : `${invalid.length} of ${urls.length} URLs are not well-formed.`,
      },
    };
  },
});
