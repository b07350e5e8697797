// The *_ENABLED switches of SPEC.md's self-hosted settings as they act on the administration API today, over HTTP
// against every route the loaded plugins register (the repository's and a small one from a temporary folder):
// API_ACCESS_ENABLED=OFF closes every administration route (403 feature_disabled, before any key is looked at)
// while gateway calls go on; each other switch OFF closes exactly the routes that declare its feature.
// GUARDRAILS_ENABLED=OFF on gateway calls (hooks and guardrails ignored) is tested in tests/e2e/hooks.test.ts and
// plugins/hooks/src/gateway.test.ts; AUDIT_LOGS_ENABLED=OFF recording nothing in tests/admin/audit.test.ts.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { AdminRoute, FeatureFlag } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { ROOT } from '../helpers/gateway-process.ts';
import { providerHeaders, startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type NotesProject, writeNotesProject } from '../helpers/notes-plugin.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const T = 60_000;

/** Every switch but API_ACCESS_ENABLED, by the feature name routes declare. */
const SWITCHES: Record<Exclude<FeatureFlag, 'apiAccess'>, string> = {
  guardrails: 'GUARDRAILS_ENABLED',
  dataExports: 'DATA_EXPORTS_ENABLED',
  usageLimits: 'USAGE_LIMITS_ENABLED',
  auditLogs: 'AUDIT_LOGS_ENABLED',
  scim: 'SCIM_ENABLED',
  policy: 'POLICY_ENABLED',
};

/** The route's path with every `:param` filled in. */
const concrete = (route: AdminRoute) => `/v1${route.path.replace(/:[A-Za-z_]+/g, 'x')}`;

async function call(gw: Gateway, route: AdminRoute, key: string | null): Promise<{ status: number; code: string | undefined }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== null) headers['x-gateway-api-key'] = key;
  const hasBody = route.method !== 'GET' && route.method !== 'DELETE';
  const res = await gw.handle(new Request(`http://gateway.local${concrete(route)}`, { method: route.method, headers, body: hasBody ? '{}' : undefined }));
  const body = (await res.json().catch(() => ({}))) as { error?: { code?: string } };
  return { status: res.status, code: body.error?.code };
}

let notes: NotesProject;
let mock: OpenAIMock;
const gateways: Gateway[] = [];

async function gateway(env: Record<string, string>): Promise<Gateway> {
  const gw = await startInProcessGateway(env, [ROOT, notes.root]);
  gateways.push(gw);
  return gw;
}

beforeAll(async () => {
  notes = writeNotesProject();
  mock = await startOpenAIMock({ apiKey: null });
}, T);

afterAll(async () => {
  for (const gw of gateways) await gw.close();
  await mock?.stop();
  notes?.remove();
}, T);

describe('API_ACCESS_ENABLED=OFF', () => {
  test('every administration route answers 403 feature_disabled, with or without a key; gateway calls go on', async () => {
    const gw = await gateway({ API_ACCESS_ENABLED: 'OFF' });
    const routes = gw.plugins.registry.routes.map((r) => r.route);
    const paths = routes.map((r) => `${r.method} ${r.path}`);
    expect(paths).toContain('GET /audit-logs');
    expect(paths).toContain('POST /test-notes');
    expect(paths).toContain('POST /test-public-notes');
    const open: string[] = [];
    for (const route of routes) {
      for (const key of [TEST_ADMIN_KEY, null]) {
        const { status, code } = await call(gw, route, key);
        if (status !== 403 || code !== 'feature_disabled') open.push(`${route.method} ${route.path} (${key ? 'key' : 'no key'}): ${status} ${code}`);
      }
    }
    expect(open).toEqual([]);

    const chat = await gw.handle(
      new Request('http://gateway.local/v1/chat/completions', {
        method: 'POST',
        headers: providerHeaders(mock.url),
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      }),
    );
    expect(chat.status).toBe(200);
    expect((await gw.handle(new Request('http://gateway.local/health'))).status).toBe(200);
  }, T);
});

describe('each other *_ENABLED=OFF', () => {
  test('closes exactly the routes that declare its feature (403 feature_disabled); the rest stay open', async () => {
    const off = Object.fromEntries(Object.values(SWITCHES).map((name) => [name, 'OFF']));
    const gw = await gateway(off);
    const routes = gw.plugins.registry.routes.map((r) => r.route);
    const featured = routes.filter((r) => r.feature !== undefined && r.feature !== 'apiAccess');
    // At least the audit log's routes carry a feature, so this cannot pass on an empty set.
    expect(featured.filter((r) => r.feature === 'auditLogs').map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      'GET /audit-logs',
      'GET /audit-logs/:id',
    ]);
    const open: string[] = [];
    for (const route of featured) {
      const { status, code } = await call(gw, route, TEST_ADMIN_KEY);
      if (status !== 403 || code !== 'feature_disabled') open.push(`${route.method} ${route.path} [${route.feature}]: ${status} ${code}`);
    }
    expect(open).toEqual([]);
    // A route with no feature is not affected.
    const note = await gw.handle(
      new Request('http://gateway.local/v1/test-notes', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY },
        body: JSON.stringify({ title: 'still open' }),
      }),
    );
    expect(note.status).toBe(201);
  }, T);

  test('with every switch on (the default), the same routes are reachable', async () => {
    const gw = await gateway({});
    const featured = gw.plugins.registry.routes.map((r) => r.route).filter((r) => r.feature !== undefined && r.method === 'GET');
    expect(featured.length).toBeGreaterThanOrEqual(2);
    for (const route of featured) expect((await call(gw, route, TEST_ADMIN_KEY)).code).not.toBe('feature_disabled');
  }, T);
});
