/**
 * OAuth 2.0 access tokens for a Google Cloud service account (config `svcC_service_account_json`), by the JWT bearer
 * grant (RFC 7523) Google documents for server-to-server calls: a JWT signed RS256 with the account's private key,
 * `iss` = client_email, `scope` = cloud-platform, `aud` = token_uri, `iat`/`exp` one hour apart, POSTed to token_uri
 * as `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<jwt>`.
 *
 * Tokens are cached per service account (its private key included, so a different key never receives another's
 * token) until shortly before they expire; concurrent requests share one exchange. The token_uri comes from the JSON,
 * so whoever writes the config chooses it: it must be https (or http on a loopback address), and it is fetched through
 * the gateway's outbound guard (private, loopback and metadata addresses only when TRUSTED_CUSTOM_HOSTS names them;
 * the connection goes to the address checked). A refused token_uri is a 400 before any connection. What the endpoint
 * answers reaches the client only as the OAuth error code and a short description.
 */
import { createHash } from 'node:crypto';
import { Errors, GatewayError, type OutboundGuard } from '@gateway/sdk';
import { importPKCS8, SignJWT } from 'jose';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Lifetime asked for in the assertion (Google's maximum). */
const ASSERTION_LIFETIME_S = 3600;
/** A token is renewed this long before it expires (or at 90% of its life when that is shorter). */
const REFRESH_MARGIN_MS = 5 * 60_000;
const TOKEN_TIMEOUT_MS = 15_000;
const MAX_CACHED = 1000;

export interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
  project_id?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The service account of a config, checked; a 400 naming the problem otherwise. */
export function parseServiceAccount(value: unknown): ServiceAccount {
  let json = value;
  if (typeof json === 'string') {
    try {
      json = JSON.parse(json);
    } catch {
      throw Errors.badRequest('svcC_service_account_json is not valid JSON', 'svcC_service_account_json');
    }
  }
  if (!isObject(json)) throw Errors.badRequest('svcC_service_account_json must be a service account key object', 'svcC_service_account_json');
  const { client_email, private_key, private_key_id, token_uri, project_id } = json;
  if (typeof client_email !== 'string' || !client_email) throw Errors.badRequest('svcC_service_account_json needs client_email', 'svcC_service_account_json');
  if (typeof private_key !== 'string' || !private_key.includes('PRIVATE KEY'))
    throw Errors.badRequest('svcC_service_account_json needs private_key (a PKCS#8 PEM)', 'svcC_service_account_json');
  const uri = typeof token_uri === 'string' && token_uri ? token_uri : DEFAULT_TOKEN_URI;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw Errors.badRequest('svcC_service_account_json token_uri is not a URL', 'svcC_service_account_json');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname)))
    throw Errors.badRequest('svcC_service_account_json token_uri must be an https URL', 'svcC_service_account_json');
  return {
    client_email,
    private_key,
    token_uri: uri,
    ...(typeof private_key_id === 'string' ? { private_key_id } : {}),
    ...(typeof project_id === 'string' ? { project_id } : {}),
  };
}

const keys = new Map<string, Promise<CryptoKey>>();

function signingKey(pem: string, fingerprint: string): Promise<CryptoKey> {
  let key = keys.get(fingerprint);
  if (!key) {
    key = importPKCS8(pem, 'RS256').catch((error: unknown) => {
      keys.delete(fingerprint);
      throw Errors.badRequest(`svcC_service_account_json private_key could not be read: ${error instanceof Error ? error.message : String(error)}`, 'svcC_service_account_json');
    });
    if (keys.size >= MAX_CACHED) keys.delete(keys.keys().next().value as string);
    keys.set(fingerprint, key);
  }
  return key;
}

function fingerprintOf(sa: ServiceAccount, scope: string): string {
  return createHash('sha256').update(`${sa.client_email}\n${sa.private_key_id ?? ''}\n${sa.token_uri}\n${scope}\n${sa.private_key}`).digest('hex');
}

/** The signed JWT assertion of the grant. */
export async function signAssertion(sa: ServiceAccount, nowSeconds: number, scope = CLOUD_PLATFORM_SCOPE): Promise<string> {
  const key = await signingKey(sa.private_key, fingerprintOf(sa, ''));
  return new SignJWT({ scope })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(sa.private_key_id ? { kid: sa.private_key_id } : {}) })
    .setIssuer(sa.client_email)
    .setAudience(sa.token_uri)
    .setIssuedAt(nowSeconds)
    .setExpirationTime(nowSeconds + ASSERTION_LIFETIME_S)
    .sign(key);
}

