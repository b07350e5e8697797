/**
 * Email domains (SPEC.md): an organisation claims domains; `allow_subdomains` on a root domain makes users of any
 * subdomain resolve to it (the same SSO settings). A domain that is a subdomain of another domain the organisation
 * registered cannot enable it itself.
 */
import { domainToASCII } from 'node:url';

export interface DomainEntry {
  domain: string;
  allow_subdomains: boolean;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * The domain in its stored form (trimmed, lower case, an internationalised name as xn--), or undefined when it is
 * not a valid hostname of at least two labels with a non-numeric top-level label.
 */
export function normaliseDomain(input: string): string | undefined {
  const trimmed = input.trim().toLowerCase();
  if (!trimmed || trimmed.length > 253 || trimmed.endsWith('.')) return undefined;
  // domainToASCII is lenient (it accepts underscores and IPv4 forms): the label rules below decide.
  const ascii = /^[\x21-\x7e]+$/.test(trimmed) ? trimmed : domainToASCII(trimmed);
  if (!ascii || ascii.length > 253) return undefined;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return undefined;
  if (/^\d+$/.test(labels[labels.length - 1]!)) return undefined;
  return ascii;
}

/** True when `child` is a strict subdomain of `parent` (both normalised). */
export function isSubdomainOf(child: string, parent: string): boolean {
  return child.length > parent.length && child.endsWith(`.${parent}`);
}

/** The domain part of an email address, normalised; undefined when there is none. */
export function emailDomain(email: string): string | undefined {
  const at = email.lastIndexOf('@');
  if (at <= 0) return undefined;
  return normaliseDomain(email.slice(at + 1));
}

/**
 * The registered domain an email belongs to: its own domain when registered, else the nearest registered parent
 * domain that has allow_subdomains on; undefined when none covers it.
 */
export function domainFor<T extends DomainEntry>(organisationDomains: readonly T[], email: string): T | undefined {
  const domain = emailDomain(email);
  if (!domain) return undefined;
  let best: T | undefined;
  for (const entry of organisationDomains) {
    if (entry.domain === domain) return entry;
    if (entry.allow_subdomains && isSubdomainOf(domain, entry.domain) && (!best || entry.domain.length > best.domain.length)) best = entry;
  }
  return best;
}

/**
 * Why `candidate` cannot be stored beside `others` (the organisation's other domains), as a field and a message;
 * undefined when it can. A subdomain of a registered domain cannot set allow_subdomains, and a new parent cannot
 * make a registered subdomain that has it on into a subdomain.
 */
export function subdomainConflict(candidate: DomainEntry, others: readonly DomainEntry[]): { param: string; message: string } | undefined {
  for (const other of others) {
    if (candidate.allow_subdomains && isSubdomainOf(candidate.domain, other.domain))
      return {
        param: 'allow_subdomains',
        message: `${candidate.domain} is a subdomain of ${other.domain}, which this organisation registered: only the root domain may set allow_subdomains (set it on ${other.domain})`,
      };
    if (other.allow_subdomains && isSubdomainOf(other.domain, candidate.domain))
      return {
        param: 'domain',
        message: `${other.domain}, a subdomain of ${candidate.domain}, has allow_subdomains on: only a root domain may have it; turn it off on ${other.domain} first`,
      };
  }
  return undefined;
}
