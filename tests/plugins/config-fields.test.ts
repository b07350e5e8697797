// A provider package's own credential fields, end to end (issue #14, item 1): a provider outside the built-in ones
// (tests/plugins/fixtures/fields-project) declares `acme_tenant` (a destination: in its host name) and
// `acme_passphrase` (a secret, sent in a header). Without any list in the core or the administration plugins naming
// them, the fields are
//   1. accepted in a header config (and a field nobody declares is still invalid_config),
//   2. accepted in an integration's configurations (and in a saved config),
//   3. masked in every answer (integration and saved config) and sealed at rest,
//   4. redacted from log lines,
//   5. a destination: a request through the stored target cannot change the tenant, and an update that changes it
//      must enter the passphrase again.
// The contract these rely on is docs/plugins.md, "A provider's own config fields".

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { createLogger, type Gateway, isSecretKey } from '@gateway/server';
import { ROOT } from '../helpers/gateway-process.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const FIXTURE_ROOT = join(import.meta.dir, 'fixtures', 'fields-project');
const PASSPHRASE = 'correct horse battery staple 42';
const MASKED_PASSPHRASE = '****e 42';

let gw: Gateway;
let upstream: OpenAIMock;
// Read before the gateway loads the provider: nothing but its declaration makes the field secret.
const secretBeforeLoad = isSecretKey('acme_passphrase');

