// CORS (issue #25, item 6) on real gateway processes: off by default; with CORS_ALLOWED_ORIGINS a preflight from an
// allowed origin is answered without a key, on the data plane and the administration API, and an actual request
// from it carries Access-Control-Allow-Origin; another origin's preflight is refused and its answers carry none.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const APP = 'https://app.example';
const OTHER = 'https://elsewhere.example';

let mock: OpenAIMock;
beforeAll(async () => {
  mock = await startOpenAIMock({ apiKey: null });
});
afterAll(async () => {
  await mock.stop();
});

const preflight = (gw: GatewayProcess, path: string, origin: string, method = 'POST') =>
  fetch(`${gw.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'content-type,x-gateway-api-key,x-gateway-provider' },
  });

const chat = (gw: GatewayProcess, origin: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      origin,
      'content-type': 'application/json',
      'x-gateway-api-key': gw.adminKey,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': mock.url,
      authorization: 'Bearer sk-test',
    },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
  });

const adminList = (gw: GatewayProcess, origin: string) => fetch(`${gw.url}/v1/api-keys`, { headers: { origin, 'x-gateway-api-key': gw.adminKey } });

describe('CORS', () => {
  test('off by default: a preflight gets no CORS headers, answers carry none', async () => {
    const gw = await startGatewayProcess();
    try {
      const pre = await preflight(gw, '/v1/chat/completions', APP);
      expect(pre.headers.get('access-control-allow-origin')).toBeNull();
      expect(pre.status).not.toBe(204);
      const answer = await chat(gw, APP);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  }, 60_000);

  describe('CORS_ALLOWED_ORIGINS set', () => {
    let gw: GatewayProcess;
    beforeAll(async () => {
      gw = await startGatewayProcess({ CORS_ALLOWED_ORIGINS: `${APP}/, https://second.example` });
    });
    afterAll(async () => {
      expect(await gw.stop()).toBe(0);
    });

    test.each(['/v1/chat/completions', '/v1/api-keys', '/v1/workspaces/default'])('a preflight from an allowed origin, without a key: 204 (%s)', async (path) => {
      const pre = await preflight(gw, path, APP);
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe(APP);
      expect(pre.headers.get('access-control-allow-methods')).toContain('POST');
      expect(pre.headers.get('access-control-allow-headers')).toBe('content-type,x-gateway-api-key,x-gateway-provider');
      expect(pre.headers.get('access-control-max-age')).toBe('600');
      expect(pre.headers.get('vary')).toContain('Origin');
      expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
    });

    test('a preflight from another origin: 403, no Access-Control-Allow-Origin', async () => {
      const pre = await preflight(gw, '/v1/chat/completions', OTHER);
      expect(pre.status).toBe(403);
      expect(pre.headers.get('access-control-allow-origin')).toBeNull();
      expect(await pre.json()).toMatchObject({ error: { code: 'forbidden', message: `Origin ${OTHER} is not in CORS_ALLOWED_ORIGINS` } });
    });

    test('actual requests: an allowed origin reads the answer (data plane and administration), another does not', async () => {
      const allowed = await chat(gw, APP);
      expect(allowed.status).toBe(200);
      expect(allowed.headers.get('access-control-allow-origin')).toBe(APP);
      expect(allowed.headers.get('access-control-expose-headers')).toContain('x-gateway-trace-id');
      expect(((await allowed.json()) as { object: string }).object).toBe('chat.completion');

      const admin = await adminList(gw, 'https://second.example');
      expect(admin.status).toBe(200);
      expect(admin.headers.get('access-control-allow-origin')).toBe('https://second.example');

      // Served (the browser, not the gateway, keeps the answer from the page), but without the header.
      const denied = await chat(gw, OTHER);
      expect(denied.status).toBe(200);
      expect(denied.headers.get('access-control-allow-origin')).toBeNull();
      expect((await adminList(gw, OTHER)).headers.get('access-control-allow-origin')).toBeNull();

      // An error answer from an allowed origin is readable too, so a page sees why it failed.
      const unauthorised = await fetch(`${gw.url}/v1/api-keys`, { headers: { origin: APP } });
      expect(unauthorised.status).toBe(401);
      expect(unauthorised.headers.get('access-control-allow-origin')).toBe(APP);
    });

    test('no Origin header (not a browser): answers as without CORS', async () => {
      const answer = await fetch(`${gw.url}/health`);
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    });
  });

  test('CORS_ALLOWED_ORIGINS=*: any origin, answered with *', async () => {
    const gw = await startGatewayProcess({ CORS_ALLOWED_ORIGINS: '*' });
    try {
      const pre = await preflight(gw, '/v1/embeddings', OTHER);
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('*');
      const answer = await adminList(gw, OTHER);
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  }, 60_000);
});
