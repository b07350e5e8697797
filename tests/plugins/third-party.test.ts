// The third-party plugin proof: a provider package that lives outside this repository, installed into a project
// with `bun install` like any dependency, is discovered from that project's package.json, loaded, and serves
// traffic. The package uses nothing from the gateway at run time (`import type` only), so it needs no install of
// its own. Also: a package speaking another plugin api is refused with a message that says so, and
// GATEWAY_DISABLED_PLUGINS leaves a package unloaded.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { discoverPlugins } from '@gateway/loader';
import type { Gateway } from '@gateway/server';
import { ROOT } from '../helpers/gateway-process.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';

const PACKAGE = 'acme-gateway-provider';
const NEXT_API_PACKAGE = 'acme-next-gateway-provider';

/** The plugin's whole source: a provider described by the API format it speaks (OpenAI chat) and its auth. */
const ACME_INDEX = `import type { GatewayPlugin, PluginApi, ProviderAdapter, ProviderCall, TargetConfig } from '@gateway/sdk';

const acme: ProviderAdapter = {
  id: 'acme',
  baseUrl: () => 'https://api.acme.example/v1',
  authorize: (call: ProviderCall, target: TargetConfig): ProviderCall =>
    target.api_key ? { ...call, headers: { ...call.headers, authorization: 'Bearer ' + target.api_key } } : call,
  // OpenAI's chat, unchanged both ways: no request or response mapping needed.
  endpoints: { chatComplete: { path: () => '/chat/completions' } },
};

const plugin: GatewayPlugin = {
  setup(api: PluginApi) {
    api.provider(acme);
  },
};
export default plugin;
`;

let base: string;
let projectRoot: string;
let upstream: ReturnType<typeof Bun.serve>;
const received: { path: string; headers: Record<string, string>; body: Record<string, unknown> }[] = [];
const gateways: Gateway[] = [];

function writePackage(dir: string, pkg: Record<string, unknown>, index: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  writeFileSync(join(dir, 'index.ts'), index);
}

async function gateway(env: Record<string, string> = {}): Promise<Gateway> {
  const gw = await startInProcessGateway(env, [ROOT, projectRoot]);
  gateways.push(gw);
  return gw;
}

function chat(gw: Gateway, extra: Record<string, string> = {}, body: Record<string, unknown> = {}): Promise<Response> {
  return gw.handle(
    new Request('http://gateway.local/v1/chat/completions', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': TEST_ADMIN_KEY,
        'x-gateway-provider': 'acme',
        'x-gateway-custom-host': `${upstream.url.origin}/v1`,
        authorization: 'Bearer sk-acme-test',
        ...extra,
      },
      body: JSON.stringify({ model: 'acme-large', messages: [{ role: 'user', content: 'Say hello' }], ...body }),
    }),
  );
}

beforeAll(() => {
  // Everything lives outside the repository, as a package from a registry or another checkout would.
  base = realpathSync(mkdtempSync(join(tmpdir(), 'gw-third-party-')));
  expect(relative(ROOT, base).startsWith('..')).toBe(true);

  const acmeDir = join(base, 'acme-gateway-provider');
  writePackage(acmeDir, { name: PACKAGE, version: '1.0.0', type: 'module', gateway: { api: 1, entry: './index.ts' } }, ACME_INDEX);

  const nextDir = join(base, 'acme-next-gateway-provider');
  writePackage(
    nextDir,
    { name: NEXT_API_PACKAGE, version: '3.0.0', type: 'module', gateway: { api: 2, entry: './index.ts' } },
    // Would register a provider if it were ever loaded.
    `export default { setup(api) { api.provider({ id: 'acme-next', baseUrl: () => 'https://x', authorize: (c) => c, endpoints: {} }); } };\n`,
  );

  projectRoot = join(base, 'project');
  mkdirSync(projectRoot);
  writeFileSync(
    join(projectRoot, 'package.json'),
    JSON.stringify({ name: 'my-gateway-deployment', private: true, dependencies: { [PACKAGE]: `file:${acmeDir}`, [NEXT_API_PACKAGE]: `file:${nextDir}` } }, null, 2),
  );
  // process.execPath is bun; file: dependencies install offline.
  const install = Bun.spawnSync([process.execPath, 'install'], { cwd: projectRoot, env: { ...process.env, NO_COLOR: '1' }, stdout: 'pipe', stderr: 'pipe' });
  if (install.exitCode !== 0) throw new Error(`bun install failed (${install.exitCode}):\n${install.stdout.toString()}\n${install.stderr.toString()}`);

  upstream = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url);
      const body = (await request.json()) as Record<string, unknown>;
      received.push({ path: url.pathname, headers: Object.fromEntries(request.headers), body });
      if (url.pathname !== '/v1/chat/completions') return Response.json({ error: { message: 'no such route', type: 'invalid_request_error' } }, { status: 404 });
      if (request.headers.get('authorization') !== 'Bearer sk-acme-test')
        return Response.json({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }, { status: 401 });
      return Response.json(
        {
          id: 'chatcmpl-acme-1',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from Acme!' }, finish_reason: 'stop', logprobs: null }],
          usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
        },
        { headers: { 'x-acme-request-id': 'req-1' } },
      );
    },
  });
});

