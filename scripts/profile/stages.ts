/**
 * Reads a .cpuprofile written by `bun --cpu-prof` and prints where the CPU went, by stage of a gateway call: each
 * sample is charged to the first frame (from the leaf up) that belongs to a known stage, so that time
 * spent inside a library or a built-in (JSON.parse, fetch's internals) counts for the gateway code that called it.
 *
 *   bun scripts/profile/stages.ts <file.cpuprofile> [--top N]
 *
 * The stages are matched on the frame's file and function (STAGES below, first match wins). Samples with no
 * gateway frame on their stack at all are Bun's own work outside JavaScript's view: the HTTP server's accept,
 * header parsing and response writing, fetch's socket work, the garbage collector.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** [stage, test on the frame]: the order matters, the first match wins. */
const STAGES: ReadonlyArray<readonly [string, (f: CallFrame) => boolean]> = [
  ['request log entry (build, hand to the writer)', (f) => /plugins\/request-log\//.test(f.url)],
  ['metrics', (f) => /call-metrics|\/metrics\.ts|plugins\/otel\//.test(f.url)],
  ['auth (API key lookup, scopes)', (f) => /data-plane-auth|admin\/api-keys\/|call-scope/.test(f.url)],
  ['config (headers, saved config, defaults)', (f) => /core\/config\/|core\/server\/src\/resolve\.ts|metadata-defaults|model-routing/.test(f.url)],
  ['validation (body checks)', (f) => /core\/validation\//.test(f.url)],
  ['routing strategies (single, fallback…)', (f) => /plugins\/strategies\/|core\/pipeline\/src\/engine\.ts/.test(f.url)],
  ['provider request build / answer translation', (f) => /\/providers\//.test(f.url)],
  ['stream relay and usage (SSE events checked, usage read)', (f) => /core\/pipeline\/src\/(usage|stream-usage)\.ts|pipeline\/src\/streams\//.test(f.url)],
  ['pipeline (attempt, retries, headers, deadlines)', (f) => /core\/pipeline\//.test(f.url)],
  ['hooks, guardrails, cache, limits', (f) => /plugins\/(hooks|guardrail|cache|rate-limits|usage-limits|circuit-breaker|pricing)/.test(f.url)],
  ['server (routing, body read, response build)', (f) => /core\/server\//.test(f.url)],
  ['gateway SDK helpers', (f) => /core\/sdk\//.test(f.url)],
  ['state, database', (f) => /core\/(state|db)\//.test(f.url)],
  ['framework (Elysia)', (f) => /node_modules\/elysia\//.test(f.url)],
];

const IDLE = new Set(['(idle)', '(program)']);
const UPSTREAM_FETCH = 'upstream fetch (Bun\'s native fetch: connect, write, read)';

function median(values: number[]): number {
  const sorted = values.filter((v) => v > 0).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function main(): void {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: bun scripts/profile/stages.ts <file.cpuprofile> [--top N]');
    process.exit(2);
  }
  const topIndex = process.argv.indexOf('--top');
  const top = topIndex > 0 ? Number(process.argv[topIndex + 1]) : 15;
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;

  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }

  const stageOf = new Map<number, string>();
  const stageFor = (id: number): string => {
    const known = stageOf.get(id);
    if (known !== undefined) return known;
    let stage = 'Bun outside JavaScript (HTTP server, fetch sockets, GC)';
    const leaf = byId.get(id)?.callFrame;
    // Bun's own fetch (its url is empty: native code) is the upstream call itself, whoever called it.
    if (leaf && leaf.url === '' && leaf.functionName === 'fetch') {
      stageOf.set(id, UPSTREAM_FETCH);
      return UPSTREAM_FETCH;
    }
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame) break;
      const match = STAGES.find(([, test]) => test(frame));
      if (match) {
        stage = match[0];
        break;
      }
    }
    stageOf.set(id, stage);
    return stage;
  };

  const byStage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  // Samples are counted rather than their time deltas summed: on a loaded machine a thread that was not running
  // leaves one sample with a long delta, which says nothing about the code it landed in.
  const interval = median(profile.timeDeltas);
  profile.samples.forEach((id) => {
    const node = byId.get(id);
    const delta = interval;
    if (!node || IDLE.has(node.callFrame.functionName)) return;
    busy += delta;
    const stage = stageFor(id);
    byStage.set(stage, (byStage.get(stage) ?? 0) + delta);
    const where = node.callFrame.url.replace(/^.*?\/(core|plugins|providers|admin|node_modules)\//, '$1/');
    const name = `${node.callFrame.functionName || '(anonymous)'} ${where ? `${where}:${node.callFrame.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + delta);
  });

  const percent = (us: number) => `${((100 * us) / busy).toFixed(1)}%`.padStart(6);
  console.log(`busy CPU in the profile: ${(busy / 1e6).toFixed(2)} s\n\nby stage (self time, charged to the nearest gateway frame):`);
  for (const [stage, us] of [...byStage].sort((a, b) => b[1] - a[1])) console.log(`${percent(us)}  ${stage}`);
  console.log(`\ntop ${top} functions by self time:`);
  for (const [name, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${percent(us)}  ${name}`);
}

main();
