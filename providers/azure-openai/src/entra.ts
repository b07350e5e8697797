/**
 * Microsoft Entra ID access tokens by the OAuth 2.0 client-credentials grant
 * (`POST <authority>/<tenant>/oauth2/v2.0/token`, form `grant_type=client_credentials&client_id&client_secret&scope`),
 * cached per (authority, tenant, client, secret, scope) until shortly before they expire. Concurrent requests for the
 * same token share one token request; a refresh that fails while the old token is still valid keeps using it.
 *
 * The gateway's one Entra client: the Azure adapters use it, and so does the Azure Key Vault client of secret
 * references (`@gateway/provider-azure-openai/entra`), with its own guarded fetch and its own errors (`fail`).
 */
import { createHash } from 'node:crypto';
import { Errors, GatewayError } from '@gateway/sdk';

export const DEFAULT_AUTHORITY_HOST = 'https://login.microsoftonline.com';
/** Azure OpenAI and the Azure AI services (serverless endpoints included). */
export const COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';
/** Azure Machine Learning managed online endpoints. */
export const AZURE_ML_SCOPE = 'https://ml.azure.com/.default';

/**
 * A service principal: with a client secret, or federated (workload identity: the client assertion is a token the
 * platform writes to a file, `AZURE_FEDERATED_TOKEN_FILE`, read again for each token request because it rotates).
 */
export type EntraCredentials = {
  tenantId: string;
  clientId: string;
  scope: string;
  /** Another authority than the client's own (a Key Vault of a sovereign cloud, say). */
  authorityHost?: string;
} & (
  | { clientSecret: string; federatedTokenFile?: undefined }
  | { federatedTokenFile: string; clientSecret?: undefined }
);

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** Why no token came: given to `fail`, which turns it into the error its caller throws. */
export type EntraFailure =
  /** The tenant id would change the token URL's path. */
  | { kind: 'tenant' }
  /** The token endpoint could not be reached (`cause`: what fetch threw). */
  | { kind: 'unreachable'; cause: unknown }
  /** The token endpoint answered an error: its status, its `error` code and `error_description` (or text). */
  | { kind: 'refused'; status: number; code: string | null; description: string; federated: boolean }
  /** A success without an access token. */
  | { kind: 'no-token' }
  /** The federated identity token file could not be read. */
  | { kind: 'assertion' };

/** The provider's errors (GatewayError, naming `providerId`). */
export function providerFailure(failure: EntraFailure, providerId: string): Error {
  switch (failure.kind) {
    case 'tenant':
      return Errors.badRequest('svcB_entra_tenant_id must be a tenant id (GUID) or a domain name', 'svcB_entra_tenant_id');
    case 'unreachable': {
      const cause = failure.cause;
      return Errors.upstreamUnreachable(providerId, `Microsoft Entra ID token endpoint: ${cause instanceof Error ? cause.message : String(cause)}`);
    }
    case 'refused': {
      const { status, code, description } = failure;
      return new GatewayError({
        code: 'provider_authentication_failed',
        type: 'authentication_error',
        status: status >= 500 ? 502 : 401,
        message: `${providerId}: Microsoft Entra ID refused the ${failure.federated ? 'federated' : 'client-credentials'} token request (${status}${code ? ` ${code}` : ''}): ${description.slice(0, 500) || 'no details'}`,
        retryable: status >= 500 || status === 429,
        extra: { provider: providerId },
      });
    }
    case 'no-token':
      return Errors.upstreamInvalid(providerId, 'the Microsoft Entra ID token answer has no access_token');
    case 'assertion':
      return new GatewayError({
        code: 'provider_authentication_failed',
        type: 'authentication_error',
        status: 502,
        message: `${providerId}: the federated identity token (AZURE_FEDERATED_TOKEN_FILE) could not be read`,
        extra: { provider: providerId },
      });
  }
}

export interface EntraTokenOptions {
  /** Authority host, e.g. `https://login.microsoftonline.com` (sovereign clouds, tests). */
  authorityHost?: string;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
  fetch?: FetchLike;
  /** Tokens kept at most (oldest dropped first). */
  maxEntries?: number;
  /** Time allowed for one token request. */
  timeoutMs?: number;
  /** Refresh this long before expiry at most (a short-lived token is refreshed after 90% of its life). */
  refreshMarginMs?: number;
  /** The error thrown for a failure; by default the provider's (`providerFailure`, naming the id given to `get`). */
  fail?: (failure: EntraFailure, providerId: string) => Error;
}

interface Entry {
  token?: string;
  /** When the token stops being valid. */
  expiresAt: number;
  /** When a new token is requested instead of serving this one. */
  refreshAt: number;
  pending?: Promise<string>;
}

/** Tenant ids are GUIDs or domain names: anything else would change the token URL's path. */
const TENANT = /^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$/;

export class EntraTokens {
  readonly authorityHost: string;
  private readonly now: () => number;
  private readonly fetch: FetchLike;
  private readonly maxEntries: number;
  private readonly timeoutMs: number;
  private readonly refreshMarginMs: number;
  private readonly fail: (failure: EntraFailure, providerId: string) => Error;
  private readonly entries = new Map<string, Entry>();
  /** Token requests made, for tests and metrics. */
  requests = 0;