afterAll(async () => {
  for (const gw of gateways) await gw.close();
  upstream?.stop(true);
  if (base) rmSync(base, { recursive: true, force: true });
});

describe('a third-party provider package', () => {
  test('bun install puts it in the project node_modules, and discovery finds it from the root dependencies', () => {
    expect(existsSync(join(projectRoot, 'node_modules', PACKAGE, 'package.json'))).toBe(true);
    expect(existsSync(join(projectRoot, 'node_modules', PACKAGE, 'node_modules'))).toBe(false); // nothing of its own installed
    const found = discoverPlugins(projectRoot);
    expect(found.map((p) => p.name).sort()).toEqual([PACKAGE, NEXT_API_PACKAGE]);
    expect(found.find((p) => p.name === PACKAGE)?.manifest).toEqual({ api: 1, entry: './index.ts' });
  });

  test('is loaded beside the built-in plugins and serves a chat completion from its provider', async () => {
    const gw = await gateway();
    expect(gw.plugins.loaded.map((p) => p.name)).toContain(PACKAGE);
    expect(gw.plugins.loaded.map((p) => p.name)).toContain('@gateway/provider-openai'); // the repository's own still load
    expect(gw.plugins.registry.owners.get('acme')).toBe(PACKAGE);

    received.length = 0;
    const res = await chat(gw);
    const json = (await res.json()) as Record<string, unknown>;
    expect(res.status).toBe(200);
    expect(json).toMatchObject({
      id: 'chatcmpl-acme-1',
      object: 'chat.completion',
      model: 'acme-large',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from Acme!' }, finish_reason: 'stop' }],
      usage: { total_tokens: 7 },
    });
    expect(res.headers.get('x-gateway-provider')).toBe('acme');
    expect(res.headers.get('x-gateway-last-used-option-index')).toBe('config');
    expect(res.headers.get('x-gateway-trace-id')).toBeTruthy();

    expect(received).toHaveLength(1);
    expect(received[0]?.path).toBe('/v1/chat/completions');
    expect(received[0]?.headers.authorization).toBe('Bearer sk-acme-test');
    expect(received[0]?.headers['x-gateway-api-key']).toBeUndefined(); // the gateway key never reaches the provider
    expect(received[0]?.body).toEqual({ model: 'acme-large', messages: [{ role: 'user', content: 'Say hello' }] });
  }, 30_000);

  test('its provider works inside a config too (fallback from a failing target to acme)', async () => {
    const gw = await gateway();
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'acme', api_key: 'wrong-key', custom_host: `${upstream.url.origin}/v1` },
        { provider: 'acme', api_key: 'sk-acme-test', custom_host: `${upstream.url.origin}/v1`, override_params: { model: 'acme-small' } },
      ],
    };
    const res = await gw.handle(
      new Request('http://gateway.local/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': JSON.stringify(config) },
        body: JSON.stringify({ model: 'acme-large', messages: [{ role: 'user', content: 'hi' }] }),
      }),
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { model: string }).model).toBe('acme-small');
    expect(res.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
  }, 30_000);

  test('an endpoint its description does not offer is a 400 from the gateway, not a call', async () => {
    const gw = await gateway();
    received.length = 0;
    const res = await gw.handle(
      new Request('http://gateway.local/v1/embeddings', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': TEST_ADMIN_KEY,
          'x-gateway-provider': 'acme',
          'x-gateway-custom-host': `${upstream.url.origin}/v1`,
          authorization: 'Bearer sk-acme-test',
        },
        body: JSON.stringify({ model: 'acme-embed', input: 'hi' }),
      }),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unsupported_endpoint');
    expect(received).toHaveLength(0);
  }, 30_000);

  test('a package that declares plugin api 2 is refused with a message naming the api mismatch, and registers nothing', async () => {
    const gw = await gateway();
    const refusal = gw.plugins.refused.find((r) => r.name === NEXT_API_PACKAGE);
    expect(refusal).toBeDefined();
    expect(refusal?.reason).toContain('api 2');
    expect(refusal?.reason).toContain('api 1');
    expect(gw.plugins.loaded.map((p) => p.name)).not.toContain(NEXT_API_PACKAGE);
    expect(gw.plugins.registry.providers.has('acme-next')).toBe(false);
    // refusing one plugin is not fatal: acme still serves
    expect((await chat(gw)).status).toBe(200);
  }, 30_000);

  test('GATEWAY_DISABLED_PLUGINS=acme-gateway-provider leaves it unloaded: acme is then an unknown provider (400)', async () => {
    const gw = await gateway({ GATEWAY_DISABLED_PLUGINS: PACKAGE });
    expect(gw.plugins.skipped).toContain(PACKAGE);
    expect(gw.plugins.loaded.map((p) => p.name)).not.toContain(PACKAGE);
    expect(gw.plugins.registry.providers.has('acme')).toBe(false);

    received.length = 0;
    const res = await chat(gw);
    expect(res.status).toBe(400);
    const json = (await res.json()) as { error: { message: string; code: string } };
    expect(json.error.code).toBe('unknown_provider');
    expect(json.error.message).toContain('acme');
    expect(received).toHaveLength(0);
  }, 30_000);
});
