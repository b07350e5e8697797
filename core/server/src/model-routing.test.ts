/**
 * Calls that name only a model (docs/clients.md): the order of routes (`@slug/model`, an alias, the default config,
 * headers first of all), and the gateway key in `Authorization` never becoming a provider key.
 */
import { describe, expect, test } from 'bun:test';
import type { Caller, GatewayRequest, ModelRoute, ModelRouting, ProviderAdapter } from '@gateway/sdk';
import { gatewaySecret } from './gateway-handler.ts';
import { headersNameRoute, makeProviderResolver, resolveConfig, routeByModel } from './resolve.ts';

const who: Caller = { apiKeyId: 'k', organisationId: 'o', workspaceId: 'w', scopes: ['*'], keyType: 'workspace-service', userId: null };
const alias: ModelRoute = Object.freeze({ provider: '@team', model: 'gpt-4o-mini' });
const routing: ModelRouting = {
  route: (model, caller) => (model === 'fast' && caller.workspaceId === 'w' ? alias : undefined),
  aliases: () => [],
};

describe('routing by model', () => {
  test('@slug/model names the stored provider (read from the model by the provider resolver); an alias its route', () => {
    expect(routeByModel('@team/gpt-4o', who, routing)?.config).toEqual({});
    const routed = routeByModel('fast', who, routing);
    expect(routed).toEqual({ config: { provider: '@team' }, model: 'gpt-4o-mini' });
    // One config object per alias route: nothing is built per request.
    expect(routeByModel('fast', who, routing)?.config).toBe(routed!.config);
    expect(routeByModel('fast', { ...who, workspaceId: 'other' }, routing)).toBeUndefined();
    expect(routeByModel('gpt-4o', who, undefined)).toBeUndefined();
  });

  test('headers name the route before any model does; without any route, a 400 naming every way', () => {
    expect(headersNameRoute({ 'x-gateway-provider': 'openai' })).toBe(true);
    expect(headersNameRoute({ 'x-gateway-config': 'support-bot' })).toBe(true);
    expect(headersNameRoute({ 'x-gateway-virtual-key': 'vk' })).toBe(true);
    expect(headersNameRoute({ 'x-gateway-config': '  ', authorization: 'Bearer gw' })).toBe(false);
    expect(() => resolveConfig({ authorization: 'Bearer gw' }, who)).toThrow(/@<provider>\/<model>.*default config/);
  });

  test('a routed config ignores x-gateway-custom-host (stored credentials go only where they say); settings headers apply', () => {
    const config = resolveConfig({ 'x-gateway-custom-host': 'https://elsewhere.invalid', 'x-gateway-request-timeout': '5000' }, who, routeByModel('fast', who, routing));
    expect(config).toEqual({ provider: '@team', request_timeout: 5000 });
  });
});

describe('the gateway key in Authorization', () => {
  test('taken only without x-gateway-api-key', () => {
    expect(gatewaySecret('gw-header', 'Bearer sk-provider')).toBe('gw-header');
    expect(gatewaySecret(undefined, 'Bearer gw-bearer')).toBe('gw-bearer');
    expect(gatewaySecret('', 'bearer gw-bearer')).toBe('gw-bearer');
    expect(gatewaySecret(undefined, undefined)).toBeUndefined();
  });

  test('is never a provider key: not in a header-built config, not added to a resolved target', async () => {
    expect(resolveConfig({ 'x-gateway-provider': 'acme', authorization: 'Bearer gw-key' }, who)).toEqual({ provider: 'acme' });
    expect(resolveConfig({ 'x-gateway-provider': 'acme', authorization: 'Bearer sk-p', 'x-gateway-api-key': 'gw' }, who)).toEqual({ provider: 'acme', api_key: 'sk-p' });

    const acme: ProviderAdapter = { id: 'acme', baseUrl: () => 'https://acme.invalid', authorize: (call) => call, endpoints: {} };
    const resolve = makeProviderResolver(new Map([['acme', acme]]), {});
    const req = (headers: Record<string, string>) => ({ caller: who, headers: new Headers(headers), body: { model: 'm' } }) as unknown as GatewayRequest;
    expect((await resolve({ provider: 'acme' }, req({ authorization: 'Bearer gw-key' }))).target.api_key).toBeUndefined();
    expect((await resolve({ provider: 'acme' }, req({ authorization: 'Bearer sk-p', 'x-gateway-api-key': 'gw' }))).target.api_key).toBe('sk-p');
  });
});
