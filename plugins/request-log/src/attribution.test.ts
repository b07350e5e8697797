// Who and what a call was (migration 0005): the key's user, the stored provider named, the saved config and the
// prompt. From the request to the entry, across the wire to the writer thread, into the row and the table; the
// migration adds the columns to a table 0004 left (old rows read NULL; the MySQL statements can run again).
import { describe, expect, test } from 'bun:test';
import { DIALECTS, useTestDatabase } from '@gateway/db/testing';
import { type GatewayConfig, markSavedConfig } from '@gateway/sdk';
import { buildGatewayRequest, type GatewayRequestInit } from '@gateway/sdk/testing';
import { entryFrom, type LogEntry } from './entry.ts';
import { toRow } from './row.ts';
import { requestLogMigrations, requestLogs } from './table.ts';
import { testOutcome } from './test-request.ts';
import { fromWirePart, toWirePart } from './wire.ts';

const USER = '7a0c3a7e-0000-4000-8000-000000000001';
const CONFIG = '7a0c3a7e-0000-4000-8000-0000000000c0';

function savedConfig(): GatewayConfig {
  const config: GatewayConfig = { provider: 'openai' };
  markSavedConfig(config, CONFIG);
  return config;
}

/** Across the wire form and back (the queue gives each entry a row id; the wire carries it beside the rows). */
const wired = (entry: LogEntry): LogEntry =>
  fromWirePart(toWirePart([{ ...entry, rowId: crypto.randomUUID() }] as Parameters<typeof toWirePart>[0], 0, 1, 1024, () => {})).entries[0]!;

const testRequest = (init: GatewayRequestInit) => buildGatewayRequest({ traceId: 'trace-1', parsedBody: undefined, ...init });

const attribution = (row: Record<string, unknown>) => ({
  user_id: row.user_id,
  provider: row.provider,
  provider_slug: row.provider_slug,
  config_id: row.config_id,
  prompt_id: row.prompt_id,
  prompt_version: row.prompt_version,
});

describe('attribution columns from the request', () => {
  test("a user's key, a stored provider, a saved config and a prompt: each recorded, on the row and across the wire", () => {
    const req = testRequest({ caller: { userId: USER, keyType: 'workspace-user' }, config: savedConfig() });
    req.prompt = { id: 'prompt-1', version: 3 };
    const outcome = testOutcome({
      attempts: [
        { index: 'config.targets[0]', providerId: 'openai', retry: 0, status: 500, latencyMs: 1, providerSlug: 'first-openai' },
        { index: 'config.targets[1]', providerId: 'openai', retry: 0, status: 200, latencyMs: 1, providerSlug: 'team-openai', integrationId: 'i-1' },
      ],
    });
    const entry = entryFrom(req, outcome);
    const want = { user_id: USER, provider: 'openai', provider_slug: 'team-openai', config_id: CONFIG, prompt_id: 'prompt-1', prompt_version: 3 };
    expect(attribution(toRow(entry, 1024))).toEqual(want);
    expect(attribution(toRow(wired(entry), 1024))).toEqual(want);
  });

  test('a service key, a provider type and an inline config: all null but the provider type', () => {
    const entry = entryFrom(testRequest({ caller: { userId: null }, config: { provider: 'openai' } }), testOutcome());
    const want = { user_id: null, provider: 'openai', provider_slug: null, config_id: null, prompt_id: null, prompt_version: null };
    expect(attribution(toRow(entry, 1024))).toEqual(want);
    expect(attribution(toRow(wired(entry), 1024))).toEqual(want);
  });

  test('over-long values are cut to their columns, a fractional version rounded', () => {
    const req = testRequest({ caller: { userId: USER } });
    req.prompt = { id: 'p'.repeat(100), version: 2.4 };
    const row = toRow(entryFrom(req, testOutcome()), 1024);
    expect([row.prompt_id, row.prompt_version]).toEqual(['p'.repeat(64), 2]);
  });
});

for (const dialect of DIALECTS) {
  describe(`request-log attribution columns [${dialect}]`, () => {
    const t = useTestDatabase(dialect);

    test('0005 adds the columns to a table made by 0001–0004; old rows read NULL; re-runnable; new rows round-trip', async () => {
      const { database } = await t.fresh();
      await database.migrate(requestLogMigrations.slice(0, 4));
      const sql = 'INSERT INTO request_logs (id, trace_id, endpoint, method, path, status, latency_ms, retry_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';
      const values = [crypto.randomUUID(), 'trace-old', 'chatComplete', 'POST', '/chat/completions', 200, 1, 0, Date.now()];
      if (database.dialect === 'sqlite') database.db.$client.run(sql, values);
      else await database.db.$client.query(sql, values);
      expect(await database.migrate(requestLogMigrations)).toEqual(['request-log/0005-attribution']);
      const old = await database.findOne(requestLogs, 'trace_id', 'trace-old');
      expect(attribution(old as Record<string, unknown>)).toEqual({
        user_id: null,
        provider: null,
        provider_slug: null,
        config_id: null,
        prompt_id: null,
        prompt_version: null,
      });
      if (database.dialect === 'mysql') for (const statement of requestLogMigrations[4]!.statements!.mysql) await database.db.$client.query(statement);

      const req = testRequest({ traceId: 'trace-new', caller: { userId: USER }, config: savedConfig() });
      req.prompt = { id: 'prompt-9', version: 12 };
      const outcome = testOutcome({ attempts: [{ index: 'config', providerId: 'anthropic', retry: 0, status: 200, latencyMs: 1, providerSlug: 'claude' }] });
      await database.insert(requestLogs, toRow(entryFrom(req, { ...outcome, providerId: 'anthropic' }), 1024));
      const row = await database.findOne(requestLogs, 'trace_id', 'trace-new');
      expect(attribution(row as Record<string, unknown>)).toEqual({
        user_id: USER,
        provider: 'anthropic',
        provider_slug: 'claude',
        config_id: CONFIG,
        prompt_id: 'prompt-9',
        prompt_version: 12,
      });
    });
  });
}
