/**
 * Test support for saved configs and guardrails: workspaces and API keys written straight into the gateway's
 * database (the routes that make them belong to other plugins), and administration calls over HTTP or in-process.
 */
import { apiKeys, hashSecret } from '@gateway/admin-api-keys';
import { organisations, workspaces } from '@gateway/admin-identity';
import { and, type ApiKeyType, type Database, eq } from '@gateway/sdk';

export async function organisationId(database: Database): Promise<string> {
  const [org] = await database.select(organisations, { limit: 1, fresh: true });
  if (!org) throw new Error('no organisation: the gateway did not bootstrap');
  return org.id;
}

/** The bootstrap organisation's default workspace. */
export async function defaultWorkspaceId(database: Database, organisation: string): Promise<string> {
  const [ws] = await database.select(workspaces, { where: (c) => and(eq(c.organisation_id, organisation), eq(c.slug, 'default')), limit: 1, fresh: true });
  if (!ws) throw new Error('no default workspace');
  return ws.id;
}

export async function addWorkspace(database: Database, organisation: string, slug: string): Promise<string> {
  const id = crypto.randomUUID();
  await database.insert(workspaces, { id, organisation_id: organisation, name: slug, slug });
  return id;
}

export const ALL_SAVED_SCOPES = ['completions.write', 'configs.read', 'configs.write', 'configs.delete', 'guardrails.read', 'guardrails.write', 'guardrails.delete'];

/** A new active key; resolves to its secret. */
export async function addKey(
  database: Database,
  o: { organisationId: string; workspaceId: string | null; type?: ApiKeyType; scopes?: string[]; userId?: string | null },
): Promise<string> {
  const secret = `gw-test-${crypto.randomUUID()}`;
  await database.insert(apiKeys, {
    organisation_id: o.organisationId,
    workspace_id: o.workspaceId,
    user_id: o.userId ?? null,
    name: 'test key',
    type: o.type ?? 'workspace-service',
    hash: hashSecret(secret),
    prefix_hint: secret.slice(0, 8),
    scopes: o.scopes ?? ALL_SAVED_SCOPES,
  });
  return secret;
}

export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

type Handle = (request: Request) => Promise<Response>;

/** Calls `/v1<path>` with x-gateway-api-key `key`, on a base URL or an in-process gateway's handle(). */
export function caller(target: string | Handle, key: string) {
  const send: Handle = typeof target === 'string' ? (r) => fetch(r) : target;
  const base = typeof target === 'string' ? target : 'http://gateway.test';
  return async <T = Record<string, unknown>>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> => {
    const response = await send(
      new Request(`${base}/v1${path}`, {
        method,
        headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : null) as T, headers: response.headers };
  };
}

/** A chat completion through the gateway with these extra headers (x-gateway-config, …). */
export function chat(target: string | Handle, key: string, content: string, headers: Record<string, string>) {
  return caller(target, key)<Record<string, unknown>>('POST', '/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }, headers);
}
