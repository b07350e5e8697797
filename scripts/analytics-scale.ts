/**
 * The analytics queries on a large request log (issue #17, item 4): generates ROWS log rows (default 1,000,000) over
 * 30 days in a database of its own, then times the summary, two graphs and groups with every column, as an owner
 * (the whole organisation) and as a member who sees only their own keys. Prints a Markdown table for
 * docs/admin/analytics.md. Not part of `bun run bench`: generating the rows takes minutes.
 *
 *   bun scripts/analytics-scale.ts                                  SQLite, a file under /tmp
 *   DATABASE_URL=mysql://root@127.0.0.1:3306/analytics_scale bun scripts/analytics-scale.ts   (the database must exist)
 *   ROWS=100000 bun scripts/analytics-scale.ts
 *   RUNS=1 DAYS=1,7 …                                              one timed run per query, over 1 and 7 days
 *   NO_ANALYTICS_INDEXES=1 …                                       without admin/analytics' indexes
 */
import { aggregate, analyticsMigrations } from '@gateway/admin-analytics';
import { logScope, SECURITY_DEFAULTS } from '@gateway/admin-settings';
import { createDatabase } from '@gateway/db';
import { requestLogMigrations, requestLogs } from '@gateway/plugin-request-log';
import { type NewRow, type Principal, sql } from '@gateway/sdk';

const ROWS = Number(process.env.ROWS ?? 1_000_000);
/** Timed runs per query (after one warm-up) and the ranges, in days, ending at the last row. */
const RUNS = Number(process.env.RUNS ?? 3);
const DAYS = (process.env.DAYS ?? '30,1').split(',').map(Number);
const url = process.env.DATABASE_URL ?? `sqlite:/tmp/analytics-scale-${process.pid}.db`;
const ORG = 'org-scale';
const DAY = 86_400_000;
const END = Date.UTC(2026, 10, 1);
const START = END - 30 * DAY;

const database = await createDatabase(url);
// NO_ANALYTICS_INDEXES=1 leaves out admin/analytics' indexes, to compare.
await database.migrate(process.env.NO_ANALYTICS_INDEXES === '1' ? requestLogMigrations : [...requestLogMigrations, ...analyticsMigrations]);

// A seeded generator: the same rows on every run and dialect.
let seed = 42;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
const models = Array.from({ length: 20 }, (_, i) => `model-${i}`);
const providers = ['openai', 'anthropic', 'google', 'bedrock', 'mistral-ai'];
const keys = Array.from({ length: 200 }, (_, i) => `key-${i}`);
const workspaces = Array.from({ length: 10 }, (_, i) => `ws-${i}`);
const teams = Array.from({ length: 10 }, (_, i) => `team-${i}`);

function row(i: number): NewRow<typeof requestLogs> {
  const r = random();
  const status = r < 0.95 ? 200 : r < 0.98 ? 500 : 429;
  const prompt = Math.floor(random() * 2000);
  const completion = status === 200 ? Math.floor(random() * 800) : 0;
  return {
    trace_id: `t-${i}`,
    organisation_id: ORG,
    workspace_id: pick(workspaces),
    api_key_id: pick(keys),
    provider: pick(providers),
    model: pick(models),
    endpoint: 'chatComplete',
    method: 'POST',
    path: '/chat/completions',
    status,
    // Long-tailed: most calls under a second, a few up to 30 s.
    latency_ms: Math.floor(50 + 500 * random() + (random() < 0.05 ? 30_000 * random() : 0)),
    prompt_tokens: status === 200 ? prompt : null,
    completion_tokens: status === 200 ? completion : null,
    total_tokens: status === 200 ? prompt + completion : null,
    cache_status: random() < 0.1 ? 'HIT' : 'MISS',
    cost_cents: status === 200 ? (prompt * 0.00025 + completion * 0.001) : null,
    priced: status === 200 ? true : null,
    metadata: { team: pick(teams) },
    created_at: START + Math.floor((i / ROWS) * 30 * DAY),
  };
}

