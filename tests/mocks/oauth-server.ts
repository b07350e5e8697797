/**
 * An OAuth 2.1 authorization server on loopback for the MCP connection tests: RFC 8414 metadata, `/authorize`
 * (approves at once: redirects to the redirect_uri with a code, for the one registered client, S256 PKCE required),
 * `/token` (authorization_code with the PKCE verifier checked, and refresh_token), issuing `accessToken` with a short
 * `expires_in` so that refresh can be seen.
 */
export interface OAuthServer {
  url: string;
  /** Grants the token endpoint gave, in order. */
  grants: string[];
  stop(): void;
}

async function s256(verifier: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  return Buffer.from(digest).toString('base64url');
}

export function startOAuthServer(client: { id: string; secret: string }, accessToken: string): OAuthServer {
  const codes = new Map<string, { challenge: string; redirect: string }>();
  const grants: string[] = [];
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
          token_endpoint_auth_methods_supported: ['client_secret_post'],
        });
      if (url.pathname === '/authorize') {
        const q = url.searchParams;
        if (q.get('client_id') !== client.id || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) return new Response('bad request', { status: 400 });
        const code = crypto.randomUUID();
        codes.set(code, { challenge: q.get('code_challenge') as string, redirect: q.get('redirect_uri') as string });
        const to = new URL(q.get('redirect_uri') as string);
        to.searchParams.set('code', code);
        to.searchParams.set('state', q.get('state') ?? '');
        return new Response(null, { status: 302, headers: { location: to.toString() } });
      }
      if (url.pathname === '/token' && request.method === 'POST') {
        const form = new URLSearchParams(await request.text());
        if (form.get('client_id') !== client.id || form.get('client_secret') !== client.secret) return Response.json({ error: 'invalid_client' }, { status: 401 });
        const grant = form.get('grant_type') ?? '';
        if (grant === 'authorization_code') {
          const pending = codes.get(form.get('code') ?? '');
          codes.delete(form.get('code') ?? '');
          if (!pending || pending.redirect !== form.get('redirect_uri') || (await s256(form.get('code_verifier') ?? '')) !== pending.challenge)
            return Response.json({ error: 'invalid_grant' }, { status: 400 });
        } else if (grant !== 'refresh_token' || form.get('refresh_token') !== 'refresh-me') return Response.json({ error: 'invalid_grant' }, { status: 400 });
        grants.push(grant);
        return Response.json({ access_token: accessToken, token_type: 'Bearer', expires_in: 1, refresh_token: 'refresh-me' });
      }
      return new Response('not found', { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, grants, stop: () => server.stop(true) };
}
