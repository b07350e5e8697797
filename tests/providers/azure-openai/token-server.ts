/**
 * A local Microsoft Entra ID token endpoint: `POST /<tenant>/oauth2/v2.0/token` with the client-credentials grant,
 * answering `{token_type, expires_in, ext_expires_in, access_token}` or Entra's error body
 * (`{error, error_description, error_codes, …}`) for a wrong client or secret.
 */
import { startMockServer } from '../../mocks/harness.ts';

export interface TokenServerOptions {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  /** Seconds each token lives (the `expires_in` answered). */
  expiresIn?: number;
  /** Answer `expires_in` as a string, as some authorities do. */
  expiresInAsString?: boolean;
}

export interface TokenRequest {
  path: string;
  contentType: string | null;
  form: Record<string, string>;
}

export interface TokenServer {
  /** Authority host to configure (`AZURE_AUTHORITY_HOST` / `authorityHost`). */
  url: string;
  requests: TokenRequest[];
  /** Whether a token was issued by this server (for `scope`, when given) and has not expired. */
  isValid(token: string, scope?: string): boolean;
  /** Makes the next token requests fail with this HTTP status (Entra's error body); undefined = answer normally. */
  failWith: number | undefined;
  stop(): Promise<void>;
}

export function startTokenServer(options: TokenServerOptions): TokenServer {
  const issued = new Map<string, { scope: string; expiresAt: number }>();
  let counter = 0;
  const state: { failWith: number | undefined } = { failWith: undefined };
  const entraError = (status: number, error: string, description: string, code: number) =>
    Response.json(
      {
        error,
        error_description: `${description}\r\nTrace ID: 00000000-0000-0000-0000-000000000000\r\nCorrelation ID: 00000000-0000-0000-0000-000000000000\r\nTimestamp: 2025-01-01 00:00:00Z`,
        error_codes: [code],
        timestamp: '2025-01-01 00:00:00Z',
        trace_id: '00000000-0000-0000-0000-000000000000',
        correlation_id: '00000000-0000-0000-0000-000000000000',
      },
      { status },
    );

  const formOf = (text: string) => Object.fromEntries(new URLSearchParams(text));
  const server = startMockServer<TokenRequest>({
    record: ({ path, headers, body }) => ({ path, contentType: headers['content-type'] ?? null, form: formOf(body) }),
    handle({ request, url, text }) {
      const form = formOf(text);
      if (request.method !== 'POST' || url.pathname !== `/${options.tenantId}/oauth2/v2.0/token`) {
        return entraError(400, 'invalid_request', `AADSTS90002: Tenant '${url.pathname.split('/')[1]}' not found.`, 90002);
      }
      if (state.failWith !== undefined) return entraError(state.failWith, 'temporarily_unavailable', 'AADSTS50000: There was an error issuing a token.', 50000);
      if (form.grant_type !== 'client_credentials') return entraError(400, 'unsupported_grant_type', 'AADSTS70003: The app requested an unsupported grant type.', 70003);
      if (form.client_id !== options.clientId) return entraError(400, 'unauthorized_client', `AADSTS700016: Application with identifier '${form.client_id}' was not found in the directory.`, 700016);
      if (form.client_secret !== options.clientSecret) return entraError(401, 'invalid_client', 'AADSTS7000215: Invalid client secret provided.', 7000215);
      if (!form.scope?.endsWith('/.default')) return entraError(400, 'invalid_scope', 'AADSTS1002012: The provided value for scope is not valid.', 1002012);
      const expiresIn = options.expiresIn ?? 3599;
      const token = `entra-token-${++counter}`;
      issued.set(token, { scope: form.scope, expiresAt: Date.now() + expiresIn * 1000 });
      return Response.json({
        token_type: 'Bearer',
        expires_in: options.expiresInAsString ? String(expiresIn) : expiresIn,
        ext_expires_in: options.expiresInAsString ? String(expiresIn) : expiresIn,
        access_token: token,
      });
    },
  });
  return {
    url: server.url,
    requests: server.requests,
    isValid(token, scope) {
      const entry = issued.get(token);
      return entry !== undefined && entry.expiresAt > Date.now() && (scope === undefined || entry.scope === scope);
    },
    get failWith() {
      return state.failWith;
    },
    set failWith(status) {
      state.failWith = status;
    },
    stop: server.stop,
  };
}