const have = await database.count(requestLogs, (c) => sql`${c.organisation_id} = ${ORG}`);
if (have < ROWS) {
  const began = performance.now();
  const batch = 2_000;
  for (let i = have; i < ROWS; i += batch) {
    const rows = Array.from({ length: Math.min(batch, ROWS - i) }, (_, j) => row(i + j));
    await database.insert(requestLogs, rows);
  }
  console.log(`generated ${ROWS - have} rows in ${((performance.now() - began) / 1000).toFixed(1)} s (${database.dialect})`);
}

const security = { get: async () => SECURITY_DEFAULTS };
const owner: Principal = {
  caller: { apiKeyId: 'bench', organisationId: ORG, workspaceId: 'bench', scopes: ['analytics.read'], keyType: 'organisation-service', userId: null },
  orgRole: 'owner',
  isOrgAdmin: true,
  workspaceRole: async () => 'admin',
};
const ALL = ['cost', 'total_tokens', 'avg_tokens', 'avg_input_tokens', 'avg_output_tokens', 'avg_latency', 'p95_latency', 'p99_latency', 'success_rate', 'error_count', 'cache_hit_rate', 'last_seen', 'first_seen'] as const;
const SUMMARY = ['requests', 'cost', 'total_tokens', 'avg_latency', 'p50_latency', 'p95_latency', 'p99_latency', 'success_rate', 'cache_hit_rate'] as const;
const range = (days: number) => new URLSearchParams({ time_of_generation_min: String(END - days * DAY), time_of_generation_max: String(END) });
const member = (query: URLSearchParams) => {
  query.set('api_key_id', 'key-1,key-2,key-3');
  return query;
};

async function time(label: string, query: URLSearchParams, run: (scope: Awaited<ReturnType<typeof logScope>>) => Promise<unknown>): Promise<void> {
  const scope = await logScope({ database, security }, owner, query);
  await run(scope); // warm the page cache / buffer pool
  const runs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const began = performance.now();
    await run(scope);
    runs.push(performance.now() - began);
  }
  runs.sort((a, b) => a - b);
  console.log(`| ${label} | ${runs[Math.floor(runs.length / 2)]!.toFixed(0)} ms |`);
}

const bucket = (size: number) => (c: { created_at: unknown }) => sql`(${c.created_at} - (${c.created_at} % ${sql.raw(String(size))}))`;
console.log(`\n${ROWS.toLocaleString('en')} rows, ${database.dialect}; median of ${RUNS} after a warm-up\n\n| query | time |\n|---|---|`);
for (const days of DAYS) {
  await time(`summary, ${days} d`, range(days), (scope) => aggregate(database, scope, { metrics: SUMMARY }));
  await time(`graph requests, ${days} d`, range(days), (scope) => aggregate(database, scope, { key: bucket(days > 7 ? 6 * 3_600_000 : 900_000), metrics: ['requests'] }));
  await time(`graph latency (avg, p50/p95/p99), ${days} d`, range(days), (scope) =>
    aggregate(database, scope, { key: bucket(days > 7 ? 6 * 3_600_000 : 900_000), metrics: ['avg_latency', 'p50_latency', 'p95_latency', 'p99_latency'] }));
  await time(`groups model, all columns, ${days} d`, range(days), (scope) =>
    aggregate(database, scope, { key: (c) => sql`${c.model}`, metrics: ALL, orderBy: { by: 'requests', desc: true }, limit: 50 }));
  await time(`groups metadata.team, all columns, ${days} d`, range(days), (scope) => {
    const path = '$."team"';
    const key = database.dialect === 'sqlite' ? (c: { metadata: unknown }) => sql`json_extract(${c.metadata}, ${path})` : (c: { metadata: unknown }) => sql`JSON_UNQUOTE(JSON_EXTRACT(${c.metadata}, ${path}))`;
    return aggregate(database, scope, { key, metrics: ALL, orderBy: { by: 'requests', desc: true }, limit: 50 });
  });
  await time(`member (3 keys): summary, ${days} d`, member(range(days)), (scope) => aggregate(database, scope, { metrics: SUMMARY }));
}
await database.close();
