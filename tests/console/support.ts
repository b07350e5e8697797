// What the console's browser test files share (logs-filters, analytics, sso): Chromium, the build, a gateway on a real
// port, screenshots. browser.test.ts keeps its own copy of the same few lines.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Gateway } from '@gateway/server';
import type { Server } from 'bun';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ROOT } from '../helpers/gateway-process.ts';
import { TEST_ADMIN_KEY } from '../helpers/in-process.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SHOTS = join(ROOT, process.env.CONSOLE_SCREENSHOTS_DIR ?? 'test-output/console-screenshots');
export const WAIT = { timeout: 20_000 };

/** Why the browser tests cannot run here, or null. */
export const skipReason = existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing and scripts/ensure-chromium.sh could not install it (not root, or no apt-get)`;

/** Builds the console when the install skipped it; launches Chromium. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(join(ROOT, 'console/dist/index.html'))) {
    const build = Bun.spawnSync(['npm', 'run', '--silent', 'build', '-w', '@gateway/console'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
    if (build.exitCode !== 0) throw new Error(`console build failed: ${build.stderr.toString()}`);
  }
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/**
 * A real port for a gateway made afterwards: SSO needs the gateway's own URL (its callback) before the gateway starts.
 * `attach` gives the server its gateway.
 */
export function listen(): { server: Server<undefined>; origin: string; attach: (gateway: Gateway) => void } {
  let gateway: Gateway | undefined;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request) => (gateway ? gateway.handle(request) : new Response('starting', { status: 503 })),
  });
  return { server, origin: `http://127.0.0.1:${server.port}`, attach: (g) => (gateway = g) };
}

/** An administration call with the test admin key (or `key`); throws on an error answer. */
export async function adminCall(origin: string, method: string, path: string, body?: unknown, key = TEST_ADMIN_KEY): Promise<Record<string, unknown>> {
  const r = await fetch(`${origin}/v1${path}`, {
    method,
    headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  const json = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return json;
}

export async function signIn(browser: Browser, origin: string, key: string, path = ''): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
  await page.goto(`${origin}/console/${path}`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('navigation', { name: 'Pages' }).waitFor(WAIT);
  return page;
}

export const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

/** The rows of the page's tables, their cells' texts joined by ' | ' (evaluated in the page: a function, since the CSP forbids eval). */
export const rowTexts = (page: Page): Promise<string[]> =>
  page.evaluate(() =>
    [...(globalThis as any).document.querySelectorAll('main table:not(.sr-only) > tbody > tr')].map((r: { cells: { textContent: string }[] }) =>
      [...r.cells].map((c) => c.textContent).join(' | '),
    ),
  );

/** Waits until the request log holds `count` rows (it is written through a queue, a moment after each answer). */
export async function waitForLogs(origin: string, count: number): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    const page = (await adminCall(origin, 'GET', '/logs?limit=100')) as { data: unknown[] };
    if (page.data.length >= count) return;
    await Bun.sleep(100);
  }
  throw new Error(`the request log did not reach ${count} rows`);
}
