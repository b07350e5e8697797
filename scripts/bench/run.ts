/**
 * Runs the micro-benchmarks (every `*.ts` here but this runner and measure.ts, or those named), each in its own
 * process so that one's JIT state and heap do not colour the next. Exits non-zero when any figure is past its
 * budget. They live here rather than in `bun test`: timings on a loaded CI machine say nothing about the code.
 *
 *   bun run bench               all of them
 *   bun run bench cache hooks   only these
 */
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';

const here = import.meta.dir;
const all = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && f !== 'measure.ts')
  .map((f) => basename(f, '.ts'))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !all.includes(name));
if (unknown.length) {
  console.error(`unknown bench ${unknown.join(', ')}; known: ${all.join(', ')}`);
  process.exit(2);
}

const failed: string[] = [];
for (const name of wanted.length ? wanted : all) {
  console.log(`\n== ${name}`);
  const child = Bun.spawn([process.execPath, join(here, `${name}.ts`)], { stdout: 'inherit', stderr: 'inherit', env: process.env });
  if ((await child.exited) !== 0) failed.push(name);
}
console.log(failed.length ? `\npast budget or failed: ${failed.join(', ')}` : '\nall within budget');
process.exit(failed.length ? 1 : 0);
