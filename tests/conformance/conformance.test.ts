/**
 * Every case of cases.ts against every provider fixture in providers/, through an in-process gateway, with the
 * official openai SDK as the client. A provider that lacks a feature skips its case with the reason in the name.
 */
import { afterAll, beforeAll, describe, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Gateway } from '@gateway/server';
import OpenAI from 'openai';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { CASES } from './cases.ts';
import type { ProviderFixture, StartedServer } from './fixture.ts';

const dir = join(import.meta.dir, 'providers');
const fixtures: ProviderFixture[] = [];
for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts')).sort()) {
  const mod = (await import(join(dir, file))) as { default: ProviderFixture | ProviderFixture[] };
  fixtures.push(...(Array.isArray(mod.default) ? mod.default : [mod.default]));
}

let gateway: Gateway;
beforeAll(async () => {
  gateway = await startInProcessGateway();
});
afterAll(async () => {
  await gateway?.close();
});

/** The SDK talks to the in-process gateway through its fetch option: no socket between client and gateway. */
function clientFor(server: StartedServer): OpenAI {
  return new OpenAI({
    baseURL: 'http://gateway.test/v1',
    apiKey: server.headers.authorization?.replace(/^Bearer /, '') ?? 'unused',
    maxRetries: 0,
    defaultHeaders: { ...server.headers, 'x-gateway-api-key': TEST_ADMIN_KEY },
    fetch: (url: string | URL | Request, init?: RequestInit) =>
      gateway.handle(url instanceof Request ? new Request(url, init) : new Request(url instanceof URL ? url.href : url, init)),
  });
}

for (const fixture of fixtures) {
  describe(`conformance: ${fixture.name}`, () => {
    let server: StartedServer;
    beforeAll(async () => {
      server = await fixture.start();
    });
    afterAll(async () => {
      await server?.stop();
    });
    for (const c of CASES) {
      const missing = [c.feature, ...(c.needs ?? [])].find((f) => fixture.unsupported?.[f]);
      if (missing) {
        test.skip(`${c.title} — skipped: ${fixture.name} ${fixture.unsupported?.[missing]}`, () => {});
        continue;
      }
      test(c.title, async () => {
        const raw = (path: string, body: unknown) =>
          gateway.handle(
            new Request(`http://gateway.test${path}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, ...server.headers },
              body: JSON.stringify(body),
            }),
          );
        await c.run(clientFor(server), server, raw);
      });
    }
  });
}