interface Token {
  accessToken: string;
  /** When to stop using it (ms since the epoch): its expiry less the refresh margin. */
  renewAt: number;
}

const tokens = new Map<string, Token>();
const inFlight = new Map<string, Promise<Token>>();

/** An OAuth `error` code as sent (`invalid_grant`), or null when it is not one. */
function oauthCode(value: unknown): string | null {
  return typeof value === 'string' && /^[\w.-]{1,64}$/.test(value) ? value : null;
}

/** An OAuth `error_description`, one line, cut short: enough to diagnose, never a whole body. */
function oauthDescription(value: unknown): string | undefined {
  return typeof value === 'string' ? value.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, 200) || undefined : undefined;
}

async function exchange(sa: ServiceAccount, scope: string, outbound: OutboundGuard | undefined): Promise<Token> {
  const started = Date.now();
  const assertion = await signAssertion(sa, Math.floor(started / 1000), scope);
  let response: Response;
  try {
    const init: RequestInit = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion }).toString(),
      redirect: 'manual',
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
    };
    response = await (outbound ? outbound.fetch(sa.token_uri, init) : fetch(sa.token_uri, init));
  } catch (error) {
    if (error instanceof GatewayError)
      // Refused by the outbound guard, before any connection.
      throw new GatewayError({ code: error.code, type: error.type, status: 400, message: `svcC_service_account_json token_uri: ${error.message}`, param: 'svcC_service_account_json' });
    throw Errors.upstreamUnreachable('vertex-ai', `the OAuth token endpoint: ${error instanceof Error ? error.message : String(error)}`);
  }
  const text = await response.text().catch(() => '');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const body = isObject(json) ? json : {};
  if (!response.ok) {
    const code = oauthCode(body.error);
    const description = oauthDescription(body.error_description);
    const detail = [code, description].filter(Boolean).join(': ') || `status ${response.status}`;
    if (response.status === 429) throw Errors.provider('vertex-ai', 429, `OAuth token endpoint: ${detail}`, 'rate_limit_error', code);
    if (response.status >= 500) throw Errors.upstreamUnreachable('vertex-ai', `the OAuth token endpoint answered ${response.status}`);
    // The grant was refused: the service account's credentials are wrong, disabled or not allowed.
    throw Errors.provider('vertex-ai', 401, `The service account could not obtain an access token: ${detail}`, 'authentication_error', code);
  }
  if (typeof body.access_token !== 'string' || !body.access_token) throw Errors.upstreamInvalid('vertex-ai', 'the OAuth token endpoint sent no access_token');
  const lifetimeMs = (typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : ASSERTION_LIFETIME_S) * 1000;
  return { accessToken: body.access_token, renewAt: started + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 10) };
}

/**
 * An access token for the service account: cached, renewed shortly before expiry, one exchange at a time. `outbound`
 * is the gateway's guard, through which the token_uri is fetched (a bare harness passes none: a plain fetch).
 */
export async function accessToken(sa: ServiceAccount, scope = CLOUD_PLATFORM_SCOPE, outbound?: OutboundGuard): Promise<string> {
  const id = fingerprintOf(sa, scope);
  const cached = tokens.get(id);
  if (cached && Date.now() < cached.renewAt) return cached.accessToken;
  let pending = inFlight.get(id);
  if (!pending) {
    pending = exchange(sa, scope, outbound)
      .then((token) => {
        tokens.delete(id);
        if (tokens.size >= MAX_CACHED) tokens.delete(tokens.keys().next().value as string);
        tokens.set(id, token);
        return token;
      })
      .finally(() => inFlight.delete(id));
    inFlight.set(id, pending);
  }
  try {
    return (await pending).accessToken;
  } catch (error) {
    throw error instanceof GatewayError ? error : Errors.upstreamUnreachable('vertex-ai', `the OAuth token exchange failed: ${String(error)}`);
  }
}

/** Forgets every cached token and key (tests). */
export function clearTokenCache(): void {
  tokens.clear();
  keys.clear();
}
