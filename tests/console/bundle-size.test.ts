// The console's first load stays small (issue 22: under 300 KB compressed): everything `vite build` wrote to
// console/dist — the page, its script and its style, all loaded at once — gzip-compressed, summed. docs/console.md
// gives the figure.
import { expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT } from '../helpers/gateway-process.ts';

const DIST = join(ROOT, 'console/dist');
const LIMIT = 300 * 1024;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

test('the built console, every file gzip-compressed, is under 300 KB', () => {
  if (!existsSync(join(DIST, 'index.html'))) {
    const build = Bun.spawnSync(['npm', 'run', '--silent', 'build', '-w', '@gateway/console'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
    expect(build.exitCode).toBe(0);
  }
  const all = files(DIST);
  expect(all.some((f) => f.endsWith('.js'))).toBe(true);
  const total = all.reduce((sum, f) => sum + gzipSync(readFileSync(f), { level: 9 }).length, 0);
  expect(total).toBeLessThan(LIMIT);
});
