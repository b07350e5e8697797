/**
 * Saved configs: what resolving `x-gateway-config: <saved id>` costs against the same config sent as JSON (a
 * parsed-config cache hit), measured through the real seam (parseConfigHeader, as the server calls it) and
 * budgeted; whole requests through the in-process gateway in front of the local OpenAI mock, by saved id, JSON
 * header and provider headers, are printed (their difference is within the noise of the HTTP call to the mock).
 */
import { addKey, caller, chat, defaultWorkspaceId, organisationId } from '@gateway/admin-configs/testing';
import { parseConfigHeader } from '@gateway/config';
import { type Caller, Services } from '@gateway/sdk';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../../tests/helpers/in-process.ts';
import { startOpenAIMock } from '../../tests/mocks/openai-server.ts';
import { best, budget, check, figure } from './measure.ts';

/** What a saved-config lookup may add over a cached JSON header, per request (µs). */
const ADDED_US = 2;

const mock = await startOpenAIMock({ apiKey: null });
const gw = await startInProcessGateway({ GATEWAY_ENCRYPTION_KEY: 'saved-bench-encryption-key' });
try {
  const database = gw.service(Services.database);
  const org = await organisationId(database);
  const ws = await defaultWorkspaceId(database, org);
  const key = await addKey(database, { organisationId: org, workspaceId: ws });
  const config = { provider: 'openai', api_key: 'sk-bench', custom_host: mock.url, retry: { attempts: 1 } };
  const json = JSON.stringify(config);
  const created = await caller((r) => gw.handle(r), TEST_ADMIN_KEY)<{ id: string }>('POST', '/configs', { name: 'Bench', config });
  const savedId = created.body.id;
  const who: Caller = { apiKeyId: 'bench', organisationId: org, workspaceId: ws, scopes: ['*'], keyType: 'workspace-service', userId: null };

  check(Bun.deepEquals(parseConfigHeader(savedId, who), parseConfigHeader(json, who)), 'a saved id resolves to the config sent as JSON');
  const t = await best(5, 20_000, { saved: () => parseConfigHeader(savedId, who), json: () => parseConfigHeader(json, who) });
  figure('config resolution: saved id', t.saved);
  figure('config resolution: JSON header (cache hit)', t.json);
  budget('config resolution: what a saved id adds over a cached JSON header', t.saved - t.json, ADDED_US);

  const headers = {
    saved: { 'x-gateway-config': savedId },
    json: { 'x-gateway-config': json },
    headers: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url, authorization: 'Bearer sk-bench' },
  };
  for (const h of Object.values(headers)) check((await chat((r) => gw.handle(r), key, 'hi', h)).status === 200, 'a whole request answers 200');
  const whole = await best(3, 200, {
    saved: () => chat((r) => gw.handle(r), key, 'hi', headers.saved),
    json: () => chat((r) => gw.handle(r), key, 'hi', headers.json),
    headers: () => chat((r) => gw.handle(r), key, 'hi', headers.headers),
  });
  for (const [name, us] of Object.entries(whole)) figure(`whole request through the in-process gateway and the local mock: ${name}`, us as number);
} finally {
  await gw.close();
  await mock.stop();
}