  constructor(options: EntraTokenOptions = {}) {
    this.authorityHost = (options.authorityHost ?? DEFAULT_AUTHORITY_HOST).replace(/\/+$/, '');
    this.now = options.now ?? Date.now;
    this.fetch = options.fetch ?? ((url, init) => fetch(url, init));
    this.maxEntries = options.maxEntries ?? 1000;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.refreshMarginMs = options.refreshMarginMs ?? 5 * 60_000;
    this.fail = options.fail ?? providerFailure;
  }

  tokenUrl(tenantId: string, authorityHost = this.authorityHost, providerId = 'azure-openai'): string {
    if (!TENANT.test(tenantId)) throw this.fail({ kind: 'tenant' }, providerId);
    return `${authorityHost.replace(/\/+$/, '')}/${tenantId}/oauth2/v2.0/token`;
  }

  /** A cached token that needs no refresh yet: lets a caller stay synchronous on the common path. */
  peek(credentials: EntraCredentials): string | undefined {
    const entry = this.entries.get(this.key(credentials));
    return entry?.token !== undefined && this.now() < entry.refreshAt ? entry.token : undefined;
  }

  /** A valid token: the cached one, or a new one from the token endpoint. */
  get(credentials: EntraCredentials, providerId = 'azure-openai'): Promise<string> {
    const key = this.key(credentials);
    const entry = this.entries.get(key);
    const now = this.now();
    if (entry?.token !== undefined && now < entry.refreshAt) return Promise.resolve(entry.token);
    if (entry?.pending) return entry.pending;

    const slot: Entry = entry ?? { expiresAt: 0, refreshAt: 0 };
    const pending = this.request(credentials, providerId).then(
      ({ token, lifetimeMs }) => {
        const obtained = this.now();
        slot.token = token;
        slot.expiresAt = obtained + lifetimeMs;
        slot.refreshAt = obtained + lifetimeMs - Math.min(this.refreshMarginMs, lifetimeMs / 10);
        slot.pending = undefined;
        return token;
      },
      (error: unknown) => {
        slot.pending = undefined;
        // A refresh that failed early: the old token is still good until it expires.
        if (slot.token !== undefined && this.now() < slot.expiresAt) return slot.token;
        this.entries.delete(key);
        throw error;
      },
    );
    slot.pending = pending;
    if (!entry) this.remember(key, slot);
    return pending;
  }

  /** Forgets the token of these credentials (the service refused it: the next `get` asks for a new one). */
  forget(credentials: EntraCredentials): void {
    const entry = this.entries.get(this.key(credentials));
    if (entry && !entry.pending) this.entries.delete(this.key(credentials));
  }

  /** Forgets every token (tests; a rotated secret makes its own key anyway). */
  clear(): void {
    this.entries.clear();
  }

  private remember(key: string, entry: Entry): void {
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  private key(c: EntraCredentials): string {
    // The secret is part of the key (a rotated secret gets a new token) but only as a digest.
    const secret = c.clientSecret !== undefined ? createHash('sha256').update(c.clientSecret).digest('base64url') : `federated:${c.federatedTokenFile}`;
    return [c.authorityHost ?? this.authorityHost, c.tenantId, c.clientId, secret, c.scope].join('\n');
  }

  private async request(c: EntraCredentials, providerId: string): Promise<{ token: string; lifetimeMs: number }> {
    const url = this.tokenUrl(c.tenantId, c.authorityHost, providerId);
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: c.clientId, scope: c.scope });
    if (c.clientSecret !== undefined) form.set('client_secret', c.clientSecret);
    else {
      form.set('client_assertion_type', JWT_BEARER);
      const assertion = await federatedToken(c.federatedTokenFile);
      if (assertion === '') throw this.fail({ kind: 'assertion' }, providerId);
      form.set('client_assertion', assertion);
    }
    this.requests++;
    let response: Response;
    let text: string;
    try {
      response = await this.fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'manual',
      });
      text = await response.text();
    } catch (error) {
      throw this.fail({ kind: 'unreachable', cause: error }, providerId);
    }
    let json: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      json = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
    } catch {
      json = undefined;
    }
    if (!response.ok) {
      const code = typeof json?.error === 'string' ? json.error : null;
      const description = typeof json?.error_description === 'string' ? json.error_description : text.trim();
      throw this.fail({ kind: 'refused', status: response.status, code, description, federated: c.clientSecret === undefined }, providerId);
    }
    const token = json?.access_token;
    if (typeof token !== 'string' || token === '') throw this.fail({ kind: 'no-token' }, providerId);
    // expires_in is seconds (a number; some authorities send it as a string). Unknown: assume a short life.
    const seconds = Number(json?.expires_in);
    const lifetimeMs = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 5 * 60_000;
    return { token, lifetimeMs };
  }
}

/** The platform's federated token (a Kubernetes service account token, say), or '' when unreadable; never logged. */
async function federatedToken(path: string): Promise<string> {
  try {
    return (await Bun.file(path).text()).trim();
  } catch {
    return ''; // reported by the caller without the path's contents
  }
}
