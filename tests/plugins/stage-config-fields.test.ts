// A stage plugin's own config fields, end to end (issue #14, item 1): a stage plugin outside the built-in ones
// (tests/plugins/fixtures/stage-fields-project) declares `acme_label` (inherited) and `acme_note` (not inherited)
// through `api.configFields`. Without any list in the core naming them, the fields are
//   1. accepted in a header config while the plugin is loaded, with the schema it declared,
//   2. refused as unknown properties (invalid_config) when it is disabled, as the built-in `cache` is without the
//      response cache: the config schema is what loaded,
//   3. read by its stage at request time, from the target being called: a target takes `acme_label` from its
//      parent unless it sets its own, and never `acme_note`,
//   4. held to the rules it declares beyond the schema: `acme_window`'s own check (invalid_config at its path) and
//      its refusal on targets (root only), as the hook lists are,
//   5. a secret (`acme_token`) sealed and masked in a saved config, put back for the stage when the config is used,
//      and not kept when the field it declares as its destination (`acme_endpoint`) changes.
// The contract these rely on is docs/plugins.md, "Config fields".

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { savedConfigs } from '@gateway/admin-configs';
import { Services } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { ROOT } from '../helpers/gateway-process.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { seen, tokens } from './fixtures/stage-fields-project/stage/index.ts';

const FIXTURE_ROOT = join(import.meta.dir, 'fixtures', 'stage-fields-project');
const PACKAGE = 'gateway-stage-fields-fixture';

let upstream: OpenAIMock;
const opened: Gateway[] = [];

async function gateway(env: Record<string, string> = {}): Promise<Gateway> {
  const gw = await startInProcessGateway(env, [ROOT, FIXTURE_ROOT]);
  opened.push(gw);
  return gw;
}

/** A chat completion with `config` as the header (a saved config's id when a string). */
async function chat(gw: Gateway, config: unknown): Promise<{ status: number; code?: string; message?: string }> {
  const res = await gw.handle(
    new Request('http://gateway.local/v1/chat/completions', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': TEST_ADMIN_KEY,
        'x-gateway-config': typeof config === 'string' ? config : JSON.stringify(config),
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
    }),
  );
  const body = (await res.json()) as { error?: { code: string; message: string } };
  return { status: res.status, code: body.error?.code, message: body.error?.message };
}

async function admin(gw: Gateway, method: string, path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> & { error?: { message: string } } }> {
  const res = await gw.handle(
    new Request(`http://gateway.local/v1${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY },
      body: JSON.stringify(body),
    }),
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
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
  test('4. its own rule and root-only refusal are invalid_config, by path; a valid window passes', async () => {
    const gw = await gateway();
    expect((await chat(gw, { ...target(), acme_window: { from: 1, to: 5 } })).status).toBe(200);
    const backwards = await chat(gw, { ...target(), acme_window: { from: 5, to: 1 } });
    expect(backwards).toMatchObject({ status: 400, code: 'invalid_config' });
    expect(backwards.message).toContain('acme_window.to: must not be before from');
    const onTarget = await chat(gw, {
      strategy: { mode: 'fallback' },
      acme_window: { from: 1, to: 5 },
      targets: [target(), { strategy: { mode: 'single' }, targets: [target({ acme_window: { from: 5, to: 1 } })] }],
    });
    expect(onTarget).toMatchObject({ status: 400, code: 'invalid_config' });
    expect(onTarget.message).toContain('targets[1].targets[0].acme_window: an acme window applies to the whole request; set it on the root config');
    // Refused there, so not checked there.
    expect(onTarget.message).not.toContain('must not be before from');
  });

  test('5. its secret is sealed and masked in a saved config, put back for the stage, and not kept when its destination changes', async () => {
    const gw = await gateway();
    const TOKEN = 'acme-stage-token-0123456789';
    const config = { ...target(), acme_endpoint: 'https://acme.invalid/a', acme_token: TOKEN };
    const created = await admin(gw, 'POST', '/configs', { name: 'Acme stage', config });
    expect(created.status).toBe(201);
    const shown = created.body.config as Record<string, unknown>;
    expect(shown).toMatchObject({ acme_endpoint: 'https://acme.invalid/a', acme_token: '********' });
    expect(JSON.stringify(created.body)).not.toContain(TOKEN);
    // Sealed at rest: no column of the saved config holds it.
    const rows = await gw.service(Services.database).select(savedConfigs);
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(TOKEN);
    // Used by id, the config carries the token again: the stage reads it from the target called.
    tokens.length = 0;
    expect((await chat(gw, String(created.body.id))).status).toBe(200);
    expect(tokens).toEqual([TOKEN]);
    // Sent back masked with another endpoint, the stored token is not kept; with the same one, it is.
    const moved = await admin(gw, 'PUT', `/configs/${created.body.id}`, { config: { ...shown, acme_endpoint: 'https://elsewhere.invalid/' } });
    expect(moved.status).toBe(400);
    expect(moved.body.error?.message).toContain('acme_token: acme_endpoint changed, so the stored secret is not kept');
    expect((await admin(gw, 'PUT', `/configs/${created.body.id}`, { config: { ...shown, acme_note: 'kept' } })).status).toBe(200);
  });
});
