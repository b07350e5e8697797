/**
 * The vertex-ai provider through an in-process gateway against the local Vertex AI server: the service-account token
 * exchange (verified by the server, cached, renewed), paths for every form of `model`, both publishers, faults.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { exportPKCS8, generateKeyPair } from 'jose';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../../helpers/in-process.ts';
import { FAULT_MODELS } from '../google/gemini-wire.ts';
import { SCOPE, startVertexServer, type VertexTestServer } from './server.ts';

type Obj = Record<string, any>;

let gateway: Gateway;
let server: VertexTestServer;
beforeAll(async () => {
  gateway = await startInProcessGateway();
  server = await startVertexServer({ project: 'proj-1', region: 'europe-west4' });
});
afterAll(async () => {
  server?.stop();
  await gateway?.close();
});

function config(s: VertexTestServer, extra: Obj = {}): Obj {
  return { provider: 'vertex-ai', svcC_project_id: s.project, svcC_region: s.region, svcC_service_account_json: s.serviceAccount, custom_host: s.baseUrl, ...extra };
}

function call(path: string, body: unknown, cfg: Obj, method = 'POST'): Promise<Response> {
  return gateway.handle(
    new Request(`http://gateway.test${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': JSON.stringify(cfg) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
}

const chat = (model: string, extra: Obj = {}, cfg: Obj = config(server)) => call('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Hello there' }], ...extra }, cfg);
const lastRequest = (s: VertexTestServer = server) => s.requests[s.requests.length - 1] as VertexTestServer['requests'][number];

async function events(res: Response): Promise<string[]> {
  return (await res.text())
    .split('\n\n')
    .map((e) => e.trim())
    .filter(Boolean)
    .map((e) => e.replace(/^data: /, ''));
}

describe('service-account OAuth', () => {
  test('one verified token exchange, then the cached token on every call', async () => {
    const first = await chat('gemini-2.5-flash');
    expect(first.status).toBe(200);
    expect(((await first.json()) as Obj).choices[0].message.content).toBe('You said: Hello there');
    expect(server.tokenRequests.length).toBe(1);
    const grant = server.tokenRequests[0] as VertexTestServer['tokenRequests'][number];
    expect(grant.ok).toBe(true);
    expect(grant.claims?.iss).toBe(server.serviceAccount.client_email);
    expect(grant.claims?.aud).toBe(server.tokenUri);
    expect(grant.claims?.scope).toBe(SCOPE);
    const bearer = lastRequest().headers.authorization;
    expect(bearer).toMatch(/^Bearer ya29\.test-/);
    for (let i = 0; i < 3; i++) expect((await chat('gemini-2.5-flash')).status).toBe(200);
    expect(server.tokenRequests.length).toBe(1);
    expect(lastRequest().headers.authorization).toBe(bearer);
  });

  test('a service account whose key the token server cannot verify: 401 with the OAuth error, no data-plane call', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const forged = { ...server.serviceAccount, private_key: await exportPKCS8(privateKey) };
    const before = server.requests.length;
    const res = await chat('gemini-2.5-flash', {}, config(server, { svcC_service_account_json: forged }));
    expect(res.status).toBe(401);
    const body = (await res.json()) as Obj;
    expect(body.error.message).toContain('invalid_grant');
    expect(body.provider).toBe('vertex-ai');
    expect(server.requests.length).toBe(before);
    expect(server.tokenRequests[server.tokenRequests.length - 1]?.ok).toBe(false);
  });

  test('a token is renewed shortly before it expires', async () => {
    const shortLived = await startVertexServer({ tokenLifetimeS: 1 });
    try {
      const cfg = config(shortLived);
      expect((await chat('gemini-2.5-flash', {}, cfg)).status).toBe(200);
      expect((await chat('gemini-2.5-flash', {}, cfg)).status).toBe(200);
      expect(shortLived.tokenRequests.length).toBe(1);
      await Bun.sleep(1000);
      expect((await chat('gemini-2.5-flash', {}, cfg)).status).toBe(200);
      expect(shortLived.tokenRequests.length).toBe(2);
    } finally {
      shortLived.stop();
    }
  });

  test('a token_uri that is neither https nor loopback is refused', async () => {
    const res = await chat('gemini-2.5-flash', {}, config(server, { svcC_service_account_json: { ...server.serviceAccount, token_uri: 'http://169.254.169.254/token' } }));
    expect(res.status).toBe(400);
  });
});

describe('paths', () => {
  test('Gemini: generateContent, and streamGenerateContent?alt=sse for streams', async () => {
    await chat('gemini-2.5-flash');
    expect(lastRequest().path).toBe('/v1/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent');
    const data = await events(await chat('gemini-2.5-flash', { stream: true, stream_options: { include_usage: true } }));
    expect(lastRequest().path).toBe('/v1/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent');
    expect(lastRequest().search).toBe('?alt=sse');
    expect(data[data.length - 1]).toBe('[DONE]');
    const usage = JSON.parse(data[data.length - 2] as string) as Obj;
    expect(usage.choices).toEqual([]);
    expect(usage.usage.prompt_tokens).toBe(2);
  });

  test('a complete resource identifier is the path as it is', async () => {
    const full = 'projects/proj-1/locations/europe-west4/publishers/google/models/gemini-2.5-pro';
    expect((await chat(full)).status).toBe(200);
    expect(lastRequest().path).toBe(`/v1/${full}:generateContent`);
    const claude = 'projects/proj-1/locations/europe-west4/publishers/anthropic/models/claude-opus-4@20250514';
    const res = await chat(claude);
    expect(res.status).toBe(200);
    expect(lastRequest().path).toBe(`/v1/${claude}:rawPredict`);
    expect(((await res.json()) as Obj).choices[0].message.content).toBe('You said: Hello there');
    // another project's resource reaches the server as given, which refuses it
    const other = await chat('projects/someone-else/locations/europe-west4/publishers/google/models/gemini-2.5-pro');
    expect(other.status).toBe(403);
    expect(((await other.json()) as Obj).error.message).toContain('someone-else');
  });

  test('endpoints/<id> goes under the config’s project and region', async () => {
    expect((await chat('endpoints/1234')).status).toBe(200);
    expect(lastRequest().path).toBe('/v1/projects/proj-1/locations/europe-west4/endpoints/1234:generateContent');
  });

  test('anthropic.<model>@<version>: rawPredict / streamRawPredict with the Vertex Anthropic body', async () => {
    const model = 'anthropic.claude-sonnet-4-5@20250929';
    expect((await chat(model)).status).toBe(200);
    const sent = lastRequest();
    expect(sent.path).toBe('/v1/projects/proj-1/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict');
    const body = JSON.parse(sent.body) as Obj;
    expect(body.anthropic_version).toBe('vertex-2023-10-16');
    expect(body.model).toBeUndefined();
    const data = await events(await chat(model, { stream: true }));
    expect(lastRequest().path).toEndWith(':streamRawPredict');
    expect(lastRequest().search).toBe('');
    expect(data[data.length - 1]).toBe('[DONE]');
    expect(data.slice(0, -1).map((d) => (JSON.parse(d) as Obj).choices[0]?.delta?.content ?? '').join('')).toBe('You said: Hello there');
  });

  test('no project anywhere is a 400 before any call', async () => {
    const { project_id: _p, ...noProject } = server.serviceAccount;
    const res = await chat('gemini-2.5-flash', {}, { provider: 'vertex-ai', svcC_region: server.region, svcC_service_account_json: noProject, custom_host: server.baseUrl });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Obj).error.message).toContain('svcC_project_id');
  });
});

describe('answers', () => {
  test('a malformed provider answer is a 502', async () => {
    const res = await chat(FAULT_MODELS.malformed);
    expect(res.status).toBe(502);
    const body = (await res.json()) as Obj;
    expect(body.error.code).toBe('upstream_invalid_response');
    expect(body.provider).toBe('vertex-ai');
  });

  test('an error event inside a Gemini stream ends it with an error frame', async () => {
    const data = await events(await chat(FAULT_MODELS.errorInStream, { stream: true }));
    expect(data).not.toContain('[DONE]');
    expect((JSON.parse(data[data.length - 1] as string) as Obj).provider).toBe('vertex-ai');
  });

  test('embeddings by :predict, usage from the token counts', async () => {
    const res = await call('/v1/embeddings', { model: 'text-embedding-005', input: ['one two', 'three'], encoding_format: 'float' }, config(server));
    expect(res.status).toBe(200);
    expect(lastRequest().path).toBe('/v1/projects/proj-1/locations/europe-west4/publishers/google/models/text-embedding-005:predict');
    expect(JSON.parse(lastRequest().body)).toEqual({ instances: [{ content: 'one two' }, { content: 'three' }] });
    const body = (await res.json()) as Obj;
    expect(body.data).toHaveLength(2);
    expect(body.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
  });

  test('GET /v1/models lists Model Garden’s Google models', async () => {
    const res = await call('/v1/models', undefined, config(server), 'GET');
    expect(res.status).toBe(200);
    expect(((await res.json()) as Obj).data.map((m: Obj) => m.id)).toEqual(['gemini-2.5-flash', 'text-embedding-005']);
  });
});
