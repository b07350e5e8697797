/**
 * An OAuth 2.1 authorization server on loopback for the MCP connection tests: RFC 8414 metadata, `/authorize`
 * (approves at once: redirects to the redirect_uri with a code, for the one registered client, S256 PKCE required),
 * `/token` (authorization_code with the PKCE verifier checked, and refresh_token), issuing `accessToken` with a short
 * `expires_in` so that refresh can be seen. With `registration`, it also offers dynamic client registration (RFC 7591)
 * at `/register`, named by `registration_endpoint` in its metadata: clients it registers are then known to `/authorize`
 * (only for their registered redirect URIs) and `/token` (authenticated as the registration answered: HTTP Basic
 * with the issued secret, or the client_id alone for a public client).
 */
export interface OAuthServer {
  url: string;
  /** Grants the token endpoint gave, in order. */
  grants: string[];
  /** The bodies of the registration requests, in order. */
  registrations: Record<string, unknown>[];
  /** The client ids the token endpoint authenticated, in order, with how. */
  tokenClients: { client_id: string; method: 'client_secret_basic' | 'client_secret_post' | 'none' }[];
  stop(): void;
}

export interface OAuthServerOptions {
  registration?: {
    /** What a registered client authenticates with at the token endpoint (answered as token_endpoint_auth_method). */
    authMethod: 'client_secret_basic' | 'none';
    /** When set, every registration is refused with this RFC 7591 error (invalid_client_metadata and its description). */
    refuse?: string;
  };
}

interface Registered {
  secret: string | undefined;
  redirectUris: string[];
}

/** The client a token request authenticates as (HTTP Basic, or form fields), or undefined when it does not. */
function tokenClient(request: Request, form: URLSearchParams, known: (id: string) => { secret: string | undefined } | undefined) {
  const basic = request.headers.get('authorization');
  if (basic?.startsWith('Basic ')) {
    const [id, secret] = Buffer.from(basic.slice(6), 'base64').toString('utf8').split(':');
    const client = known(decodeURIComponent(id ?? ''));
    return client?.secret !== undefined && client.secret === decodeURIComponent(secret ?? '') ? { client_id: decodeURIComponent(id ?? ''), method: 'client_secret_basic' as const } : undefined;
  }
  const id = form.get('client_id') ?? '';
  const client = known(id);
  if (!client) return undefined;
  if (client.secret === undefined) return form.get('client_secret') === null ? { client_id: id, method: 'none' as const } : undefined;
  return form.get('client_secret') === client.secret ? { client_id: id, method: 'client_secret_post' as const } : undefined;
}

async function s256(verifier: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  return Buffer.from(digest).toString('base64url');
}

export function startOAuthServer(client: { id: string; secret: string }, accessToken: string, options: OAuthServerOptions = {}): OAuthServer {
  const codes = new Map<string, { challenge: string; redirect: string; clientId: string }>();
  const grants: string[] = [];
  const registrations: Record<string, unknown>[] = [];
  const tokenClients: OAuthServer['tokenClients'] = [];
  const registered = new Map<string, Registered>();
  const known = (id: string) => (id === client.id ? { secret: client.secret } : registered.get(id));
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const issuer = url.origin;
      if (url.pathname.startsWith('/.well-known/oauth-authorization-server') || url.pathname.startsWith('/.well-known/openid-configuration'))
        return Response.json({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          response_types_supported: ['code'],
          grant_types_supported: ['authorization_code', 'refresh_token'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: options.registration ? ['client_secret_basic', 'client_secret_post', 'none'] : ['client_secret_post'],
          ...(options.registration ? { registration_endpoint: `${issuer}/register` } : {}),
        });
      if (url.pathname === '/register' && request.method === 'POST' && options.registration) {
        const body = (await request.json()) as Record<string, unknown>;
        registrations.push(body);
        const redirectUris = Array.isArray(body.redirect_uris) ? body.redirect_uris.map(String) : [];
        if (options.registration.refuse) return Response.json({ error: 'invalid_client_metadata', error_description: options.registration.refuse }, { status: 400 });
        if (redirectUris.length === 0) return Response.json({ error: 'invalid_redirect_uri', error_description: 'redirect_uris is required' }, { status: 400 });
        const id = `registered-${crypto.randomUUID()}`;
        const secret = options.registration.authMethod === 'none' ? undefined : `secret-${crypto.randomUUID()}`;
        registered.set(id, { secret, redirectUris });
        return Response.json(
          {
            ...body,
            client_id: id,
            client_id_issued_at: Math.floor(Date.now() / 1000),
            ...(secret === undefined ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
            token_endpoint_auth_method: options.registration.authMethod,
          },
          { status: 201 },
        );
      }
      if (url.pathname === '/authorize') {
        const q = url.searchParams;
        const clientId = q.get('client_id') ?? '';
        const asRegistered = registered.get(clientId);
        if ((clientId !== client.id && !asRegistered) || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) return new Response('bad request', { status: 400 });
        if (asRegistered && !asRegistered.redirectUris.includes(q.get('redirect_uri') ?? '')) return new Response('unregistered redirect_uri', { status: 400 });
        const code = crypto.randomUUID();
        codes.set(code, { challenge: q.get('code_challenge') as string, redirect: q.get('redirect_uri') as string, clientId });
        const to = new URL(q.get('redirect_uri') as string);
        to.searchParams.set('code', code);
        to.searchParams.set('state', q.get('state') ?? '');
        return new Response(null, { status: 302, headers: { location: to.toString() } });
      }
      if (url.pathname === '/token' && request.method === 'POST') {
        const form = new URLSearchParams(await request.text());
        const authenticated = tokenClient(request, form, known);
        if (!authenticated) return Response.json({ error: 'invalid_client' }, { status: 401 });
        const grant = form.get('grant_type') ?? '';
        if (grant === 'authorization_code') {
          const pending = codes.get(form.get('code') ?? '');
          codes.delete(form.get('code') ?? '');
          if (!pending || pending.clientId !== authenticated.client_id || pending.redirect !== form.get('redirect_uri') || (await s256(form.get('code_verifier') ?? '')) !== pending.challenge)
            return Response.json({ error: 'invalid_grant' }, { status: 400 });
        } else if (grant !== 'refresh_token' || form.get('refresh_token') !== 'refresh-me') return Response.json({ error: 'invalid_grant' }, { status: 400 });
        grants.push(grant);
        tokenClients.push(authenticated);
        return Response.json({ access_token: accessToken, token_type: 'Bearer', expires_in: 1, refresh_token: 'refresh-me' });
      }
      return new Response('not found', { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, grants, registrations, tokenClients, stop: () => server.stop(true) };
}
