// A tokens usage limit holds across processes: two real gateway processes sharing one MariaDB database and one Redis,
// calls through the openai SDK spread over both, 10 at a time. The limit is reached, and what the admitted calls
// consumed overshoots it by less than the calls not yet counted when it was reached (docs/admin/policies.md,
// "consumption and overshoot"): each of the 10 clients has at most its call in flight and its previous one still
// being added, so fewer than 2 × 10 calls. Counted per process instead, the two together would have admitted about
// twice the limit, which the bound refuses. The policy's current usage is what the admitted calls consumed.

import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createE2EDatabase, type E2EDatabase } from '../helpers/e2e-database.ts';
import type { GatewayProcess } from '../helpers/gateway-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { createPolicy, processClient, startGateways, status, tally } from '../rate-limits/processes.ts';

const ADMIN_KEY = `gw-usage-processes-${crypto.randomUUID()}`;
const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
let db: E2EDatabase;
let mock: OpenAIMock;
let gws: GatewayProcess[] = [];

beforeAll(async () => {
  [db, mock] = await Promise.all([createE2EDatabase('mysql'), startOpenAIMock({ apiKey: null })]);
  gws = await startGateways({ DATABASE_URL: db.url, REDIS_URL, GATEWAY_ADMIN_API_KEY: ADMIN_KEY }, [{}, {}]);
}, 90_000);

afterAll(async () => {
  await Promise.all(gws.map((g) => g.stop()));
  await Promise.all([mock?.stop(), db?.drop()]);
}, 60_000);

async function currentUsage(id: string): Promise<number> {
  const res = await fetch(`${gws[1]!.url}/v1/policies/usage-limits/${id}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
  const body = (await res.json()) as { current_usage: { usage: number }[] };
  return body.current_usage[0]?.usage ?? 0;
}

test('a tokens usage limit over two processes: reached, overshoot bounded by the calls not yet counted', async () => {
  const per = (await processClient(gws[0]!, ADMIN_KEY, mock, 'probe').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three' }] })).usage!
    .total_tokens;
  const concurrency = 10;
  const credit = 50 * per;
  const id = await createPolicy(gws[0]!, ADMIN_KEY, '/policies/usage-limits', {
    name: 'shared tokens',
    type: 'tokens',
    credit_limit: credit,
    conditions: [{ key: 'metadata.case', value: 'usage' }],
  });
  const codes: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (next < 200) {
        next++;
        codes.push(await status(processClient(gws[w % 2]!, ADMIN_KEY, mock, 'usage')));
      }
    }),
  );
  const t = tally(codes);
  expect(Object.keys(t).sort()).toEqual(['200', '429']);
  const consumed = t[200]! * per;
  expect(consumed).toBeGreaterThanOrEqual(credit);
  expect(consumed).toBeLessThan(credit + 2 * concurrency * per);
  // Every admitted call is counted once, whichever process served it (the last adds land after their answers).
  for (let i = 0; i < 200 && (await currentUsage(id)) !== consumed; i++) await Bun.sleep(25);
  expect(await currentUsage(id)).toBe(consumed);
}, 120_000);
