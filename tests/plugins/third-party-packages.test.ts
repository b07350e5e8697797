// The installable SDK, proven the way a third party uses it: @gateway/sdk and the example packages of
// examples/third-party (a provider with its own credential fields, a guardrail check, a strategy mode, an
// administration route) are packed into tarballs, installed with `bun install` into a project outside the
// repository, type-checked there against the packed SDK, and loaded by a gateway beside the repository's plugins.
// The project has its own copy of the SDK, so the errors its plugins throw are of another copy's class than the
// host's: they must keep their status and code. Nothing is fetched from a registry: the tarballs are local and the
// SDK's peers (typebox, drizzle-orm) are the versions the repository's own install already put in bun's cache.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { discoverPlugins } from '@gateway/loader';
import { GatewayError } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { ROOT } from '../helpers/gateway-process.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';

const EXAMPLES = join(ROOT, 'examples', 'third-party');
const PACKAGES = ['parrot-gateway-provider', 'wordlist-gateway-guardrail', 'sticky-gateway-strategy', 'inventory-gateway-admin'];

let base: string;
let project: string;
let gw: Gateway;
let upstream: ReturnType<typeof Bun.serve>;
/** What Parrot's server received. */
const received: { path: string; authorization: string | null; account: string | null; body: Record<string, unknown> }[] = [];

function run(cmd: string[], cwd: string): string {
  const out = Bun.spawnSync(cmd, { cwd, env: { ...process.env, NO_COLOR: '1' }, stdout: 'pipe', stderr: 'pipe' });
  if (out.exitCode !== 0) throw new Error(`${cmd.join(' ')} failed (${out.exitCode}):\n${out.stdout.toString()}\n${out.stderr.toString()}`);
  return out.stdout.toString();
}

/** `bun pm pack` of a package folder into `dest`; the tarball's path. */
function pack(dir: string, dest: string): string {
  run([process.execPath, 'pm', 'pack', '--destination', dest, '--quiet'], dir);
  const name = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; version: string };
  const file = join(dest, `${name.name.replace('@', '').replace('/', '-')}-${name.version}.tgz`);
  if (!existsSync(file)) throw new Error(`no tarball ${file} after packing ${dir}`);
  return file;
}

const versionIn = (dir: string) => (JSON.parse(readFileSync(join(ROOT, 'node_modules', dir, 'package.json'), 'utf8')) as { version: string }).version;

