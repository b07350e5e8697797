/**
 * The plugin as the server runs it: the writer thread opens DATABASE_URL (from the `settings` service or the
 * environment) only when that is the `database` service's database; an unchanged body is logged from its bytes, a
 * body a stage replaced (redaction) as the replacement; onClose ends the thread.
 */
import { describe, expect, test } from 'bun:test';
import type { FinallyStage, GatewayRequest } from '@gateway/sdk';
import { databaseThreads } from '@gateway/db';
import { DIALECTS, useTestDatabase, type TestDatabase } from '@gateway/db/testing';
import { testPluginApi } from '@gateway/sdk/testing';
import { bodyIsRaw, entryFrom } from './entry.ts';
import plugin from './index.ts';
import { requestLogs } from './table.ts';
import { testOutcome, testRequest } from './test-request.ts';
import { RequestLogServices } from '@gateway/plugin-request-log';

/** A request as the server builds it: `body` parsed from `rawBody` (here with the client's own spacing). */
function received(traceId: string): GatewayRequest {
  const text = '{ "model": "gpt-test",  "messages": [ { "role": "user", "content": "my secret is 1234" } ] }';
  const rawBody = new TextEncoder().encode(text);
  const body = JSON.parse(text);
  return testRequest({ traceId, rawBody, body, parsedBody: body });
}

/** The same kind of URL, naming another database. */
function otherDatabase(url: string): string {
  if (url.startsWith('sqlite:')) return url.replace(/gateway\.db$/, 'other.db');
  const u = new URL(url);
  u.pathname = '/gw_test_some_other_database';
  return u.toString();
}

async function setUp(t: { fresh(): Promise<TestDatabase> }, how: 'settings' | 'env' | 'none' | 'other') {
  const { database, url } = await t.fresh();
  const services: Record<string, unknown> = { database, databaseThreads };
  if (how === 'settings') services.settings = { databaseUrl: url, reader: undefined };
  if (how === 'other') services.settings = { databaseUrl: otherDatabase(url) };
  const harness = testPluginApi({ services, env: how === 'env' ? { DATABASE_URL: url } : {} });
  await plugin.setup(harness.api);
  const finallyStage = harness.stages.find((s) => s.phase === 'finally') as FinallyStage;
  const queue = harness.api.service(RequestLogServices.queue);
  return { database, harness, finallyStage, queue };
}

for (const dialect of DIALECTS) {
  describe(`request-log plugin, writer thread [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('DATABASE_URL from the settings service: written by the thread; onClose flushes and ends it', async () => {
      const { database, harness, finallyStage, queue } = await setUp(t, 'settings');
      expect(queue.writerInfo).toMatchObject({ mode: 'worker', workerRunning: true });

      const unchanged = received('trace-raw');
      finallyStage.run(unchanged, testOutcome());

      // A later stage redacts: it sets a new object (the contract), and the log must show the redacted body.
      const redacted = received('trace-redacted');
      redacted.body = { model: 'gpt-test', messages: [{ role: 'user', content: '[redacted]' }] };
      finallyStage.run(redacted, testOutcome());

      await harness.close();
      expect(queue.writerInfo).toMatchObject({ mode: 'closed', workerRunning: false });
      const raw = (await database.findOne(requestLogs, 'trace_id', 'trace-raw', { fresh: true }))!;
      expect(raw.request_body).toBe(new TextDecoder().decode(unchanged.rawBody)); // the bytes, spacing and all
      expect(raw).toMatchObject({ model: 'gpt-test', total_tokens: 11, organisation_id: 'org-1' });
      const red = (await database.findOne(requestLogs, 'trace_id', 'trace-redacted', { fresh: true }))!;
      expect(JSON.parse(red.request_body!)).toEqual(redacted.body!);
      expect(red.request_body).not.toContain('my secret');
    });

    test('DATABASE_URL from the environment when there is no settings service', async () => {
      const { database, harness, finallyStage, queue } = await setUp(t, 'env');
      expect(queue.writerInfo.mode).toBe('worker');
      finallyStage.run(testRequest({ traceId: 'trace-env' }), testOutcome());
      await harness.close();
      expect(await database.count(requestLogs, undefined, { fresh: true })).toBe(1);
    });

    test('settings naming another database than the service (never guessed right): written on the main thread', async () => {
      const { database, harness, finallyStage, queue } = await setUp(t, 'other');
      expect(queue.writerInfo).toMatchObject({ mode: 'main-thread', workerRunning: false });
      expect(harness.logger.records.find((r) => r.level === 'warn')?.obj).toMatchObject({ reason: expect.stringContaining('another') });
      finallyStage.run(testRequest({ traceId: 'trace-other' }), testOutcome());
      await harness.close();
      expect(await database.count(requestLogs)).toBe(1);
    });

    test('a DATABASE_URL that names another database than the service: written on the main thread', async () => {
      // No settings, no DATABASE_URL: the default sqlite:./data/gateway.db is not the test database.
      const { database, harness, finallyStage, queue } = await setUp(t, 'none');
      expect(queue.writerInfo).toMatchObject({ mode: 'main-thread', workerRunning: false });
      expect(harness.logger.records.find((r) => r.level === 'warn')?.msg).toBe('request log written on the main thread');
      finallyStage.run(testRequest({ traceId: 'trace-main' }), testOutcome());
      await harness.close();
      expect(await database.count(requestLogs)).toBe(1);
    });
  });
}

describe('which request body is logged', () => {
  test('the bytes while the body is the object parsed from them; the object once a stage replaced it', () => {
    const req = received('t');
    expect(bodyIsRaw(req)).toBe(true);
    const entry = entryFrom(req, testOutcome());
    expect(entry.requestBody).toBe(req.rawBody!);
    expect(entry.requestContentType).toBeNull(); // a JSON body: stored as text
    req.body = { model: 'other' };
    expect(entryFrom(req, testOutcome()).requestBody).toEqual({ model: 'other' });
  });
});
