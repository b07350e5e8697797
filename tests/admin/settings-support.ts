/**
 * Support of the settings suites: an in-process gateway on a fresh database of one dialect (a SQLite file or a
 * MariaDB database), JSON calls, and the people of a test (workspaces, users, memberships and their keys written
 * to the identity and api-keys tables through the gateway's own database service).
 */
import { afterAll, beforeAll } from 'bun:test';
import { apiKeys, hashSecret } from '@gateway/admin-api-keys';
import { organisations, users, workspaceMembers, workspaces } from '@gateway/admin-identity';
import type { Gateway } from '@gateway/server';
import { type ApiKeyType, asc, type Database, Services } from '@gateway/sdk';
import { createE2EDatabase, type E2EDatabase, type E2EDialect } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';

export { TEST_ADMIN_KEY };

export type Json = Record<string, unknown>;

export interface Answer<T = Json> {
  status: number;
  body: T;
}

export interface SettingsGateway {
  gateway: Gateway;
  database: Database;
  organisationId: string;
  /** The bootstrap workspace (slug `default`). */
  workspaceId: string;
  call<T = Json>(method: string, path: string, body?: unknown, key?: string, headers?: Record<string, string>): Promise<Answer<T>>;
  addWorkspace(slug: string): Promise<string>;
  /** A user with an organisation role and workspace roles; resolves to the user id. */
  addUser(email: string, role: 'owner' | 'admin' | 'member', memberships?: Record<string, 'admin' | 'manager' | 'member'>): Promise<string>;
  /** A key written to the api_keys table; resolves to its id and secret. */
  addKey(opts: { type: ApiKeyType; workspaceId: string | null; userId?: string | null; scopes: string[] }): Promise<{ id: string; secret: string }>;
}

async function start(dialect: E2EDialect, db: E2EDatabase, env: Record<string, string>): Promise<SettingsGateway> {
  const gateway = await startInProcessGateway({ DATABASE_URL: db.url, ...env });
  const database = gateway.service(Services.database);
  const [org] = await database.select(organisations, { orderBy: (c) => [asc(c.created_at)], limit: 1, fresh: true });
  const [ws] = await database.select(workspaces, { orderBy: (c) => [asc(c.created_at)], limit: 1, fresh: true });
  if (!org || !ws) throw new Error(`the ${dialect} gateway did not bootstrap an organisation`);
  const organisationId = org.id;
  return {
    gateway,
    database,
    organisationId,
    workspaceId: ws.id,
    async call<T>(method: string, path: string, body?: unknown, key = TEST_ADMIN_KEY, extra: Record<string, string> = {}): Promise<Answer<T>> {
      const headers: Record<string, string> = { 'x-gateway-api-key': key, ...extra };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await gateway.handle(
        new Request(`http://gateway.test/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }),
      );
      const text = await response.text();
      return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
    },
    async addWorkspace(slug) {
      const id = crypto.randomUUID();
      await database.insert(workspaces, { id, organisation_id: organisationId, name: slug, slug });
      return id;
    },
    async addUser(email, role, memberships = {}) {
      const id = crypto.randomUUID();
      await database.insert(users, { id, organisation_id: organisationId, email, role });
      for (const [workspaceId, workspaceRole] of Object.entries(memberships))
        await database.insert(workspaceMembers, { organisation_id: organisationId, workspace_id: workspaceId, user_id: id, role: workspaceRole });
      return id;
    },
    async addKey({ type, workspaceId, userId = null, scopes }) {
      const id = crypto.randomUUID();
      const secret = `gw-settings-test-${crypto.randomUUID()}`;
      await database.insert(apiKeys, {
        id,
        organisation_id: organisationId,
        workspace_id: workspaceId,
        user_id: userId,
        name: `${type} key`,
        type,
        hash: hashSecret(secret),
        prefix_hint: secret.slice(0, 8),
        scopes,
      });
      return { id, secret };
    },
  };
}

/** beforeAll / afterAll of a describe block: a gateway on a fresh database of the dialect. */
export function useSettingsGateway(dialect: E2EDialect, env: Record<string, string> = {}): () => SettingsGateway {
  let db: E2EDatabase | undefined;
  let gw: SettingsGateway | undefined;
  beforeAll(async () => {
    db = await createE2EDatabase(dialect);
    gw = await start(dialect, db, env);
  }, 30_000);
  afterAll(async () => {
    await gw?.gateway.close();
    await db?.drop();
  }, 30_000);
  return () => {
    if (!gw) throw new Error(`the ${dialect} gateway did not start`);
    return gw;
  };
}

/**
 * beforeAll / afterAll of a describe block: two gateways (two processes of a deployment) on one fresh MariaDB
 * database and the shared Redis. SQLite is left out: one SQLite file is not shared by several gateways.
 */
export function useGatewayPair(): () => { a: Gateway; b: Gateway } {
  let db: E2EDatabase | undefined;
  let pair: { a: Gateway; b: Gateway } | undefined;
  beforeAll(async () => {
    db = await createE2EDatabase('mysql');
    // Other suites on the same Redis may hear the announcements: they name this run's (random) organisation only.
    const env = { DATABASE_URL: db.url, REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' };
    pair = { a: await startInProcessGateway(env), b: await startInProcessGateway(env) };
  }, 30_000);
  afterAll(async () => {
    await pair?.a.close();
    await pair?.b.close();
    await db?.drop();
  }, 30_000);
  return () => {
    if (!pair) throw new Error('the two gateways did not start');
    return pair;
  };
}