interface Answer {
  status: number;
  body: Record<string, unknown> & { error?: { message: string; param: string | null; code: string } };
}

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const res = await gw.handle(
    new Request(`http://gateway.local/v1${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {} };
}

const admin = (method: string, path: string, body?: unknown) => call(method, path, {}, body);
const chat = (headers: Record<string, string>) =>
  call('POST', '/chat/completions', headers, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
const defaultWorkspace = async () => ((await admin('GET', '/workspaces')).body.data as { id: string; slug: string }[]).find((w) => w.slug === 'default')?.id;
const lastUpstreamHeaders = () => upstream.requests.at(-1)?.headers ?? {};

beforeAll(async () => {
  upstream = await startOpenAIMock({ apiKey: null });
  gw = await startInProcessGateway({}, [ROOT, FIXTURE_ROOT]);
});

afterAll(async () => {
  await gw?.close();
  await upstream?.stop();
});

describe("a third party's credential fields", () => {
  test('1. a header config takes them (a credential set in place of api_key); an undeclared field is invalid_config', async () => {
    const config = { provider: 'acme-fields', acme_tenant: 'tenant-a', acme_passphrase: PASSPHRASE, custom_host: upstream.url };
    const ok = await chat({ 'x-gateway-config': JSON.stringify(config) });
    expect(ok.status).toBe(200);
    expect(lastUpstreamHeaders()).toMatchObject({ 'x-acme-tenant': 'tenant-a', 'x-acme-passphrase': PASSPHRASE });

    const unknown = await chat({ 'x-gateway-config': JSON.stringify({ ...config, acme_region: 'eu' }) });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error?.code).toBe('invalid_config');
    expect(unknown.body.error?.message).toContain('acme_region: unknown property');
    // The declared schema applies: a tenant that cannot be a host label is refused by path.
    const bad = await chat({ 'x-gateway-config': JSON.stringify({ ...config, acme_tenant: 'Not A Host' }) });
    expect(bad.status).toBe(400);
    expect(bad.body.error?.message).toContain('acme_tenant');
  });

  test('2, 3 and 5. an integration holds them, masks the secret, pins the tenant and asks for the passphrase again when it moves', async () => {
    const created = await admin('POST', '/integrations', {
      name: 'Acme',
      slug: 'acme-prod',
      ai_provider_id: 'acme-fields',
      configurations: { custom_host: upstream.url, acme_tenant: 'tenant-a', acme_passphrase: PASSPHRASE },
      workspaces: [{ id: await defaultWorkspace(), enabled: true }],
    });
    expect(created.status).toBe(201);
    // 3: masked in the answer (the tenant, an identifier, in clear), never the value.
    expect(created.body.configurations).toEqual({ custom_host: upstream.url, acme_tenant: 'tenant-a', acme_passphrase: MASKED_PASSPHRASE });
    const read = await admin('GET', `/integrations/${created.body.id}`);
    expect(read.body.configurations).toEqual(created.body.configurations);
    expect(JSON.stringify((await admin('GET', '/integrations')).body)).not.toContain(PASSPHRASE);
    // An undeclared field is still refused by name.
    const unknown = await admin('POST', '/integrations', { name: 'Acme 2', ai_provider_id: 'acme-fields', configurations: { acme_region: 'eu' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error?.message).toContain('configurations.acme_region');

    // 5: a request through the stored target cannot move the passphrase to another tenant: the stored value wins.
    const moved = await chat({ 'x-gateway-config': JSON.stringify({ provider: '@acme-prod', acme_tenant: 'attacker' }) });
    expect(moved.status).toBe(200);
    expect(lastUpstreamHeaders()).toMatchObject({ 'x-acme-tenant': 'tenant-a', 'x-acme-passphrase': PASSPHRASE });
    // An update that changes the tenant must enter the passphrase again: the mask sent back does not keep it.
    const update = await admin('PUT', `/integrations/${created.body.id}`, { configurations: { ...read.body.configurations as object, acme_tenant: 'tenant-b' } });
    expect({ status: update.status, param: update.body.error?.param }).toEqual({ status: 400, param: 'configurations.acme_passphrase' });
    expect(update.body.error?.message).toContain('configurations.acme_tenant changed');
    // The mask sent back with the same tenant keeps it; entered again with a new tenant, it is taken.
    expect((await admin('PUT', `/integrations/${created.body.id}`, { configurations: read.body.configurations })).status).toBe(200);
    const entered = await admin('PUT', `/integrations/${created.body.id}`, {
      configurations: { ...read.body.configurations as object, acme_tenant: 'tenant-b', acme_passphrase: PASSPHRASE },
    });
    expect(entered.status).toBe(200);
  });

  test('2, 3 and 5 in a saved config: the passphrase is sealed and masked, and not kept when the tenant changes', async () => {
    const config = { provider: 'acme-fields', acme_tenant: 'tenant-a', acme_passphrase: PASSPHRASE, custom_host: upstream.url };
    const created = await admin('POST', '/configs', { name: 'Acme config', config });
    expect(created.status).toBe(201);
    const read = await admin('GET', `/configs/${created.body.id}`);
    const shown = read.body.config as Record<string, unknown>;
    expect(shown).toMatchObject({ acme_tenant: 'tenant-a', acme_passphrase: '********' });
    expect(JSON.stringify(read.body)).not.toContain(PASSPHRASE);
    // The saved config still calls with the passphrase.
    expect((await chat({ 'x-gateway-config': String(created.body.id) })).status).toBe(200);
    expect(lastUpstreamHeaders()).toMatchObject({ 'x-acme-passphrase': PASSPHRASE });

    const moved = await admin('PUT', `/configs/${created.body.id}`, { config: { ...shown, acme_tenant: 'tenant-b' } });
    expect(moved.status).toBe(400);
    expect(moved.body.error?.message).toContain('acme_passphrase: acme_tenant changed, so the stored secret is not kept');
    expect((await admin('PUT', `/configs/${created.body.id}`, { config: { ...shown, retry: { attempts: 1 } } })).status).toBe(200);
  });

  test('4. log lines never carry the passphrase, though its name says nothing', () => {
    expect(secretBeforeLoad).toBe(false);
    expect(isSecretKey('acme_passphrase')).toBe(true);
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    createLogger('info', sink).info({ target: { provider: 'acme-fields', acme_tenant: 'tenant-a', acme_passphrase: PASSPHRASE } }, 'attempt');
    expect(lines.join('')).toContain('tenant-a');
    expect(lines.join('')).not.toContain(PASSPHRASE);
  });
});
