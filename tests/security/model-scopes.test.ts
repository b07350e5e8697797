/**
 * Issue 13, item 3: scopes apply to model calls. The attacker holds a valid key of the organisation scoped for
 * something else (`logs.read`), or for one kind of model call but not another. The workspace has an integration whose
 * provider key the gateway spends on every call through `@slug`. Every data-plane route must refuse the key with 403
 * in the INTERFACE.md shape, naming the scope it needs, before anything reaches the provider server. Keys made before
 * the scopes applied keep what `completions.write` stood for ("gateway calls"), and nothing more.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { apiKeyMigrations, apiKeys, hashSecret, SCOPE_CATALOGUE } from '@gateway/admin-api-keys';
import { createDatabase } from '@gateway/db';
import { GATEWAY_CALL_SCOPES } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { ANTHROPIC_SHAPED_KINDS, DATA_PLANE_CALLS, type DataPlaneCall, dataPlaneRequest } from '../admin/rbac/data-plane.ts';
import { createE2EDatabase, E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { type AnthropicTestServer, startAnthropicServer } from '../providers/anthropic/server.ts';

const STORED_KEY = 'sk-stored-workspace-key-0123456789';

type ErrorBody = { type?: string; error: { message: string; type: string; code?: string | null; param?: string | null } };

/** Every data-plane call, plus passthrough with the methods the matrix does not send (PUT, DELETE). */
const ATTACKS: readonly DataPlaneCall[] = [
  ...DATA_PLANE_CALLS,
  { key: 'PUT /files/file-1 [passthrough]', kind: 'proxy', method: 'PUT', path: '/files/file-1', body: () => ({ purpose: 'batch' }) },
  { key: 'DELETE /files/file-1 [passthrough]', kind: 'proxy', method: 'DELETE', path: '/files/file-1' },
  { key: 'POST /fine_tuning/jobs [passthrough]', kind: 'proxy', method: 'POST', path: '/fine_tuning/jobs', body: () => ({ model: 'gpt-4o-mini', training_file: 'file-1' }) },
];

/** The scope each kind needs, as the 403 must name it. */
const NEEDED: Record<DataPlaneCall['kind'], string> = {
  chatComplete: 'completions.write',
  complete: 'completions.write',
  embed: 'embeddings.write',
  moderate: 'moderations.write',
  messages: 'completions.write or proxy.write',
  countTokens: 'completions.write or proxy.write',
  responses: 'completions.write or proxy.write',
  listModels: 'models.read or completions.write',
  proxy: 'proxy.write',
};

