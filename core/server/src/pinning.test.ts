/**
 * A stored target's credentials go only where it says (issue #13), for a third party's provider too (issue #14):
 * the destination fields its adapter declares are pinned without the administration side naming them.
 */
import { describe, expect, test } from 'bun:test';
import { defineConfigFields, type GatewayRequest, type ProviderAdapter, type TargetConfig } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { makeProviderResolver } from './resolve.ts';

const acme: ProviderAdapter = {
  id: 'acme',
  baseUrl: () => 'https://acme.invalid',
  authorize: (call) => call,
  endpoints: {},
  targetFields: defineConfigFields({ fields: { acme_tenant: Type.String(), acme_passphrase: Type.String() }, secret: ['acme_passphrase'], destination: ['acme_tenant'] }),
};
const stored: TargetConfig = { provider: 'acme', api_key: 'stored-key' };
Object.assign(stored, { acme_tenant: 'north', acme_passphrase: 'stored-passphrase' });

/** Only what the resolver reads of a request: its caller, headers and body. */
const request = { caller: { organisationId: 'o', workspaceId: 'w' }, headers: new Headers(), body: { model: 'm' } } as unknown as GatewayRequest;

describe('destination fields of a stored target', () => {
  test("a request cannot send a stored slug's credentials to another tenant of a third-party provider", async () => {
    const resolve = makeProviderResolver(new Map([['acme', acme]]), { providerSlug: () => ({ provider: 'acme', target: stored }) });
    const asked: TargetConfig = { provider: '@acme-prod' };
    Object.assign(asked, { acme_tenant: 'attacker' });
    const { target } = await resolve(asked, request);
    expect(target as Record<string, unknown>).toMatchObject({ provider: 'acme', acme_tenant: 'north', acme_passphrase: 'stored-passphrase' });
  });

  test('the same through a virtual key; a field the stored target lacks is removed, not taken from the request', async () => {
    const { acme_tenant: _, ...withoutTenant } = stored as Record<string, unknown>;
    const resolve = makeProviderResolver(new Map([['acme', acme]]), { virtualKey: () => withoutTenant as TargetConfig });
    const asked: TargetConfig = { virtual_key: 'vk' };
    Object.assign(asked, { acme_tenant: 'attacker' });
    const { target } = await resolve(asked, request);
    expect('acme_tenant' in target).toBe(false);
  });
});
