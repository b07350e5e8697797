// A stage plugin's own config fields, end to end (issue #14, item 1): a stage plugin outside the built-in ones
// (tests/plugins/fixtures/stage-fields-project) declares `acme_label` (inherited) and `acme_note` (not inherited)
// through `api.configFields`. Without any list in the core naming them, the fields are
//   1. accepted in a header config while the plugin is loaded, with the schema it declared,
//   2. refused as unknown properties (invalid_config) when it is disabled, as the built-in `cache` is without the
//      response cache: the config schema is what loaded,
//   3. read by its stage at request time, from the target being called: a target takes `acme_label` from its
//      parent unless it sets its own, and never `acme_note`.
// The contract these rely on is docs/plugins.md, "Config fields".

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import type { Gateway } from '@gateway/server';
import { ROOT } from '../helpers/gateway-process.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { seen } from './fixtures/stage-fields-project/stage/index.ts';

const FIXTURE_ROOT = join(import.meta.dir, 'fixtures', 'stage-fields-project');
const PACKAGE = 'gateway-stage-fields-fixture';

let upstream: OpenAIMock;
const opened: Gateway[] = [];

async function gateway(env: Record<string, string> = {}): Promise<Gateway> {
  const gw = await startInProcessGateway(env, [ROOT, FIXTURE_ROOT]);
  opened.push(gw);
  return gw;
}

async function chat(gw: Gateway, config: unknown): Promise<{ status: number; code?: string; message?: string }> {
  const res = await gw.handle(
    new Request('http://gateway.local/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': JSON.stringify(config) },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
    }),
  );
  const body = (await res.json()) as { error?: { code: string; message: string } };
  return { status: res.status, code: body.error?.code, message: body.error?.message };
}

const target = (extra: Record<string, unknown> = {}) => ({ provider: 'openai', api_key: 'sk-test', custom_host: upstream.url, ...extra });

beforeAll(async () => {
  upstream = await startOpenAIMock({ apiKey: null });
});

afterAll(async () => {
  for (const gw of opened) await gw.close();
  await upstream?.stop();
});

describe("a stage plugin's own config fields", () => {
  test('1. accepted while the plugin is loaded, with the schema it declared', async () => {
    const gw = await gateway();
    expect((await chat(gw, { ...target(), acme_label: 'blue', acme_note: 'n' })).status).toBe(200);
    const bad = await chat(gw, { ...target(), acme_label: 'Not a label' });
    expect(bad).toMatchObject({ status: 400, code: 'invalid_config' });
    expect(bad.message).toContain("acme_label: expected string to match '^[a-z]+$'");
  });

  test('2. refused as unknown when the plugin is disabled; so is cache without the response cache', async () => {
    const gw = await gateway({ GATEWAY_DISABLED_PLUGINS: `${PACKAGE},@gateway/plugin-cache` });
    const refused = await chat(gw, { ...target(), acme_label: 'blue' });
    expect(refused).toMatchObject({ status: 400, code: 'invalid_config' });
    expect(refused.message).toContain('acme_label: unknown property');
    const cached = await chat(gw, { ...target(), cache: { mode: 'simple' } });
    expect(cached).toMatchObject({ status: 400, code: 'invalid_config' });
    expect(cached.message).toContain('cache: unknown property');
    // The rest of the config is as valid as ever.
    expect((await chat(gw, target())).status).toBe(200);
  });

  test('3. the stage reads them from the target called: the label inherited unless set, the note never', async () => {
    const gw = await gateway();
    seen.length = 0;
    upstream.enqueue({ kind: 'error', status: 503 });
    const config = {
      strategy: { mode: 'fallback' },
      acme_label: 'blue',
      acme_note: 'root only',
      targets: [target(), target({ acme_label: 'green', acme_note: 'own' })],
    };
    expect((await chat(gw, config)).status).toBe(200);
    expect(seen).toEqual([
      { index: 'config.targets[0]', label: 'blue', note: undefined },
      { index: 'config.targets[1]', label: 'green', note: 'own' },
    ]);
  });
});
