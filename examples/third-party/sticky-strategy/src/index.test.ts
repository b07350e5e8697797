// How a third party tests its plugin without a gateway: @gateway/sdk/testing builds the request the server would
// hand to the strategy, and runs the plugin's setup against a recording api.
import { describe, expect, test } from 'bun:test';
import type { GatewayConfig } from '@gateway/sdk';
import { buildGatewayRequest, testPluginApi } from '@gateway/sdk/testing';
import plugin, { hash, sticky } from './index.ts';

const node: GatewayConfig = { strategy: { mode: 'sticky', sticky_by: 'user' }, targets: [{ provider: 'a' }, { provider: 'b' }, { provider: 'c' }] };
const ctx = (user: string | undefined, open: number[] = []) => ({
  request: buildGatewayRequest({ metadata: user === undefined ? {} : { user } }),
  isAvailable: (index: string) => !open.some((i) => index === `[${i}]`),
});

describe('sticky', () => {
  test('setup registers the mode with its field', async () => {
    const harness = testPluginApi({ name: 'sticky-gateway-strategy' });
    await plugin.setup(harness.api);
    expect(harness.strategies.map((s) => s.mode)).toEqual(['sticky']);
    expect(Object.keys(harness.strategies[0]?.strategyFields?.fields ?? {})).toEqual(['sticky_by']);
  });

  test('one user, one first target, the others after it in a fixed order', () => {
    const first = hash('ada') % 3;
    expect(sticky.plan(node, ctx('ada'))).toEqual([first, (first + 1) % 3, (first + 2) % 3]);
    expect(sticky.plan(node, ctx('ada'))).toEqual(sticky.plan(node, ctx('ada')));
  });

  test('an open circuit is skipped; the API key is the value without the metadata key', () => {
    const first = hash('ada') % 3;
    expect(sticky.plan(node, ctx('ada', [first]))[0]).toBe((first + 1) % 3);
    expect(sticky.plan(node, ctx(undefined))[0]).toBe(hash('key-1') % 3);
  });

  test('its rule: sticky_by is required', () => {
    expect(sticky.strategyFields?.check?.({ mode: 'sticky' }, [])).toEqual([{ path: ['strategy', 'sticky_by'], reason: 'required when mode is sticky' }]);
    expect(sticky.strategyFields?.check?.({ mode: 'sticky', sticky_by: 'user' }, [])).toEqual([]);
  });
});
