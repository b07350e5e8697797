// The third-party guardrail proof: a guardrail package that lives outside this repository, installed into a project
// with `bun install` like any dependency, is discovered from that project's package.json, loaded beside the
// repository's own plugins, and its check is registered under `<plugin>.<check>` (`mycorp.noSecrets`). The package
// uses nothing from the gateway at run time (`import type` only), so it needs no install of its own.
// When the hook engine (plugins/hooks) is present, the check also runs from a config's input_guardrails: a failed
// verdict with `deny: true` is a 400 guardrail_denied and the provider is never called.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { discoverPlugins } from '@gateway/loader';
import type { Gateway } from '@gateway/server';
import { ROOT } from '../helpers/gateway-process.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { MOCK_API_KEY, type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { chatBody, checkContext, engineInstalled } from './support.ts';

const PACKAGE = 'mycorp-gateway-guardrails';
const CHECK_ID = 'mycorp.noSecrets';
/** The hook engine runs input_guardrails; until it exists, only discovery, loading and registration are shown. */
const ENGINE = engineInstalled();
const LEAK = 'my key is sk-abcdefghijklmnopqrstuvwxyz012345, keep it safe';

/** The plugin's whole source: one check, its own parameter validation, types only from the gateway. */
const MYCORP_INDEX = `import type { GatewayPlugin, GuardrailCheck, GuardrailCheckContext, JsonObject } from '@gateway/sdk';

const PATTERNS: Record<string, RegExp> = {
  openai: /sk-[A-Za-z0-9_-]{20,}/,
  aws: /AKIA[0-9A-Z]{16}/,
  github: /gh[pousr]_[A-Za-z0-9]{36}/,
};

function textOf(ctx: GuardrailCheckContext): string {
  const parts: string[] = [];
  const add = (content: unknown) => {
    if (typeof content === 'string') parts.push(content);
    else if (Array.isArray(content))
      for (const p of content) if (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string') parts.push((p as { text: string }).text);
  };
  if (ctx.phase === 'output') for (const c of (ctx.responseBody?.choices as { message?: { content?: unknown } }[] | undefined) ?? []) add(c.message?.content);
  else for (const m of (ctx.request.body?.messages as { content?: unknown }[] | undefined) ?? []) add(m.content);
  return parts.join('\\n');
}

const noSecrets: GuardrailCheck = {
  id: 'mycorp.noSecrets',
  validate(parameters: unknown): string[] {
    if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) return ['parameters: must be an object'];
    const kinds = (parameters as { kinds?: unknown }).kinds;
    if (kinds === undefined) return [];
    if (!Array.isArray(kinds) || kinds.length === 0) return ['kinds: must be a non-empty list'];
    return kinds.flatMap((k, i) => (typeof k === 'string' && k in PATTERNS ? [] : ['kinds/' + i + ': must be one of ' + Object.keys(PATTERNS).join(', ')]));
  },
  async run(ctx: GuardrailCheckContext, parameters: JsonObject) {
    const kinds = Array.isArray(parameters.kinds) ? (parameters.kinds as string[]) : Object.keys(PATTERNS);
    const text = textOf(ctx);
    const found = kinds.filter((kind) => PATTERNS[kind]?.test(text));
    return { verdict: found.length === 0, data: { found } };
  },
};

export default { setup: (api) => api.guardrail(noSecrets) } satisfies GatewayPlugin;
`;

let base: string;
let projectRoot: string;
let provider: OpenAIMock;
const gateways: Gateway[] = [];

async function gateway(env: Record<string, string> = {}): Promise<Gateway> {
  const gw = await startInProcessGateway(env, [ROOT, projectRoot]);
  gateways.push(gw);
  return gw;
}

beforeAll(async () => {
  // Everything lives outside the repository, as a package from a registry or another checkout would.
  base = realpathSync(mkdtempSync(join(tmpdir(), 'gw-third-party-guardrail-')));
  expect(relative(ROOT, base).startsWith('..')).toBe(true);

  const pkgDir = join(base, PACKAGE);
  mkdirSync(pkgDir, { recursive: true });
  writeFileSync(
    join(pkgDir, 'package.json'),
    JSON.stringify({ name: PACKAGE, version: '1.2.0', type: 'module', gateway: { api: 1, entry: './index.ts' } }, null, 2),
  );
  writeFileSync(join(pkgDir, 'index.ts'), MYCORP_INDEX);

  projectRoot = join(base, 'project');
  mkdirSync(projectRoot);
  writeFileSync(
    join(projectRoot, 'package.json'),
    JSON.stringify({ name: 'my-gateway-deployment', private: true, dependencies: { [PACKAGE]: `file:${pkgDir}` } }, null, 2),
  );
  // process.execPath is bun; file: dependencies install offline.
  const install = Bun.spawnSync([process.execPath, 'install'], { cwd: projectRoot, env: { ...process.env, NO_COLOR: '1' }, stdout: 'pipe', stderr: 'pipe' });
  if (install.exitCode !== 0) throw new Error(`bun install failed (${install.exitCode}):\n${install.stdout.toString()}\n${install.stderr.toString()}`);

  provider = await startOpenAIMock({ apiKey: MOCK_API_KEY });
});