interface Stack {
  gw: Gateway;
  mock: OpenAIMock;
  /** Serves the Messages kinds natively (a translated count_tokens would be an estimate that reaches no provider). */
  anthropic: AnthropicTestServer;
  /** Forgets what both provider servers received. */
  reset(): void;
  /** The secret of a key made with the bootstrap key, through the administration API. */
  key(type: 'workspace-service' | 'organisation-service', scopes: string[]): Promise<string>;
  /** The id of a key `key` made. */
  idOf(secret: string): string;
  admin(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
  send(call: DataPlaneCall, key: string): Promise<{ status: number; body: ErrorBody }>;
}

test('every scope a gateway route needs is in the scope catalogue, so that a key can be given it', () => {
  const needed = [...new Set(Object.values(GATEWAY_CALL_SCOPES).flat())];
  expect(needed.filter((scope) => !SCOPE_CATALOGUE.includes(scope))).toEqual([]);
});

for (const dialect of E2E_DIALECTS) {
  describe(`scopes on model calls [${dialect}]`, () => {
    let stack: Stack;
    const cleanups: (() => Promise<unknown>)[] = [];

    beforeAll(async () => {
      const db = await createE2EDatabase(dialect);
      cleanups.push(() => db.drop());
      // The provider server answers only the stored key: a call that reaches it spends the workspace's credential.
      const mock = await startOpenAIMock({ apiKey: STORED_KEY });
      cleanups.push(() => mock.stop());
      const anthropic = startAnthropicServer({ apiKey: STORED_KEY });
      cleanups.push(async () => anthropic.stop());
      const gw = await startInProcessGateway({ DATABASE_URL: db.url, API_KEY_SCHEDULER_INTERVAL_MS: '0' });
      cleanups.push(() => gw.close());
      const admin = async (method: string, path: string, body?: unknown) => {
        const response = await gw.handle(
          new Request(`http://gateway.test/v1${path}`, {
            method,
            headers: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          }),
        );
        const json = (await response.json()) as Record<string, unknown>;
        if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
        return json;
      };
      const workspaces = (await admin('GET', '/workspaces')).data as { id: string; slug: string }[];
      const workspace = workspaces.find((w) => w.slug === 'default')?.id;
      await admin('POST', '/integrations', {
        name: 'Team OpenAI',
        slug: 'team-openai',
        ai_provider_id: 'openai',
        key: STORED_KEY,
        configurations: { custom_host: mock.url },
        workspaces: [{ id: workspace, enabled: true }],
      });
      await admin('POST', '/integrations', {
        name: 'Team Anthropic',
        slug: 'team-anthropic',
        ai_provider_id: 'anthropic',
        key: STORED_KEY,
        configurations: { custom_host: anthropic.baseUrl },
        workspaces: [{ id: workspace, enabled: true }],
      });
      const ids = new Map<string, string>();
      stack = {
        gw,
        mock,
        anthropic,
        admin,
        reset() {
          mock.reset();
          anthropic.requests.length = 0;
        },
        async key(type, scopes) {
          const made = await admin('POST', '/api-keys', { name: `attacker ${scopes.join(' ')}`, type, ...(type === 'workspace-service' ? { workspace_id: workspace } : {}), scopes });
          ids.set(String(made.key), String(made.id));
          return String(made.key);
        },
        idOf: (secret) => ids.get(secret) ?? '',
        async send(call, key) {
          const response = await gw.handle(dataPlaneRequest(call, key, call.upstream === 'anthropic' ? '@team-anthropic' : '@team-openai'));
          const text = await response.text();
          return { status: response.status, body: (text ? JSON.parse(text) : {}) as ErrorBody };
        },
      };
    }, 60_000);

    afterAll(async () => {
      while (cleanups.length) await cleanups.pop()!().catch(() => {});
    });

    /**
     * Sends every attack with `key`; the answers that are not the 403 naming the call's scope (in the INTERFACE.md
     * shape, or Anthropic's on its routes), and what reached a provider server.
     */
    async function attack(key: string, calls: readonly DataPlaneCall[]): Promise<{ notRefused: string[]; reachedProvider: string[] }> {
      stack.reset();
      const notRefused: string[] = [];
      for (const call of calls) {
        const { status, body } = await stack.send(call, key);
        const shaped = ANTHROPIC_SHAPED_KINDS.has(call.kind) ? body.type === 'error' : body.error?.code === 'forbidden' && body.error.param === null;
        const refused = status === 403 && shaped && body.error?.type === 'permission_error' && body.error.message.includes(`needs the ${NEEDED[call.kind]} scope`);
        if (!refused) notRefused.push(`${call.key}: ${status} ${JSON.stringify(body).slice(0, 200)}`);
      }
      const reached = [...stack.mock.requests, ...stack.anthropic.requests];
      return { notRefused, reachedProvider: reached.map((r) => `${r.method} ${r.path} (${r.headers.authorization ?? r.headers['x-api-key']})`) };
    }

    test('a key scoped only logs.read calls every data-plane route: each is 403 and the provider server receives nothing', async () => {
      const key = await stack.key('workspace-service', ['logs.read']);
      expect(await attack(key, ATTACKS)).toEqual({ notRefused: [], reachedProvider: [] });
    });

    test('an organisation-service key scoped only logs.read is refused the same way', async () => {
      const key = await stack.key('organisation-service', ['logs.read']);
      expect(await attack(key, ATTACKS)).toEqual({ notRefused: [], reachedProvider: [] });
    });

    test('a key for chat cannot spend the credential on embeddings, moderations or passthrough', async () => {
      const key = await stack.key('workspace-service', ['completions.write']);
      const others = ATTACKS.filter((call) => call.kind === 'embed' || call.kind === 'moderate' || call.kind === 'proxy');
      expect(await attack(key, others)).toEqual({ notRefused: [], reachedProvider: [] });
    });

    test('a key for passthrough cannot call chat, completions, embeddings or moderations', async () => {
      const key = await stack.key('workspace-service', ['proxy.write']);
      // Kinds that were passthrough paths (the Responses API) keep admitting proxy.write: not among these.
      const firstClass = ATTACKS.filter((call) => call.kind !== 'listModels' && !GATEWAY_CALL_SCOPES[call.kind].includes('proxy.write'));
      expect(await attack(key, firstClass)).toEqual({ notRefused: [], reachedProvider: [] });
    });

    test('keys with the scope make the same calls with the stored key (the refusals above are the scope, not the call)', async () => {
      const keys = {
        workspace: await stack.key('workspace-service', ['completions.write', 'embeddings.write', 'moderations.write', 'proxy.write']),
        // Organisation-service keys keep working as documented: with the scopes, in the organisation's first workspace.
        organisation: await stack.key('organisation-service', ['completions.write', 'embeddings.write', 'moderations.write', 'proxy.write']),
      };
      const toAnthropic = DATA_PLANE_CALLS.filter((call) => call.upstream === 'anthropic');
      for (const [who, key] of Object.entries(keys)) {
        stack.reset();
        const statuses = [];
        for (const call of DATA_PLANE_CALLS) statuses.push(`${who} ${call.key}: ${(await stack.send(call, key)).status}`);
        expect(statuses).toEqual(DATA_PLANE_CALLS.map((call) => `${who} ${call.key}: 200`));
        // Each call reached its provider server once, with the stored key (as a bearer token, or Anthropic's x-api-key).
        expect(stack.mock.requests.map((r) => r.headers.authorization)).toEqual(DATA_PLANE_CALLS.filter((call) => call.upstream !== 'anthropic').map(() => `Bearer ${STORED_KEY}`));
        expect(stack.anthropic.requests.map((r) => r.headers['x-api-key'])).toEqual(toAnthropic.map(() => STORED_KEY));
      }
    });

    test('a scope change applies to the next call: removing completions.write from a key refuses it at once', async () => {
      const key = await stack.key('workspace-service', ['completions.write', 'logs.read']);
      const chat = DATA_PLANE_CALLS.find((call) => call.kind === 'chatComplete') as DataPlaneCall;
      expect((await stack.send(chat, key)).status).toBe(200);
      await stack.admin('PUT', `/api-keys/${stack.idOf(key)}`, { scopes: ['logs.read'] });
      expect(await attack(key, [chat])).toEqual({ notRefused: [], reachedProvider: [] });
    });
  });

  describe(`keys made before scopes applied to model calls [${dialect}]`, () => {
    test('the upgrade gives keys with completions.write every model-call scope, and nothing to keys without it', async () => {
      const e2e = await createE2EDatabase(dialect);
      const database = await createDatabase(e2e.url);
      try {
        // The table as it was, with keys as they were made: before this migration existed.
        const [before] = apiKeyMigrations;
        await database.migrate([before!]);
        const old = {
          gateway: ['completions.write'],
          gatewayAndLogs: ['logs.read', 'completions.write'],
          partlyThere: ['completions.write', 'proxy.write'],
          logsOnly: ['logs.read'],
          everything: ['*'],
        };
        for (const [name, scopes] of Object.entries(old))
          await database.insert(apiKeys, {
            id: crypto.randomUUID(),
            organisation_id: crypto.randomUUID(),
            workspace_id: null,
            user_id: null,
            name,
            type: 'organisation-service',
            hash: hashSecret(`secret-${name}`),
            prefix_hint: 'gw-x',
            scopes,
          });

        await database.migrate(apiKeyMigrations);
        const rows = await database.select(apiKeys);
        const after = Object.fromEntries(rows.map((r) => [r.name, r.scopes]));
        const split = ['embeddings.write', 'moderations.write', 'proxy.write'];
        expect(after).toEqual({
          gateway: ['completions.write', ...split],
          gatewayAndLogs: ['logs.read', 'completions.write', ...split],
          partlyThere: ['completions.write', 'proxy.write', 'embeddings.write', 'moderations.write'],
          logsOnly: ['logs.read'],
          everything: ['*'],
        });
      } finally {
        await database.close();
        await e2e.drop();
      }
    });
  });
}
