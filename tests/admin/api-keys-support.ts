/**
 * Support of the /api-keys suites: an in-process gateway on a given database with the api-keys plugin's clock and
 * scheduler at hand (the timer off: tests call tick()), JSON calls, and people (users and memberships written to
 * the identity tables).
 */
import { type ApiKeyClock, ApiKeyServices, type RotationScheduler } from '@gateway/admin-api-keys';
import { organisations, users, workspaceMembers, workspaces } from '@gateway/admin-identity';
import type { Gateway } from '@gateway/server';
import { asc, type Database, Services } from '@gateway/sdk';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';

export { TEST_ADMIN_KEY };

export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

export type Json = Record<string, unknown>;

export interface KeysGateway {
  gateway: Gateway;
  database: Database;
  clock: ApiKeyClock;
  rotation: RotationScheduler;
  organisationId: string;
  /** The bootstrap workspace. */
  workspaceId: string;
  call<T = Json>(method: string, path: string, body?: unknown, key?: string): Promise<Answer<T>>;
  close(): Promise<void>;
}

export const ENCRYPTION_KEY = 'api-keys-test-encryption-key-0123456789';

export async function startKeysGateway(databaseUrl: string, env: Record<string, string> = {}): Promise<KeysGateway> {
  const gateway = await startInProcessGateway({
    DATABASE_URL: databaseUrl,
    API_KEY_SCHEDULER_INTERVAL_MS: '0',
    GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
    ...env,
  });
  const database = gateway.service(Services.database);
  const rotation = gateway.service(ApiKeyServices.rotation);
  const [org] = await database.select(organisations, { orderBy: (c) => [asc(c.created_at)], limit: 1, fresh: true });
  const [ws] = await database.select(workspaces, { orderBy: (c) => [asc(c.created_at)], limit: 1, fresh: true });
  if (!org || !ws) throw new Error('the gateway did not bootstrap an organisation');
  return {
    gateway,
    database,
    clock: rotation.clock,
    rotation,
    organisationId: org.id,
    workspaceId: ws.id,
    async call<T>(method: string, path: string, body?: unknown, key = TEST_ADMIN_KEY): Promise<Answer<T>> {
      const headers: Record<string, string> = { 'x-gateway-api-key': key };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await gateway.handle(
        new Request(`http://gateway.test/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }),
      );
      const text = await response.text();
      return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
    },
    close: () => gateway.close(),
  };
}

/** A workspace of the organisation, written to the identity table. */
export async function addWorkspace(database: Database, organisationId: string, slug: string): Promise<string> {
  const id = crypto.randomUUID();
  await database.insert(workspaces, { id, organisation_id: organisationId, name: slug, slug });
  return id;
}

/** A user with an organisation role and workspace roles. */
export async function addUser(
  database: Database,
  organisationId: string,
  email: string,
  role: 'owner' | 'admin' | 'member',
  memberships: { workspaceId: string; role: 'admin' | 'manager' | 'member' }[] = [],
): Promise<string> {
  const id = crypto.randomUUID();
  await database.insert(users, { id, organisation_id: organisationId, email, role });
  for (const m of memberships)
    await database.insert(workspaceMembers, { organisation_id: organisationId, workspace_id: m.workspaceId, user_id: id, role: m.role });
  return id;
}

/** Whether a secret authenticates: a gateway call that needs nothing but the key (GET /api-keys/:id is not enough
 * for keys without api_keys.read), so ask for a route every key reaches and look at 401 versus anything else. */
export async function authenticates(k: KeysGateway, secret: string): Promise<boolean> {
  const { status } = await k.call('GET', '/api-keys/00000000-0000-0000-0000-000000000000', undefined, secret);
  return status !== 401;
}
