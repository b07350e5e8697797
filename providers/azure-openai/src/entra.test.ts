import { describe, expect, test } from 'bun:test';
import { GatewayError } from '@gateway/sdk';
import { EntraTokens, type EntraCredentials, type FetchLike } from './entra.ts';

const creds: EntraCredentials = {
  tenantId: '11111111-2222-3333-4444-555555555555',
  clientId: 'app-id',
  clientSecret: 'app-secret',
  scope: 'https://cognitiveservices.azure.com/.default',
};

/** A scripted token endpoint: records each request and answers `expires_in` seconds (or a given response). */
function endpoint(expiresIn: number | string = 3600, answer?: () => Response | Promise<Response>) {
  const calls: { url: string; form: Record<string, string>; contentType: string | undefined }[] = [];
  let n = 0;
  const fetch: FetchLike = async (url, init) => {
    calls.push({
      url,
      form: Object.fromEntries(new URLSearchParams(String(init.body))),
      contentType: (init.headers as Record<string, string>)['content-type'],
    });
    if (answer) return answer();
    return Response.json({ token_type: 'Bearer', expires_in: expiresIn, access_token: `tok-${++n}` });
  };
  return { calls, fetch };
}

function clock(start = 1_000_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

describe('EntraTokens', () => {
  test('the client-credentials grant goes to <authority>/<tenant>/oauth2/v2.0/token as a form', async () => {
    const ep = endpoint();
    const tokens = new EntraTokens({ fetch: ep.fetch });
    expect(await tokens.get(creds)).toBe('tok-1');
    expect(ep.calls).toHaveLength(1);
    expect(ep.calls[0]?.url).toBe(`https://login.microsoftonline.com/${creds.tenantId}/oauth2/v2.0/token`);
    expect(ep.calls[0]?.contentType).toBe('application/x-www-form-urlencoded');
    expect(ep.calls[0]?.form).toEqual({
      grant_type: 'client_credentials',
      client_id: 'app-id',
      client_secret: 'app-secret',
      scope: 'https://cognitiveservices.azure.com/.default',
    });
  });

  test('a token is fetched once and served from the cache until shortly before it expires', async () => {
    const ep = endpoint(3600);
    const c = clock();
    const tokens = new EntraTokens({ fetch: ep.fetch, now: c.now });
    expect(await tokens.get(creds)).toBe('tok-1');
    expect(tokens.peek(creds)).toBe('tok-1');
    c.t += 50 * 60_000; // 50 minutes: still fresh
    expect(await tokens.get(creds)).toBe('tok-1');
    expect(ep.calls).toHaveLength(1);
    c.t += 5 * 60_000 + 1; // inside the 5-minute margin before expiry: refreshed
    expect(tokens.peek(creds)).toBeUndefined();
    expect(await tokens.get(creds)).toBe('tok-2');
    expect(ep.calls).toHaveLength(2);
    expect(tokens.peek(creds)).toBe('tok-2');
  });

  test('an expired token is replaced', async () => {
    const ep = endpoint(60);
    const c = clock();
    const tokens = new EntraTokens({ fetch: ep.fetch, now: c.now });
    expect(await tokens.get(creds)).toBe('tok-1');
    c.t += 61_000;
    expect(await tokens.get(creds)).toBe('tok-2');
    // a short-lived token is refreshed after 90% of its life
    c.t += 53_000;
    expect(await tokens.get(creds)).toBe('tok-2');
    c.t += 1_001;
    expect(await tokens.get(creds)).toBe('tok-3');
  });

  test('expires_in sent as a string is understood', async () => {
    const ep = endpoint('120');
    const c = clock();
    const tokens = new EntraTokens({ fetch: ep.fetch, now: c.now });
    await tokens.get(creds);
    c.t += 100_000;
    expect(tokens.peek(creds)).toBe('tok-1');
    c.t += 20_001;
    expect(tokens.peek(creds)).toBeUndefined();
  });

  test('concurrent requests share one token request', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const ep = endpoint(3600, async () => {
      await gate;
      return Response.json({ token_type: 'Bearer', expires_in: 3600, access_token: 'shared' });
    });
    const tokens = new EntraTokens({ fetch: ep.fetch });
    const all = Promise.all([tokens.get(creds), tokens.get(creds), tokens.get(creds)]);
    release();
    expect(await all).toEqual(['shared', 'shared', 'shared']);
    expect(ep.calls).toHaveLength(1);
  });

  test('tokens are kept per tenant, client, secret and scope', async () => {
    const ep = endpoint();
    const tokens = new EntraTokens({ fetch: ep.fetch });
    await tokens.get(creds);
    await tokens.get({ ...creds, scope: 'https://ml.azure.com/.default' });
    await tokens.get({ ...creds, clientSecret: 'rotated' });
    await tokens.get({ ...creds, tenantId: 'contoso.onmicrosoft.com' });
    await tokens.get(creds);
    expect(ep.calls).toHaveLength(4);
  });

  test('a refused request is a 401 with Entra’s description, and nothing is cached', async () => {
    const ep = endpoint(3600, () =>
      Response.json({ error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' }, { status: 401 }),
    );
    const tokens = new EntraTokens({ fetch: ep.fetch });
    const err = await tokens.get(creds, 'azure-openai').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(401);
    expect((err as GatewayError).type).toBe('authentication_error');
    expect((err as GatewayError).message).toContain('AADSTS7000215');
    expect((err as GatewayError).message).toContain('invalid_client');
    expect((err as GatewayError).toBody().provider).toBe('azure-openai');
    expect((err as GatewayError).message).not.toContain('app-secret');
    await tokens.get(creds).catch(() => undefined);
    expect(ep.calls).toHaveLength(2); // a failure is not cached
  });

  test('an unreachable token endpoint is a retryable 502', async () => {
    const tokens = new EntraTokens({
      fetch: async () => {
        throw new Error('connect ECONNREFUSED');
      },
    });
    const err = (await tokens.get(creds).catch((e: unknown) => e)) as GatewayError;
    expect(err.status).toBe(502);
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('ECONNREFUSED');
  });

  test('a failed refresh keeps serving the old token while it is still valid', async () => {
    let fail = false;
    let n = 0;
    const c = clock();
    const tokens = new EntraTokens({
      now: c.now,
      fetch: async () =>
        fail ? Response.json({ error: 'temporarily_unavailable' }, { status: 503 }) : Response.json({ expires_in: 3600, access_token: `tok-${++n}` }),
    });
    expect(await tokens.get(creds)).toBe('tok-1');
    fail = true;
    c.t += 57 * 60_000; // refresh due, token valid for 3 more minutes
    expect(await tokens.get(creds)).toBe('tok-1');
    c.t += 4 * 60_000; // expired: the failure shows
    const err = (await tokens.get(creds).catch((e: unknown) => e)) as GatewayError;
    expect(err.status).toBe(502);
    fail = false;
    expect(await tokens.get(creds)).toBe('tok-2');
  });

  test('an answer without access_token is an unreadable answer', async () => {
    const tokens = new EntraTokens({ fetch: async () => Response.json({ token_type: 'Bearer' }) });
    const err = (await tokens.get(creds).catch((e: unknown) => e)) as GatewayError;
    expect(err.status).toBe(502);
    expect(err.code).toBe('upstream_invalid_response');
  });

  test('the authority host is configurable and a tenant cannot change the token URL path', async () => {
    const ep = endpoint();
    const tokens = new EntraTokens({ fetch: ep.fetch, authorityHost: 'https://login.microsoftonline.us/' });
    await tokens.get(creds);
    expect(ep.calls[0]?.url).toBe(`https://login.microsoftonline.us/${creds.tenantId}/oauth2/v2.0/token`);
    const err = (await tokens.get({ ...creds, tenantId: '../evil?x=' }).catch((e: unknown) => e)) as GatewayError;
    expect(err.status).toBe(400);
    expect(ep.calls).toHaveLength(1);
  });

  test('the cache is bounded', async () => {
    const ep = endpoint();
    const tokens = new EntraTokens({ fetch: ep.fetch, maxEntries: 2 });
    await tokens.get({ ...creds, clientId: 'a' });
    await tokens.get({ ...creds, clientId: 'b' });
    await tokens.get({ ...creds, clientId: 'c' });
    expect(tokens.peek({ ...creds, clientId: 'a' })).toBeUndefined();
    expect(tokens.peek({ ...creds, clientId: 'c' })).toBeDefined();
  });
});
