/**
 * (Re)writes each provider package's pricing.json from a LiteLLM-format price compilation (docs/pricing.md).
 *
 *   bun scripts/import-prices.ts <model_prices_and_context_window.json> --repo github.com/<owner>/<repo> \
 *     --commit <40 hex digits> --as-of YYYY-MM-DD [--merge | --merge=openai,anthropic] [--providers <dir>]
 *
 * --repo and --commit name where the file was read (written into each file's note); --as-of is the day its prices
 * are of (each file's `as_of`). --merge keeps a file's own entries over the compilation's (hand-verified prices),
 * for every package or the ones listed; without it a file holds the compilation's prices alone. --providers writes
 * under another directory than ./providers (the test uses it). Which LiteLLM provider feeds which package, and how
 * its keys become our model ids: scripts/pricing-import/mapping.ts. Every file written is checked against the
 * catalogue schema first; conflicts (one id, two prices) are printed.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadCatalogue } from '@gateway/plugin-pricing';
import type { PricingCatalogue } from '@gateway/sdk';
import { importCatalogues, printCatalogue } from './pricing-import/build.ts';
import { PACKAGES, SELF_HOSTED } from './pricing-import/mapping.ts';

function fail(message: string): never {
  console.error(`import-prices: ${message}`);
  process.exit(2);
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    repo: { type: 'string' },
    commit: { type: 'string' },
    'as-of': { type: 'string' },
    merge: { type: 'string' },
    providers: { type: 'string', default: resolve(import.meta.dir, '..', 'providers') },
  },
  // `--merge` alone means every package.
  args: process.argv.slice(2).map((a) => (a === '--merge' ? '--merge=*' : a)),
});

const [file] = positionals;
if (!file || positionals.length > 1) fail('usage: bun scripts/import-prices.ts <file.json> --repo github.com/<owner>/<repo> --commit <sha> --as-of YYYY-MM-DD [--merge[=pkg,…]]');
if (!values.repo || !/^github\.com\/[\w.-]+\/[\w.-]+$/.test(values.repo)) fail('--repo github.com/<owner>/<repo> is required');
if (!values.commit || !/^[0-9a-f]{40}$/.test(values.commit)) fail('--commit <40 hex digits> is required');
if (!values['as-of'] || !/^\d{4}-\d{2}-\d{2}$/.test(values['as-of'])) fail('--as-of YYYY-MM-DD is required');

let compilation: Record<string, unknown>;
try {
  compilation = JSON.parse(readFileSync(file, 'utf8'));
} catch (error) {
  fail(`cannot read ${file}: ${(error as Error).message}`);
}

const dir = values.providers!;
const fileOf = (pkg: string) => join(dir, pkg, 'pricing.json');
const previous = new Map<string, PricingCatalogue>();
const merge = values.merge === '*' ? new Set([...Object.keys(PACKAGES), ...Object.keys(SELF_HOSTED)]) : new Set(values.merge ? values.merge.split(',') : []);
for (const pkg of merge) {
  if (!(pkg in PACKAGES) && !(pkg in SELF_HOSTED)) fail(`--merge names ${pkg}, which is not a package of the mapping`);
  if (existsSync(fileOf(pkg))) previous.set(pkg, loadCatalogue(pkg, new URL(`file://${resolve(fileOf(pkg))}`)));
}

const { catalogues, conflicts } = importCatalogues(compilation, previous, { repo: values.repo, commit: values.commit, asOf: values['as-of'], merge });
// Checked before anything is written: a bad mapping never leaves half the files rewritten.
for (const [pkg, catalogue] of catalogues) loadCatalogue(pkg, catalogue);
for (const [pkg, catalogue] of catalogues) {
  mkdirSync(join(dir, pkg), { recursive: true });
  writeFileSync(fileOf(pkg), printCatalogue(catalogue));
  console.log(`${pkg}: ${Object.keys(catalogue.models).length} models`);
}
for (const conflict of conflicts) console.warn(`conflict: ${conflict}`);
