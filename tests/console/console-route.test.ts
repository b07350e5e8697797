// The gateway serves the web console at /console (core/server/src/console-route.ts): built files with their content
// types, hashed assets cached for a year, index.html for the console's own paths, nothing outside the build, a 503
// that says how to build when there is no build, and no route at all with CONSOLE_ENABLED=OFF.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway } from '../helpers/in-process.ts';

const INDEX = '<!doctype html><title>console</title><script type="module" src="/console/assets/index-Ab12.js"></script>';
const SCRIPT = 'console.log("console")';

let dist: string;
let gateway: Gateway;
const get = (path: string, g = gateway) => g.handle(new Request(`http://gateway.test${path}`));

beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), 'console-dist-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), INDEX);
  writeFileSync(join(dist, 'assets', 'index-Ab12.js'), SCRIPT);
  writeFileSync(join(dist, 'assets', 'index-Cd34.css'), 'body{}');
  writeFileSync(join(dist, 'favicon.svg'), '<svg/>');
  gateway = await startInProcessGateway({ CONSOLE_DIST_DIR: dist });
});
afterAll(async () => {
  await gateway?.close();
  rmSync(dist, { recursive: true, force: true });
});

describe('/console', () => {
  test('the page: HTML, revalidated on each load, with a same-origin content security policy', async () => {
    for (const path of ['/console', '/console/']) {
      const r = await get(path);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toStartWith('text/html');
      expect(r.headers.get('cache-control')).toBe('no-cache');
      expect(r.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await r.text()).toBe(INDEX);
    }
  });

  test("the console's own paths answer the page (it routes in the browser)", async () => {
    for (const path of ['/console/logs', '/console/logs/0b6f-1234', '/console/api-keys?x=1']) {
      const r = await get(path);
      expect(r.status).toBe(200);
      expect(await r.text()).toBe(INDEX);
    }
  });

  test('hashed assets: their content type, cached for a year; other files revalidated', async () => {
    const js = await get('/console/assets/index-Ab12.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toStartWith('text/javascript');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await js.text()).toBe(SCRIPT);
    expect((await get('/console/assets/index-Cd34.css')).headers.get('content-type')).toStartWith('text/css');
    const svg = await get('/console/favicon.svg');
    expect(svg.headers.get('content-type')).toStartWith('image/svg+xml');
    expect(svg.headers.get('cache-control')).toBe('no-cache');
  });

  test('a missing file is a 404 in the error shape, never the page', async () => {
    for (const path of ['/console/assets/index-Old1.js', '/console/robots.txt']) {
      const r = await get(path);
      expect(r.status).toBe(404);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('not_found');
    }
  });

  test('nothing outside the build is served', async () => {
    writeFileSync(join(dist, '..', 'console-secret.txt'), 'secret');
    try {
      for (const path of ['/console/../console-secret.txt', '/console/%2e%2e/console-secret.txt', '/console/..%2fconsole-secret.txt', `/console/${encodeURIComponent(join(dist, '..', 'console-secret.txt'))}`]) {
        const r = await get(path);
        expect(await r.text()).not.toContain('secret');
      }
    } finally {
      rmSync(join(dist, '..', 'console-secret.txt'), { force: true });
    }
  });
});

test('no build: 503 console_not_built, saying how to build it', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'console-empty-'));
  const g = await startInProcessGateway({ CONSOLE_DIST_DIR: empty });
  try {
    const r = await get('/console/logs', g);
    expect(r.status).toBe(503);
    const body = (await r.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('console_not_built');
    expect(body.error.message).toContain('npm install');
    expect(body.error.message).toContain('CONSOLE_ENABLED=OFF');
  } finally {
    await g.close();
    rmSync(empty, { recursive: true, force: true });
  }
});

test('CONSOLE_ENABLED=OFF: no console route (404), the API unaffected', async () => {
  const g = await startInProcessGateway({ CONSOLE_DIST_DIR: dist, CONSOLE_ENABLED: 'OFF' });
  try {
    expect((await get('/console', g)).status).toBe(404);
    expect((await get('/console/assets/index-Ab12.js', g)).status).toBe(404);
    expect((await get('/health/live', g)).status).toBe(200);
  } finally {
    await g.close();
  }
});
