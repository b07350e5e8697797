/**
 * The rate limits' hot path: what one matching `requests` policy adds to a provider attempt, the attempt stage alone
 * against a provider call that answers at once, with the counters in the process (budgeted) and in Redis (one
 * round trip per call: printed, it is the network's figure, and budgeted loosely). Also a call no policy matches
 * (policies of another organisation loaded): the index lookup alone.
 */
import { indexPolicies, rateLimitStages } from '@gateway/plugin-rate-limits';
import type { Attempt, AttemptResult, ProviderAdapter, StateStore } from '@gateway/sdk';
import { WholeAnswer } from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import { MemoryStateStore, RedisStateStore } from '@gateway/state';
import { best, budget, check, figure } from './measure.ts';

const N = 5_000;
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const now = Date.now();

const row = (id: string, organisation_id: string) => ({
  id,
  organisation_id,
  workspace_id: null,
  name: id,
  type: 'requests' as const,
  unit: 'rpm' as const,
  value: 2_000_000_000,
  conditions: [{ key: 'metadata.team', value: 'red' }],
  group_by: [{ key: 'api_key' }],
  status: 'active' as const,
  created_at: now,
  last_updated_at: now,
});
const index = indexPolicies([row('bench-policy', 'org-1'), ...Array.from({ length: 50 }, (_, i) => row(`other-${i}`, `org-other-${i}`))]);

const provider = { id: 'openai' } as ProviderAdapter;
const attempt: Attempt = { index: 'config', target: { provider: 'openai' }, provider, retry: 0, body: { model: 'gpt-4o-mini', messages: [] } };
const answered = (): Promise<AttemptResult> => Promise.resolve(new WholeAnswer('{}', 200, 'openai'));
const matching = buildGatewayRequest({ metadata: { team: 'red' } });
const unmatched = buildGatewayRequest({ caller: { organisationId: 'org-none' } });
const silent = { debug() {}, info() {}, warn() {}, error() {} };

function stage(state: StateStore) {
  const [attemptStage] = rateLimitStages({ index: () => index, state, failMode: 'open', logger: silent });
  return attemptStage;
}

const memory = stage(new MemoryStateStore());
const redisStore = new RedisStateStore(REDIS_URL, `bench-${crypto.randomUUID()}:`);
for (let i = 0; i < 100 && (await redisStore.get('x').then(() => false, () => true)); i++) await Bun.sleep(20);
const redis = stage(redisStore);

check((await memory.run(matching, attempt, answered)).status === 200, 'the memory stage admits');
check((await redis.run(matching, attempt, answered)).status === 200, 'the redis stage admits');

const local = await best(5, N, {
  bare: () => answered(),
  unmatched: () => memory.run(unmatched, attempt, answered),
  memory: () => memory.run(matching, attempt, answered),
});
const remote = await best(3, 1_000, { redis: () => redis.run(matching, attempt, answered) }, 200);
figure('a provider attempt without the stage', local.bare);
budget('no policy matches (index lookup)', local.unmatched - local.bare, 5);
budget('one requests policy, counters in the process', local.memory - local.bare, 15);
budget('one requests policy, counters in Redis (one round trip, loopback)', remote.redis - local.bare, 1_000);
await redisStore.close();
