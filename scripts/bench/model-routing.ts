/**
 * Routing by model (docs/clients.md), on the hot path: what resolving a call that names only a model costs (an alias,
 * `@slug/model`, the workspace's default config) against one that names its provider by header, measured through
 * the server's own functions (routeByModel, resolveConfig) and budgeted; and the gateway key read from
 * `Authorization` against `x-gateway-api-key` (a key-cache hit either way). Whole requests through the in-process
 * gateway in front of the local OpenAI mock are printed for scale (their differences are within the HTTP noise).
 */
import { addKey, caller, chat, defaultWorkspaceId, organisationId } from '@gateway/admin-configs/testing';
import { type Caller, RoutingServices, Services } from '@gateway/sdk';
import { authenticate, gatewaySecret } from '../../core/server/src/gateway-handler.ts';
import { resolveConfig, routeByModel } from '../../core/server/src/resolve.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../../tests/helpers/in-process.ts';
import { startOpenAIMock } from '../../tests/mocks/openai-server.ts';
import { best, budget, check, figure } from './measure.ts';

/** What routing by model may add over naming the provider by header, per request (µs). */
const ADDED_US = 2;

const mock = await startOpenAIMock({ apiKey: null });
const gw = await startInProcessGateway({ GATEWAY_ENCRYPTION_KEY: 'model-routing-bench-key' });
try {
  const database = gw.service(Services.database);
  const org = await organisationId(database);
  const ws = await defaultWorkspaceId(database, org);
  const key = await addKey(database, { organisationId: org, workspaceId: ws });
  const admin = caller((r) => gw.handle(r), TEST_ADMIN_KEY);
  const slug = 'bench-openai';
  check(
    (await admin('POST', '/integrations', { name: 'Bench', slug, ai_provider_id: 'openai', key: 'sk-bench', configurations: { custom_host: mock.url }, workspaces: [{ id: 'default' }] })).status === 201,
    'the integration is stored',
  );
  check((await admin('POST', '/model-aliases', { alias: 'fast', provider: `@${slug}`, model: 'gpt-4o-mini' })).status === 201, 'the alias is stored');
  check((await admin('POST', '/configs', { name: 'Default', is_default: true, config: { provider: `@${slug}` } })).status === 201, 'the default config is stored');

  const routing = gw.service(RoutingServices.modelRouting);
  const who: Caller = { apiKeyId: 'bench', organisationId: org, workspaceId: ws, scopes: ['*'], keyType: 'workspace-service', userId: null };
  const byHeader = { 'x-gateway-api-key': key, 'x-gateway-provider': 'openai', authorization: 'Bearer sk-bench' };
  const bare = { authorization: `Bearer ${key}` };
  check(resolveConfig(bare, who, routeByModel('fast', who, routing)).provider === `@${slug}`, 'an alias routes to its provider');
  check(routeByModel('gpt-4o-mini', who, routing) !== undefined, 'the default config applies');

  const t = await best(5, 50_000, {
    header: () => resolveConfig(byHeader, who),
    alias: () => resolveConfig(bare, who, routeByModel('fast', who, routing)),
    slug: () => resolveConfig(bare, who, routeByModel(`@${slug}/gpt-4o-mini`, who, routing)),
    default: () => resolveConfig(bare, who, routeByModel('gpt-4o-mini', who, routing)),
  });
  for (const [name, us] of Object.entries(t)) figure(`config of a call: ${name}`, us as number);
  budget('config of a call: what an alias adds over x-gateway-provider', t.alias - t.header, ADDED_US);
  budget('config of a call: what the default config adds over x-gateway-provider', t.default - t.header, ADDED_US);

  const authenticator = gw.service(Services.apiKeyVerifier);
  await authenticator.verify(key); // cached from here on
  const a = await best(5, 50_000, {
    header: () => authenticate(gatewaySecret(key, undefined), authenticator),
    bearer: () => authenticate(gatewaySecret(undefined, `Bearer ${key}`), authenticator),
  });
  figure('gateway key from x-gateway-api-key (cache hit)', a.header);
  figure('gateway key from Authorization (cache hit)', a.bearer);
  budget('gateway key: what Authorization adds over x-gateway-api-key', a.bearer - a.header, 1);

  const handle = (r: Request) => gw.handle(r);
  const calls = {
    header: () => chat(handle, key, 'hi', { ...byHeader, 'x-gateway-custom-host': mock.url }),
    alias: () => caller(handle, '')('POST', '/chat/completions', { model: 'fast', messages: [{ role: 'user', content: 'hi' }] }, { ...bare, 'x-gateway-api-key': '' }),
  };
  for (const call of Object.values(calls)) check((await call()).status === 200, 'a whole request answers 200');
  const whole = await best(3, 200, calls);
  for (const [name, us] of Object.entries(whole)) figure(`whole request through the in-process gateway and the local mock: ${name}`, us as number);
} finally {
  await gw.close();
  await mock.stop();
}
