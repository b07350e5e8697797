// Typed services and the ready hook in a whole gateway: a plugin set up before the built-in ones finds their services
// and the host's `gatewayCalls` in its onReady hook; a second provider of a service is refused at load, naming both
// plugins; a ready hook that throws stops the start, and what was opened is closed again.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/gateway-process.ts';
import { startInProcessGateway } from '../helpers/in-process.ts';

const SDK = JSON.stringify(join(ROOT, 'core/sdk/src/index.ts'));
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A project root with one plugin package of the given entry source. */
function project(name: string, source: string): string {
  const root = mkdtempSync(join(tmpdir(), 'gw-services-'));
  dirs.push(root);
  mkdirSync(join(root, 'plugin'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: `${name}-project`, private: true, workspaces: ['plugin'] }));
  writeFileSync(join(root, 'plugin', 'package.json'), JSON.stringify({ name, version: '1.0.0', type: 'module', gateway: { api: 1, entry: './index.ts' } }));
  writeFileSync(join(root, 'plugin', 'index.ts'), source);
  return root;
}

const seen = globalThis as { __services?: Record<string, unknown> };

describe('services and the ready hook in a gateway', () => {
  test('a plugin set up first finds, once ready, the services of plugins set up after it and the host’s gatewayCalls', async () => {
    seen.__services = {};
    const root = project(
      'gw-test-early',
      `import { definePlugin, Services } from ${SDK};
       export default definePlugin({
         setup(api) {
           globalThis.__services.inSetup = api.optional(Services.apiKeyVerifier) !== undefined;
           api.onReady(() => {
             globalThis.__services.verifier = typeof api.service(Services.apiKeyVerifier).verify;
             globalThis.__services.calls = typeof api.service(Services.gatewayCalls).call;
           });
         },
       });`,
    );
    const gateway = await startInProcessGateway({}, [root, ROOT]);
    try {
      expect(gateway.plugins.loaded[0]?.name).toBe('gw-test-early');
      expect(gateway.plugins.refused).toEqual([]);
      expect(seen.__services).toEqual({ inSetup: false, verifier: 'function', calls: 'function' });
    } finally {
      await gateway.close();
    }
  });

  test('a second provider of a service is refused at load, naming both plugins; the first one serves', async () => {
    const root = project(
      'gw-test-second-audit',
      `import { definePlugin, Services } from ${SDK};
       export default definePlugin({ setup(api) { api.provide(Services.auditLog, { record: async () => {} }); } });`,
    );
    const gateway = await startInProcessGateway({}, [ROOT, root]);
    try {
      expect(gateway.plugins.refused).toEqual([
        {
          name: 'gw-test-second-audit',
          reason: 'failed to load: service "auditLog" from plugin gw-test-second-audit is already provided by plugin @gateway/admin-audit; a service has one provider',
        },
      ]);
      expect(gateway.plugins.loaded.map((p) => p.name)).toContain('@gateway/admin-audit');
    } finally {
      await gateway.close();
    }
  });

  test('a ready hook that throws stops the start with its plugin named, and the plugins are closed again', async () => {
    seen.__services = {};
    const root = project(
      'gw-test-grumpy',
      `import { definePlugin } from ${SDK};
       export default definePlugin({
         setup(api) {
           api.onReady(() => { throw new Error('no upstream configured'); });
           api.onClose(() => { globalThis.__services.closed = true; });
         },
       });`,
    );
    await expect(startInProcessGateway({}, [ROOT, root])).rejects.toThrow('plugin gw-test-grumpy failed when ready: no upstream configured');
    expect(seen.__services).toEqual({ closed: true });
  });
});
