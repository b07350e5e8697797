/**
 * The organisation the RBAC matrix runs in: a whole in-process gateway on a fresh database (SQLite file or MariaDB),
 * workspaces A and B, the people of PEOPLE with their roles, and one key per principal — all made through the
 * administration API (POST /workspaces, /users, /workspaces/:id/users, /api-keys), except the organisation-service
 * key without scopes, which the API cannot make (a key needs at least one scope) and is written to the table.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiKeys, hashSecret } from '@gateway/admin-api-keys';
import { type Database, Services } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { createE2EDatabase, type E2EDatabase, type E2EDialect } from '../../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../../helpers/in-process.ts';
import { isPerson, PEOPLE, type PersonName, PRINCIPALS, type PrincipalName } from './principals.ts';

export const ENCRYPTION_KEY = 'rbac-matrix-encryption-key-0123456789abcdef';

/** A JSON answer, loosely typed: fixtures read the fields they need. */
export type Json = Record<string, unknown>;

export interface Answer {
  status: number;
  body: Json | null;
}

export interface Workspace {
  id: string;
  slug: string;
}

export interface Key {
  id: string;
  secret: string;
}

export interface World {
  dialect: E2EDialect;
  gateway: Gateway;
  database: Database;
  organisationId: string;
  A: Workspace;
  B: Workspace;
  /** The user ids of the people. */
  users: Readonly<Record<PersonName, string>>;
  /** Each principal's key. */
  keys: Readonly<Record<PrincipalName, Key>>;
  /** A call with any key (TEST_ADMIN_KEY, the bootstrap organisation-service `*` key, by default). */
  call(method: string, path: string, body?: unknown, key?: string): Promise<Answer>;
  /** A set-up call with the bootstrap key that must succeed (2xx); its body. */
  admin(method: string, path: string, body?: unknown): Promise<Json>;
  /** A resource made once per world and shared by every principal's call (read-only routes). */
  shared<T>(name: string, make: () => Promise<T>): Promise<T>;
  /** A name no other fixture uses: `prefix-n`. */
  unique(prefix: string): string;
  /** Runs `fn` when the world closes, before the gateway stops (a fixture's own server). */
  cleanup(fn: () => Promise<unknown>): void;
  close(): Promise<void>;
}

export async function call(gateway: Gateway, method: string, path: string, body: unknown, key: string | null): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (key !== null) headers['x-gateway-api-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await gateway.handle(
    new Request(`http://gateway.test/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }),
  );
  const text = await response.text();
  let parsed: Json | null = null;
  if (text) {
    try {
      parsed = JSON.parse(text) as Json;
    } catch {
      parsed = { text };
    }
  }
  return { status: response.status, body: parsed };
}

export async function createWorld(dialect: E2EDialect): Promise<World> {
  const db: E2EDatabase = await createE2EDatabase(dialect);
  let gateway: Gateway | undefined;
  try {
    gateway = await startInProcessGateway({
      DATABASE_URL: db.url,
      GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
      // No scheduled key work in the background: nothing rotates or expires while the matrix runs.
      API_KEY_SCHEDULER_INTERVAL_MS: '0',
      // The log export rows write their files outside the repository.
      GATEWAY_EXPORTS_DIR: join(tmpdir(), `gw-rbac-exports-${process.pid}`),
      // Files kept by the gateway (the job rows of the data plane), outside the repository too.
      FILES_DIR: join(tmpdir(), `gw-rbac-files-${process.pid}`),
    });
    return await populate(dialect, gateway, db);
  } catch (error) {
    await gateway?.close();
    await db.drop();
    throw error;
  }
}

async function populate(dialect: E2EDialect, gateway: Gateway, db: E2EDatabase): Promise<World> {
  const database = gateway.service(Services.database);
  const bootstrap = await database.findOne(apiKeys, 'hash', hashSecret(TEST_ADMIN_KEY));
  if (!bootstrap) throw new Error('the gateway made no bootstrap key');
  const organisationId = bootstrap.organisation_id;

  const callWith = (method: string, path: string, body?: unknown, key: string = TEST_ADMIN_KEY) => call(gateway, method, path, body, key);
  const admin = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const answer = await callWith(method, path, body);
    if (answer.status < 200 || answer.status > 299)
      throw new Error(`set-up call ${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return answer.body ?? {};
  };

  const workspace = async (slug: string): Promise<Workspace> => {
    const w = await admin('POST', '/workspaces', { name: `RBAC ${slug}`, slug });
    return { id: String(w.id), slug };
  };
  const [A, B] = await Promise.all([workspace('rbac-a'), workspace('rbac-b')]);
  const ws = { A, B };

  // The owner first: only the first owner may be made by an admin (the bootstrap key).
  const users = {} as Record<PersonName, string>;
  const people = Object.keys(PEOPLE) as PersonName[];
  for (const name of people) {
    const u = await admin('POST', '/users', { email: `${name.toLowerCase()}@rbac.test`, name, role: PEOPLE[name].role });
    users[name] = String(u.id);
  }
  await Promise.all(
    people.map(async (name) => {
      const { workspace: w, workspaceRole } = PEOPLE[name];
      if (workspaceRole) await admin('POST', `/workspaces/${ws[w].id}/users`, { user_id: users[name], role: workspaceRole });
    }),
  );

  const createKey = async (body: Json): Promise<Key> => {
    const k = await admin('POST', '/api-keys', { scopes: ['*'], ...body });
    return { id: String(k.id), secret: String(k.key) };
  };
  const keys = {} as Record<PrincipalName, Key>;
  await Promise.all(
    PRINCIPALS.map(async (who) => {
      if (isPerson(who)) {
        const person = PEOPLE[who];
        keys[who] = await createKey({ name: `rbac ${who}`, type: 'workspace-user', workspace_id: ws[person.workspace].id, user_id: users[who] });
      } else if (who === 'orgService') keys[who] = await createKey({ name: 'rbac organisation service', type: 'organisation-service' });
      else if (who === 'serviceA' || who === 'serviceB')
        keys[who] = await createKey({ name: `rbac ${who}`, type: 'workspace-service', workspace_id: (who === 'serviceA' ? A : B).id });
      else {
        const secret = `rbac-no-scope-${crypto.randomUUID()}`;
        const id = crypto.randomUUID();
        await database.insert(apiKeys, {
          id,
          organisation_id: organisationId,
          workspace_id: null,
          user_id: null,
          name: 'rbac organisation service without scopes',
          type: 'organisation-service',
          hash: hashSecret(secret),
          prefix_hint: secret.slice(0, 4),
          scopes: [],
        });
        keys[who] = { id, secret };
      }
    }),
  );

  const memo = new Map<string, Promise<unknown>>();
  const cleanups: (() => Promise<unknown>)[] = [];
  let counter = 0;
  return {
    dialect,
    gateway,
    database,
    organisationId,
    A,
    B,
    users,
    keys,
    call: callWith,
    admin,
    shared<T>(name: string, make: () => Promise<T>): Promise<T> {
      let value = memo.get(name) as Promise<T> | undefined;
      if (!value) memo.set(name, (value = make()));
      return value;
    },
    unique: (prefix) => `${prefix}-${++counter}`,
    cleanup: (fn) => void cleanups.push(fn),
    async close() {
      for (const fn of cleanups.splice(0)) await fn().catch(() => {});
      await gateway.close();
      await db.drop();
    },
  };
}