afterAll(async () => {
  for (const gw of gateways) await gw.close();
  await provider?.stop();
  if (base) rmSync(base, { recursive: true, force: true });
});

describe('a third-party guardrail package', () => {
  test('bun install puts it in the project node_modules, and discovery finds it from the root dependencies', () => {
    expect(existsSync(join(projectRoot, 'node_modules', PACKAGE, 'package.json'))).toBe(true);
    expect(existsSync(join(projectRoot, 'node_modules', PACKAGE, 'node_modules'))).toBe(false); // nothing of its own installed
    const found = discoverPlugins(projectRoot);
    expect(found.map((p) => p.name)).toEqual([PACKAGE]);
    expect(found[0]?.manifest).toEqual({ api: 1, entry: './index.ts' });
  });

  test('is loaded beside the built-in plugins and its check is registered as mycorp.noSecrets', async () => {
    const gw = await gateway();
    expect(gw.plugins.loaded.map((p) => p.name)).toContain(PACKAGE);
    expect(gw.plugins.refused.map((r) => r.name)).not.toContain(PACKAGE);
    const check = gw.plugins.registry.guardrails.get(CHECK_ID);
    expect(check?.id).toBe(CHECK_ID);
    // The repository's own guardrail packages load too.
    for (const id of ['policy.check', 'security.scan', 'classifier.promptInjection', 'classifier.toxicity', 'contentSafety.analyze']) {
      expect(gw.plugins.registry.guardrails.has(id)).toBe(true);
    }

    // Called the way the engine calls it: validate at config time, run with a context and the parameters.
    expect(check?.validate?.({})).toEqual([]);
    expect(check?.validate?.({ kinds: ['openai', 'gcp'] })).toEqual(['kinds/1: must be one of openai, aws, github']);
    expect(await check?.run(checkContext({ body: chatBody(LEAK) }), {})).toEqual({ verdict: false, data: { found: ['openai'] } });
    expect(await check?.run(checkContext({ body: chatBody(LEAK) }), { kinds: ['aws'] })).toEqual({ verdict: true, data: { found: [] } });
    expect(await check?.run(checkContext({ body: chatBody('nothing to see') }), {})).toEqual({ verdict: true, data: { found: [] } });
  }, 30_000);

  test('GATEWAY_DISABLED_PLUGINS leaves it unloaded and its check unregistered', async () => {
    const gw = await gateway({ GATEWAY_DISABLED_PLUGINS: PACKAGE });
    expect(gw.plugins.skipped).toContain(PACKAGE);
    expect(gw.plugins.registry.guardrails.has(CHECK_ID)).toBe(false);
  }, 30_000);
});

describe.skipIf(!ENGINE)('a third-party guardrail through a config (needs plugins/hooks)', () => {
  const config = (deny: boolean) => ({
    provider: 'openai',
    api_key: MOCK_API_KEY,
    custom_host: provider.url,
    input_guardrails: [{ [CHECK_ID]: { kinds: ['openai', 'aws'] }, deny }],
  });
  const call = (gw: Gateway, cfg: unknown, content: string) =>
    gw.handle(
      new Request('http://gateway.local/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': JSON.stringify(cfg) },
        body: JSON.stringify(chatBody(content)),
      }),
    );

  test('input_guardrails [{"mycorp.noSecrets": {...}, "deny": true}]: a leak is 400 guardrail_denied, the provider is never called', async () => {
    const gw = await gateway();
    provider.reset();
    const res = await call(gw, config(true), LEAK);
    const json = (await res.json()) as { error?: { code?: string }; hook_results?: unknown };
    expect(res.status).toBe(400);
    expect(json.error?.code).toBe('guardrail_denied');
    expect(JSON.stringify(json)).toContain(CHECK_ID);
    expect(provider.requests).toHaveLength(0);
  }, 30_000);

  test('a clean prompt passes the same guardrail and reaches the provider', async () => {
    const gw = await gateway();
    provider.reset();
    const res = await call(gw, config(true), 'What is 2 + 2?');
    expect(res.status).toBe(200);
    expect(provider.requests).toHaveLength(1);
  }, 30_000);
});