function call(path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown; key?: string } = {}): Promise<Response> {
  return gw.handle(
    new Request(`http://gateway.local/v1${path}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': init.key ?? TEST_ADMIN_KEY, ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    }),
  );
}

const parrotTarget = (account: string, extra: Record<string, unknown> = {}) => ({
  provider: 'parrot',
  parrot_account: account,
  parrot_token: 'pt-secret-0001',
  custom_host: upstream.url.origin,
  ...extra,
});

function chat(config: unknown, content = 'Say hello', headers: Record<string, string> = {}): Promise<Response> {
  return call('/chat/completions', {
    headers: { 'x-gateway-config': JSON.stringify(config), ...headers },
    body: { model: 'parrot-large', messages: [{ role: 'user', content }] },
  });
}

async function errorOf(res: Response): Promise<{ status: number; code: string; message: string; param: string | null }> {
  const json = (await res.json()) as { error: { code: string; message: string; param: string | null } };
  return { status: res.status, ...json.error };
}

beforeAll(async () => {
  // Outside the repository, as a third party's project would be.
  base = realpathSync(mkdtempSync(join(tmpdir(), 'gw-third-party-packages-')));
  expect(relative(ROOT, base).startsWith('..')).toBe(true);
  const tarballs = join(base, 'tarballs');
  mkdirSync(tarballs);
  const sdk = pack(join(ROOT, 'core', 'sdk'), tarballs);
  const dirs = readdirSync(EXAMPLES, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(EXAMPLES, e.name));
  const examples = Object.fromEntries(dirs.map((dir) => [(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string }).name, `file:${pack(dir, tarballs)}`]));

  project = join(base, 'project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify(
      {
        name: 'my-gateway-plugins',
        private: true,
        type: 'module',
        dependencies: {
          '@gateway/sdk': `file:${sdk}`,
          ...examples,
          // The SDK's peers, at the versions the repository installed (so bun finds them in its cache).
          '@sinclair/typebox': versionIn('@sinclair/typebox'),
          'drizzle-orm': versionIn('drizzle-orm'),
        },
        devDependencies: { '@types/bun': versionIn('@types/bun') },
      },
      null,
      2,
    ),
  );
  run([process.execPath, 'install', '--prefer-offline', '--no-summary'], project);

  upstream = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const body = (await request.json()) as Record<string, unknown>;
      const account = request.headers.get('x-parrot-account');
      received.push({ path: new URL(request.url).pathname, authorization: request.headers.get('authorization'), account, body });
      if (request.headers.get('authorization') !== 'Parrot pt-secret-0001') return Response.json({ problem: 'unknown token' }, { status: 401 });
      if (account === 'broken') return Response.json({ problem: 'the parrot is resting' }, { status: 503 });
      return Response.json({ reply: `${account} says: ${String(body.prompt)}`, words_in: 3, words_out: 5 });
    },
  });
  gw = await startInProcessGateway({}, [ROOT, project]);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  upstream?.stop(true);
  if (base) rmSync(base, { recursive: true, force: true });
});

describe('packed and installed outside the repository', () => {
  test('the SDK and the four examples are installed from their tarballs: real folders, sources without tests', () => {
    for (const name of ['@gateway/sdk', ...PACKAGES]) {
      const dir = join(project, 'node_modules', name);
      expect(lstatSync(dir).isSymbolicLink()).toBe(false); // a copy from the tarball, not a link into the repository
      expect(relative(ROOT, realpathSync(dir)).startsWith('..')).toBe(true);
    }
    const shipped = readdirSync(join(project, 'node_modules', '@gateway', 'sdk', 'src'));
    expect(shipped).toContain('index.ts');
    expect(shipped).toContain('testing.ts');
    expect(shipped.filter((f) => f.endsWith('.test.ts'))).toEqual([]);
    expect(discoverPlugins(project).map((p) => p.name).sort()).toEqual([...PACKAGES].sort());
  });

  test('the examples type-check against the packed SDK, with the testing entry', () => {
    writeFileSync(
      join(project, 'check.ts'),
      [
        ...PACKAGES.map((name, i) => `import plugin${i} from '${name}';`),
        `import { buildGatewayRequest, testPluginApi } from '@gateway/sdk/testing';`,
        `import type { GatewayPlugin } from '@gateway/sdk';`,
        `export const plugins: GatewayPlugin[] = [${PACKAGES.map((_, i) => `plugin${i}`).join(', ')}];`,
        `export const request = buildGatewayRequest({ metadata: { user: 'ada' } });`,
        `export const harness = testPluginApi({ name: 'check' });`,
        // A config with the provider's fields and the strategy's field is a GatewayConfig (module augmentation).
        `export const config: import('@gateway/sdk').GatewayConfig = { strategy: { mode: 'sticky', sticky_by: 'user' }, targets: [{ provider: 'parrot', parrot_account: 'a', parrot_token: 'pt-secret-0001' }] };`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ESNext', module: 'ESNext', moduleResolution: 'bundler', types: ['bun'], strict: true, skipLibCheck: true, noEmit: true, allowImportingTsExtensions: true, verbatimModuleSyntax: true },
        files: ['check.ts'],
      }),
    );
    run([join(ROOT, 'node_modules', '.bin', 'tsc'), '-p', project], project);
  }, 60_000);

  test('the gateway loads the four packages beside its own', () => {
    const loaded = gw.plugins.loaded.map((p) => p.name);
    for (const name of PACKAGES) expect(loaded).toContain(name);
    expect(gw.plugins.refused.filter((r) => PACKAGES.includes(r.name))).toEqual([]);
    // Their plugins run the installed copy of the SDK, not the host's.
    expect(realpathSync(join(project, 'node_modules', '@gateway', 'sdk'))).not.toBe(realpathSync(join(ROOT, 'core', 'sdk')));
  });
});

describe('errors of another copy of the SDK', () => {
  test('keep their status, code and exposure, and instanceof agrees both ways', async () => {
    const other = (await import(join(project, 'node_modules', '@gateway', 'sdk', 'src', 'index.ts'))) as typeof import('@gateway/sdk');
    expect(other.GatewayError).not.toBe(GatewayError); // really another copy
    const theirs = other.Errors.forbidden('not yours');
    expect(GatewayError.is(theirs)).toBe(true);
    expect(theirs instanceof GatewayError).toBe(true);
    expect(GatewayError.from(theirs, { plugin: 'x' })).toMatchObject({ status: 403, code: 'forbidden', expose: true, message: 'not yours', plugin: 'x' });
    // The other way round: a plugin looking at the host's error with its own class.
    expect(new GatewayError({ code: 'teapot', status: 418, message: 'short and stout' }) instanceof other.GatewayError).toBe(true);
    expect(GatewayError.is(new Error('plain'))).toBe(false);
    expect(GatewayError.from(new Error('plain'))).toMatchObject({ status: 500, code: 'internal', expose: false });
  });
});

describe('the provider with its own credential fields (parrot-gateway-provider)', () => {
  test('its fields are accepted in a header config, and the account and token reach its server in its own format', async () => {
    received.length = 0;
    const res = await chat(parrotTarget('team-a'));
    expect(res.status).toBe(200);
    const json = (await res.json()) as Record<string, unknown>;
    expect(json).toMatchObject({
      object: 'chat.completion',
      model: 'parrot-large',
      choices: [{ index: 0, message: { role: 'assistant', content: 'team-a says: user: Say hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
    });
    expect(res.headers.get('x-gateway-provider')).toBe('parrot');
    expect(received).toEqual([{ path: '/v1/reply', authorization: 'Parrot pt-secret-0001', account: 'team-a', body: { model: 'parrot-large', prompt: 'user: Say hello' } }]);
  }, 30_000);

  test('the closed schema knows its fields: a malformed account and a field nobody declares are invalid_config', async () => {
    received.length = 0;
    const bad = await errorOf(await chat(parrotTarget('Team A')));
    expect(bad).toMatchObject({ status: 400, code: 'invalid_config' });
    expect(bad.message).toContain('parrot_account');
    const unknown = await errorOf(await chat(parrotTarget('team-a', { parrot_colour: 'green' })));
    expect(unknown).toMatchObject({ status: 400, code: 'invalid_config' });
    expect(unknown.message).toContain('parrot_colour');
    expect(received).toEqual([]);
  }, 30_000);

  test('an error its adapter throws (SDK copy of the project) keeps its 400 and param; its error format is read', async () => {
    received.length = 0;
    const headers = { 'x-gateway-provider': 'parrot', 'x-gateway-custom-host': upstream.url.origin, authorization: 'Bearer pt-secret-0001' };
    const res = await call('/chat/completions', { headers, body: { model: 'parrot-large', messages: [{ role: 'user', content: 'hi' }] } });
    expect(await errorOf(res)).toMatchObject({ status: 400, code: 'invalid_request', param: 'parrot_account' });
    expect(received).toEqual([]);

    const resting = await errorOf(await chat(parrotTarget('broken')));
    expect(resting).toMatchObject({ status: 503, message: 'the parrot is resting' });
  }, 30_000);

  test('an integration holds its fields with the token masked; a request cannot move the token to another account', async () => {
    const workspaces = (await (await call('/workspaces')).json()) as { data: { id: string; slug: string }[] };
    const created = await call('/integrations', {
      body: {
        name: 'Parrot',
        slug: 'parrot-prod',
        ai_provider_id: 'parrot',
        configurations: { custom_host: upstream.url.origin, parrot_account: 'team-a', parrot_token: 'pt-secret-0001' },
        workspaces: [{ id: workspaces.data.find((w) => w.slug === 'default')?.id, enabled: true }],
      },
    });
    const integration = (await created.json()) as { id: string; configurations: Record<string, unknown> };
    expect(created.status).toBe(201);
    expect(integration.configurations).toEqual({ custom_host: upstream.url.origin, parrot_account: 'team-a', parrot_token: '****' });

    // The account is a destination: the stored one wins over the request's, so the token goes where it was stored.
    received.length = 0;
    expect((await chat({ provider: '@parrot-prod', parrot_account: 'attacker' })).status).toBe(200);
    expect(received.map((r) => [r.account, r.authorization])).toEqual([['team-a', 'Parrot pt-secret-0001']]);
    // Moving the stored account with the masked token sent back does not keep the token.
    const moved = await errorOf(await call(`/integrations/${integration.id}`, { method: 'PUT', body: { configurations: { ...integration.configurations, parrot_account: 'attacker' } } }));
    expect(moved).toMatchObject({ status: 400, param: 'configurations.parrot_token' });
  }, 30_000);
});

describe('the guardrail check (wordlist-gateway-guardrail)', () => {
  const guarded = (parameters: unknown) => ({ ...parrotTarget('team-a'), input_guardrails: [{ 'wordlist.blockedWords': parameters, deny: true }] });

  test('denies a request holding a blocked word before the provider is called, and lets others through', async () => {
    received.length = 0;
    const denied = await chat(guarded({ words: ['project-x'] }), 'Tell me about Project-X');
    expect(denied.status).toBe(400);
    expect(((await denied.json()) as { error: { code: string } }).error.code).toBe('guardrail_denied');
    expect(received).toEqual([]);

    const allowed = await chat(guarded({ words: ['project-x'] }), 'Tell me about the weather');
    expect(allowed.status).toBe(200);
    expect(received).toHaveLength(1);
  }, 30_000);

  test('its parameters are validated with the config', async () => {
    const bad = await errorOf(await chat(guarded({ words: [] })));
    expect(bad).toMatchObject({ status: 400, code: 'invalid_config' });
    expect(bad.message).toContain('words: must be a non-empty list');
  }, 30_000);
});

describe('the strategy mode (sticky-gateway-strategy)', () => {
  const stickyConfig = () => ({ strategy: { mode: 'sticky', sticky_by: 'user' }, targets: [parrotTarget('alpha'), parrotTarget('beta')] });

  test('routes every request of one user to the same target, and spreads users over the targets', async () => {
    const seen = new Map<string, Set<string>>();
    for (const user of ['ada', 'grace', 'alan', 'edsger', 'barbara', 'donald']) {
      for (let i = 0; i < 2; i++) {
        const res = await chat(stickyConfig(), 'hi', { 'x-gateway-metadata': JSON.stringify({ user }) });
        expect(res.status).toBe(200);
        const index = res.headers.get('x-gateway-last-used-option-index') ?? '';
        seen.set(user, (seen.get(user) ?? new Set()).add(index));
      }
    }
    for (const indices of seen.values()) expect(indices.size).toBe(1);
    expect(new Set([...seen.values()].flatMap((s) => [...s]))).toEqual(new Set(['config.targets[0]', 'config.targets[1]']));
  }, 30_000);

  test('its field is declared: required in its mode, refused in others; the mode is one of the registered ones', async () => {
    const missing = await errorOf(await chat({ ...stickyConfig(), strategy: { mode: 'sticky' } }));
    expect(missing).toMatchObject({ status: 400, code: 'invalid_config' });
    expect(missing.message).toContain('required when mode is sticky');
    const unknown = await errorOf(await chat({ ...stickyConfig(), strategy: { mode: 'stickier' } }));
    expect(unknown.message).toContain('sticky');
  }, 30_000);
});

describe('the administration route (inventory-gateway-admin)', () => {
  async function key(scopes: string[]): Promise<string> {
    const res = await call('/api-keys', { body: { name: `scopes ${scopes.join(' ')}`, type: 'workspace-service', workspace_id: 'default', scopes } });
    expect(res.status).toBe(201);
    return ((await res.json()) as { key: string }).key;
  }

  test('answers JSON to a key with its scope, which keys may now be given', async () => {
    const res = await call('/inventory', { key: await key(['inventory.read']) });
    expect(res.status).toBe(200);
    const json = (await res.json()) as { object: string; providers: string[]; guardrail_checks: string[] };
    expect(json.object).toBe('inventory');
    expect(json.providers).toContain('parrot');
    expect(json.providers).toContain('openai');
    expect(json.guardrail_checks).toContain('wordlist.blockedWords');

    const parrot = await call('/inventory/providers/parrot');
    expect(await parrot.json()).toEqual({ object: 'provider', id: 'parrot', endpoints: ['chatComplete'], fields: ['parrot_account', 'parrot_token'], secret_fields: ['parrot_token'] });
  }, 30_000);

  test('refuses a key without the scope (403), and its own not-found error keeps its 404', async () => {
    const refused = await errorOf(await call('/inventory', { key: await key(['completions.write']) }));
    expect(refused).toMatchObject({ status: 403, code: 'forbidden' });
    const missing = await errorOf(await call('/inventory/providers/nobody'));
    expect(missing).toMatchObject({ status: 404, code: 'not_found', message: 'No provider "nobody" is loaded' });
  }, 30_000);
});
