// scripts/import-prices.ts on a small LiteLLM-format fixture: the files it writes are the expected ones byte for byte
// (reviewed by hand: prefixes stripped, Bedrock region/commitment variants and Azure's regional ones left out, a
// dated id priced like its base left out, an entry priced 0 throughout left out (LiteLLM's 0 may mean unknown), size
// bands and image/transcription modes left out, Perplexity's request fee,
// Vertex ids as the adapter takes them, a conflict settled by the mapping's order), a second run gives the same bytes,
// and merging keeps a file's hand-verified prices kind by kind. Bad arguments write nothing.

import { describe, expect, test } from 'bun:test';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCatalogue } from '@gateway/plugin-pricing';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = join(ROOT, 'tests/pricing/fixtures/import');
const COMMIT = '0123456789abcdef0123456789abcdef01234567';

async function run(dir: string, ...extra: string[]) {
  const proc = Bun.spawn(
    [process.execPath, join(ROOT, 'scripts/import-prices.ts'), join(FIXTURE, 'litellm-sample.json'), '--repo', 'github.com/BerriAI/litellm', '--commit', COMMIT, '--as-of', '2026-08-01', '--providers', dir, ...extra],
    { stdout: 'pipe', stderr: 'pipe' },
  );
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

const read = (dir: string, pkg: string) => readFileSync(join(dir, pkg, 'pricing.json'), 'utf8');

describe('scripts/import-prices.ts', () => {
  test('writes the expected files, the same bytes on a second run; merging keeps hand-verified prices', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-import-'));
    cpSync(join(FIXTURE, 'previous'), dir, { recursive: true });
    const first = await run(dir, '--merge=anthropic');
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('conflict: bedrock: moonshotai.kimi-k2.5 priced differently by bedrock/moonshotai.kimi-k2.5, moonshotai.kimi-k2.5; took bedrock/moonshotai.kimi-k2.5');

    const expected = readdirSync(join(FIXTURE, 'expected'));
    expect(expected.length).toBeGreaterThan(5);
    for (const pkg of expected) expect({ pkg, text: read(dir, pkg) }).toEqual({ pkg, text: read(join(FIXTURE, 'expected'), pkg) });

    // Every file written validates; the packages the fixture does not feed list nothing and say why.
    const written = readdirSync(dir);
    expect(written.length).toBe(28);
    for (const pkg of written) {
      const catalogue = loadCatalogue(pkg, JSON.parse(read(dir, pkg)));
      expect(catalogue.as_of).toBe('2026-08-01');
      // A self-hosted server's note says it has no list price; every other note names the commit read.
      if (!catalogue.note!.includes('no list price')) expect(catalogue.note!).toContain(COMMIT);
      if (Object.keys(catalogue.models).length === 0) expect(catalogue.note!).toMatch(/^No prices|no list price/);
    }

    // The merge as reviewed: the earlier file's input price of claude-haiku-4-5 (1.1) and its claude-3-haiku stay, the
    // compilation's 1-hour cache write prices come in, the alias whose model stays is kept.
    const anthropic = JSON.parse(read(dir, 'anthropic'));
    expect(anthropic.models['claude-haiku-4-5']).toEqual({ input: 1.1, cache_read_input: 0.1, cache_write_input: 1.25, cache_write_input_1h: 2, output: 5 });
    expect(anthropic.aliases).toEqual({ 'claude-3-haiku-latest': 'claude-3-haiku' });
    expect(anthropic.note).toContain('earlier hand-verified version where the compilation lacks the model or differs');

    const before = new Map(written.map((pkg) => [pkg, read(dir, pkg)]));
    const second = await run(dir, '--merge=anthropic');
    expect(second.code).toBe(0);
    for (const pkg of written) expect({ pkg, text: read(dir, pkg) }).toEqual({ pkg, text: before.get(pkg)! });

    // Without merging, the file holds the compilation's prices alone.
    const plain = await run(dir);
    expect(plain.code).toBe(0);
    const replaced = JSON.parse(read(dir, 'anthropic'));
    expect(Object.keys(replaced.models)).toEqual(['claude-haiku-4-5', 'claude-sonnet-4-5']);
    expect(replaced.models['claude-haiku-4-5'].input).toBe(1);
    expect(replaced.aliases).toBeUndefined();
  }, 30_000);

  test('bad arguments: a message, exit code 2, nothing written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-import-'));
    const noCommit = Bun.spawn([process.execPath, join(ROOT, 'scripts/import-prices.ts'), join(FIXTURE, 'litellm-sample.json'), '--providers', dir], { stderr: 'pipe' });
    expect(await noCommit.exited).toBe(2);
    expect(await new Response(noCommit.stderr).text()).toContain('--repo');
    const badMerge = await run(dir, '--merge=acme');
    expect(badMerge.code).toBe(2);
    expect(badMerge.stderr).toContain('--merge names acme');
    expect(existsSync(join(dir, 'openai'))).toBe(false);
  }, 30_000);
});
