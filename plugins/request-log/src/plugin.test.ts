import { describe, expect, test } from 'bun:test';
import { Errors, type FinallyStage } from '@gateway/sdk';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { testPluginApi } from '@gateway/sdk/testing';
import plugin from './index.ts';
import { requestLogs } from './table.ts';
import { testOutcome, testRequest } from './test-request.ts';
import { RequestLogServices } from '@gateway/plugin-request-log';

const SECRET_KEY = 'gw-secret-api-key-value';
const PROVIDER_KEY = 'sk-provider-secret-value';

for (const dialect of DIALECTS) {
  describe(`request-log plugin [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('setup migrates, registers a finally stage, provides the queue and flushes on close', async () => {
      const { database } = await t.fresh();
      const earlier = testPluginApi({ name: '@gateway/plugin-request-log', services: { database } });
      await plugin.setup(earlier.api);
      await earlier.close();
      const harness = testPluginApi({ name: '@gateway/plugin-request-log', services: { database } });
      await plugin.setup(harness.api); // a second start: migration already applied

      const stage = harness.stages[0] as FinallyStage;
      // One finally stage, and no request stage (nothing on the request path).
      expect(harness.stages).toHaveLength(1);
      expect(stage).toMatchObject({ phase: 'finally', rule: 'fire-and-forget' });
      expect(harness.stages.every((s) => s.phase === 'finally')).toBe(true);
      expect(harness.api.service(RequestLogServices.queue)).toBeDefined();

      const req = testRequest({
        traceId: 'trace-plugin',
        search: `?key=${PROVIDER_KEY}`,
        headers: new Headers({
          'content-type': 'application/json',
          authorization: `Bearer ${PROVIDER_KEY}`,
          'x-gateway-api-key': SECRET_KEY,
          'x-gateway-span-id': 'span-1',
          'x-gateway-parent-span-id': 'span-0',
          'x-gateway-span-name': 'chat',
        }),
        locals: { cacheStatus: 'MISS' },
      });
      const outcome = testOutcome({
        status: 502,
        error: Errors.upstreamUnreachable('openai', 'connection refused'),
        attempts: [
          { index: 'config.targets[0]', providerId: 'openai', retry: 0, status: 502, latencyMs: 5 },
          { index: 'config.targets[0]', providerId: 'openai', retry: 1, status: 502, latencyMs: 6 },
        ],
      });
      expect(stage.run(req, outcome)).toBeUndefined(); // nothing awaited on the request's path
      await harness.close(); // onClose flushes

      const row = (await database.findOne(requestLogs, 'trace_id', 'trace-plugin'))!;
      expect(row).toMatchObject({
        span_id: 'span-1',
        parent_span_id: 'span-0',
        span_name: 'chat',
        organisation_id: 'org-1',
        workspace_id: 'ws-1',
        api_key_id: 'key-1',
        provider: 'openai',
        model: 'gpt-test',
        endpoint: 'chatComplete',
        method: 'POST',
        path: '/chat/completions',
        status: 502,
        latency_ms: 42,
        upstream_latency_ms: 30,
        prompt_tokens: 5,
        completion_tokens: 6,
        total_tokens: 11,
        cache_status: 'MISS',
        target_index: 'config',
        retry_count: 1,
        metadata: { team: 'a' },
        error_code: 'upstream_unreachable',
      });
      // A wall-clock time (epoch ms) of when the request arrived, not the monotonic receivedAt.
      expect(Math.abs(row.created_at - (Date.now() - 42))).toBeLessThan(60_000);
      expect(JSON.parse(row.request_body!)).toEqual(req.body!);
      expect(row.attempts).toHaveLength(2);
      // Secrets never reach storage: no headers, no query string.
      const stored = JSON.stringify(row);
      expect(stored).not.toContain(SECRET_KEY);
      expect(stored).not.toContain(PROVIDER_KEY);
    });

    test('a proxied request logs its raw body; the queue is reachable for tests', async () => {
      const { database } = await t.fresh();
      const harness = testPluginApi({ services: { database } });
      await plugin.setup(harness.api);
      const stage = harness.stages[0] as FinallyStage;
      const raw = new TextEncoder().encode('{"input":"raw"}');
      stage.run(
        testRequest({ traceId: 'trace-proxy', endpoint: 'proxy', path: '/files', body: undefined, rawBody: raw }),
        testOutcome({ responseBody: undefined, error: undefined }),
      );
      await harness.api.service(RequestLogServices.queue).flush();
      const row = (await database.findOne(requestLogs, 'trace_id', 'trace-proxy'))!;
      expect(row).toMatchObject({ endpoint: 'proxy', request_body: '{"input":"raw"}', response_body: null, model: null, total_tokens: null });
    });
  });
}
