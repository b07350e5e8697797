/**
 * A local Microsoft Entra ID token endpoint and Azure Key Vault, speaking their wire formats:
 * - `POST /{tenant}/oauth2/v2.0/token`, form `grant_type=client_credentials&client_id&client_secret&scope`; answer
 *   `{token_type: "Bearer", expires_in, ext_expires_in, access_token}`; errors `{error, error_description: "AADSTS…",
 *   error_codes, timestamp, trace_id, correlation_id}`.
 * - `GET /secrets/{name}[/{version}]?api-version=7.4` with `Authorization: Bearer <token>`; answer `{value, id,
 *   attributes}`; 401 with a `WWW-Authenticate` challenge for a missing or unknown token; errors
 *   `{"error": {"code", "message"}}` (SecretNotFound 404).
 * Both live on one server: the test uses its URL as the authority host and as the vault URL.
 */
import { bearerToken, startMockServer } from '../harness.ts';

export const KEY_VAULT_SCOPE = 'https://vault.azure.net/.default';

export interface AzureMockOptions {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  /** expires_in of issued tokens (s). */
  tokenLifetimeS?: number;
}

export interface AzureKeyVaultMock {
  url: string;
  /** Sets the secret's value as a new current version; returns the version id. */
  setSecret(name: string, value: string): string;
  /** Forgets every issued token (as if they expired or were revoked): the next read gets 401. */
  revokeTokens(): void;
  tokenRequests: number;
  /** Secret reads that passed the token check. */
  secretReads: number;
  stop(): void;
}

function entraError(status: number, error: string, code: number, text: string): Response {
  return Response.json(
    {
      error,
      error_description: `AADSTS${code}: ${text} Trace ID: ${crypto.randomUUID()} Correlation ID: ${crypto.randomUUID()} Timestamp: ${new Date().toISOString()}`,
      error_codes: [code],
      timestamp: new Date().toISOString(),
      trace_id: crypto.randomUUID(),
      correlation_id: crypto.randomUUID(),
    },
    { status },
  );
}

const vaultError = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  Response.json({ error: { code, message } }, { status, headers });

export function startAzureKeyVault(options: AzureMockOptions): AzureKeyVaultMock {
  const tokens = new Map<string, number>();
  const secrets = new Map<string, { version: string; value: string; created: number }[]>();
  let tokenRequests = 0;
  let secretReads = 0;
  let base = '';

  function token(text: string, tenant: string): Response {
    tokenRequests++;
    const form = new URLSearchParams(text);
    if (tenant !== options.tenantId) return entraError(400, 'invalid_request', 90002, `Tenant '${tenant}' not found.`);
    if (form.get('grant_type') !== 'client_credentials') return entraError(400, 'unsupported_grant_type', 70003, 'The app requested an unsupported grant type.');
    if (form.get('client_id') !== options.clientId) return entraError(400, 'unauthorized_client', 700016, `Application with identifier '${form.get('client_id')}' was not found in the directory.`);
    if (form.get('client_secret') !== options.clientSecret) return entraError(401, 'invalid_client', 7000215, 'Invalid client secret provided.');
    if (form.get('scope') !== KEY_VAULT_SCOPE) return entraError(400, 'invalid_scope', 70011, `The provided value for the input parameter 'scope' is not valid.`);
    const lifetime = options.tokenLifetimeS ?? 3599;
    const accessToken = `eyJ0eXAiOiJKV1Qi.${crypto.randomUUID().replaceAll('-', '')}.${crypto.randomUUID().replaceAll('-', '')}`;
    tokens.set(accessToken, Date.now() + lifetime * 1000);
    return Response.json({ token_type: 'Bearer', expires_in: lifetime, ext_expires_in: lifetime, access_token: accessToken });
  }

  function secret(req: Request, url: URL, name: string, version: string | undefined): Response {
    if (!url.searchParams.get('api-version')) return vaultError(400, 'BadParameter', "The 'api-version' query parameter is missing.");
    const challenge = {
      'www-authenticate': `Bearer authorization="${base}/${options.tenantId}", resource="https://vault.azure.net"`,
    };
    const token = bearerToken(req.headers);
    if (token === undefined) return vaultError(401, 'Unauthorized', 'AKV10000: Request is missing a Bearer or PoP token.', challenge);
    const expires = tokens.get(token);
    if (expires === undefined || expires < Date.now()) return vaultError(401, 'Unauthorized', 'AKV10032: Invalid issuer or the token expired.', challenge);
    const versions = secrets.get(name);
    const found = version ? versions?.find((v) => v.version === version) : versions?.[versions.length - 1];
    if (!found) return vaultError(404, 'SecretNotFound', `A secret with (name/id) ${name}${version ? `/${version}` : ''} was not found in this key vault. If you recently deleted this secret you may be able to recover it using the correct recovery command.`);
    secretReads++;
    const seconds = Math.floor(found.created / 1000);
    return Response.json({
      value: found.value,
      id: `${base}/secrets/${name}/${found.version}`,
      attributes: { enabled: true, created: seconds, updated: seconds, recoveryLevel: 'Recoverable+Purgeable', recoverableDays: 90 },
      tags: {},
    });
  }

  const server = startMockServer({
    record: () => undefined, // counted in tokenRequests and secretReads
    handle({ request: req, url, text }) {
      const tokenPath = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(url.pathname);
      if (tokenPath && req.method === 'POST') return token(text, decodeURIComponent(tokenPath[1] as string));
      const secretPath = /^\/secrets\/([^/]+)(?:\/([^/]*))?$/.exec(url.pathname);
      if (secretPath && req.method === 'GET') return secret(req, url, decodeURIComponent(secretPath[1] as string), secretPath[2] ? decodeURIComponent(secretPath[2]) : undefined);
      return vaultError(404, 'NotFound', 'Not found');
    },
  });
  base = server.url;

  return {
    url: base,
    setSecret(name, value) {
      const version = crypto.randomUUID().replaceAll('-', '');
      const list = secrets.get(name) ?? [];
      list.push({ version, value, created: Date.now() });
      secrets.set(name, list);
      return version;
    },
    revokeTokens() {
      tokens.clear();
    },
    get tokenRequests() {
      return tokenRequests;
    },
    get secretReads() {
      return secretReads;
    },
    stop() {
      void server.stop();
    },
  };
}
