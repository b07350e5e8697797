/**
 * What every benchmark here shares: timing a loop, keeping the best of several rounds (a busy machine only ever adds
 * time), and a verdict per figure against its budget. A bench prints its figures and sets a non-zero exit code when
 * one is past its budget; `run.ts` runs them all.
 */

/** Average microseconds per call of `fn` over `n` calls (the index passed is `offset + i`). */
export async function perCall(n: number, fn: (i: number) => unknown, offset = 0): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) await fn(offset + i);
  return ((performance.now() - started) * 1000) / n;
}

/** Each function's best average over `rounds`, measured alternately after a warm-up (JIT). */
export async function best<K extends string>(rounds: number, n: number, fns: Record<K, (i: number) => unknown>, warmUp = Math.min(n, 2_000)): Promise<Record<K, number>> {
  const entries = Object.entries(fns) as [K, (i: number) => unknown][];
  for (const [, fn] of entries) await perCall(warmUp, fn);
  const out = Object.fromEntries(entries.map(([name]) => [name, Number.POSITIVE_INFINITY])) as Record<K, number>;
  for (let round = 0; round < rounds; round++) for (const [name, fn] of entries) out[name] = Math.min(out[name], await perCall(n, fn, (round + 1) * n));
  return out;
}

/** Prints the figure against its budget; a figure past it makes the process exit non-zero. */
export function budget(label: string, value: number, limit: number, unit = 'µs'): void {
  const ok = value < limit;
  console.log(`${ok ? 'ok  ' : 'OVER'} ${label}: ${value.toFixed(2)} ${unit} (budget < ${limit} ${unit})`);
  if (!ok) process.exitCode = 1;
}

/** A figure printed for information, with no budget. */
export function figure(label: string, value: number, unit = 'µs'): void {
  console.log(`     ${label}: ${value.toFixed(2)} ${unit}`);
}

/** A precondition of a measure (the thing measured really did its work); false stops the bench with exit code 2. */
export function check(condition: boolean, what: string): void {
  if (condition) return;
  console.error(`bench precondition failed: ${what}`);
  process.exit(2);
}
