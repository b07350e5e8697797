/**
 * The outbound-URL guard (service `hostGuard`, provided by the core): the one way a plugin reaches a URL that a user,
 * an admin or a config chose (custom hosts, webhooks, guardrail services, token endpoints, secret managers, MCP and
 * agent servers). See docs/plugins.md, "Outbound URLs".
 */

/** Bun's `tls` option of fetch (SNI name, extra CAs…), kept loose: the guard only adds `serverName` to it. */
export type OutboundInit = RequestInit & { tls?: Record<string, unknown> };

export interface OutboundGuard {
  /**
   * Only the verdict, for early validation (an admin saving a URL): rejects with a 400 (`forbidden_custom_host`) when
   * the URL's host is, or resolves to, a private, loopback, link-local or metadata address that is not trusted;
   * undefined when it is already known to be allowed. Never a licence to call the URL with a plain fetch afterwards:
   * the name may resolve elsewhere by then.
   */
  check(url: string): Promise<void> | undefined;
  /**
   * fetch() to a user-controlled http(s) URL: the host is resolved once, every address is checked, and the connection
   * goes to a checked address (the `Host` header and, for https, SNI and certificate verification keep the URL's
   * name). Redirects are never followed (`redirect: 'manual'`; `'error'` is kept): a caller that follows one calls
   * this again with the new URL. Rejects with the same 400 as `check` before any connection when the host is refused.
   */
  fetch(url: string | URL, init?: OutboundInit): Promise<Response>;
}

