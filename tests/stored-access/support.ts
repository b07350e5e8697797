/**
 * What the stored-access suites share: a gateway in this process on a fresh database of either dialect (SQLite file
 * or a new MariaDB database), the local OpenAI mock, and small helpers for administration calls and chat calls.
 */
import { afterAll, beforeAll } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { createE2EDatabase, type E2EDatabase, type E2EDialect } from '../helpers/e2e-database.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

export { TEST_ADMIN_KEY };
export const ENCRYPTION_KEY = 'stored-access-test-encryption-key';

export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

export interface Stack {
  gw: Gateway;
  mock: OpenAIMock;
  db: E2EDatabase;
  /** An administration call with a key (the bootstrap key by default). */
  admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown, key?: string): Promise<Answer<T>>;
  /** A chat completion with these headers (the gateway key is the bootstrap key unless given). */
  chat(headers: Record<string, string>, body?: Record<string, unknown>): Promise<Answer>;
  /** The default workspace's id. */
  defaultWorkspace: string;
}

/** Starts the stack in beforeAll and stops it in afterAll; `get()` returns it inside tests. */
export function useStack(dialect: E2EDialect, env: Record<string, string> = {}): () => Stack {
  let stack: Stack | undefined;
  beforeAll(async () => {
    const db = await createE2EDatabase(dialect);
    const mock = await startOpenAIMock({ apiKey: null });
    const gw = await startInProcessGateway({ DATABASE_URL: db.url, GATEWAY_ENCRYPTION_KEY: ENCRYPTION_KEY, ...env });
    const call = async <T>(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer<T>> => {
      const res = await gw.handle(
        new Request(`http://gateway/v1${path}`, {
          method,
          headers: { 'content-type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
    };
    const admin = <T>(method: string, path: string, body?: unknown, key = TEST_ADMIN_KEY) => call<T>(method, path, { 'x-gateway-api-key': key }, body);
    const workspaces = await admin<{ data: { id: string; slug: string }[] }>('GET', '/workspaces');
    const defaultWorkspace = workspaces.body.data.find((w) => w.slug === 'default')?.id;
    if (!defaultWorkspace) throw new Error(`no default workspace: ${JSON.stringify(workspaces)}`);
    stack = {
      gw,
      mock,
      db,
      admin,
      chat: (headers, body) =>
        call('POST', '/chat/completions', { 'x-gateway-api-key': TEST_ADMIN_KEY, ...headers }, body ?? { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
      defaultWorkspace,
    };
  });
  afterAll(async () => {
    if (!stack) return;
    await stack.gw.close();
    await stack.mock.stop();
    await stack.db.drop();
  });
  return () => {
    if (!stack) throw new Error('the stack did not start');
    return stack;
  };
}

let counter = 0;
/** A slug no other test of the run uses. */
export function uniqueSlug(base: string): string {
  return `${base}-${process.pid}-${++counter}`;
}

/** A new workspace and a workspace-service key for it (scopes as given). */
export async function workspaceWithKey(s: Stack, scopes: string[] = ['completions.write']): Promise<{ id: string; slug: string; key: string }> {
  const slug = uniqueSlug('ws');
  const ws = await s.admin<{ id: string }>('POST', '/workspaces', { name: `Workspace ${slug}`, slug });
  if (ws.status !== 201) throw new Error(`workspace: ${JSON.stringify(ws)}`);
  const key = await s.admin<{ key: string }>('POST', '/api-keys', { name: `key ${slug}`, type: 'workspace-service', workspace_id: ws.body.id, scopes });
  if (key.status !== 201 && key.status !== 200) throw new Error(`api key: ${JSON.stringify(key)}`);
  return { id: ws.body.id, slug, key: key.body.key };
}

/** The Authorization header the mock received last. */
export function lastAuthorization(mock: OpenAIMock): string | undefined {
  return mock.requests.at(-1)?.headers.authorization;
}
