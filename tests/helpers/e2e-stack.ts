/**
 * The stack of an end-to-end suite: a fresh database of one dialect, the local OpenAI mock, and the real gateway
 * process on that database, plus OpenAI SDK clients pointed at the gateway.
 */
import { afterAll, beforeAll } from 'bun:test';
import OpenAI from 'openai';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { createE2EDatabase, type E2EDatabase, type E2EDialect, freePort } from './e2e-database.ts';
import { type GatewayProcess, startGatewayProcess } from './gateway-process.ts';

export interface E2EStack {
  db: E2EDatabase;
  mock: OpenAIMock;
  gw: GatewayProcess;
  /** The provider key the clients send as `Authorization: Bearer …`. */
  providerKey: string;
  /**
   * An SDK client at the gateway. Default headers: the gateway key, provider `openai` and the mock as custom host;
   * `headers` adds to them, and a `null` value leaves one out.
   */
  client(headers?: Record<string, string | null>): OpenAI;
  /** Headers of a raw call, as `client()` would send them. */
  headers(extra?: Record<string, string | null>): Record<string, string>;
}

export interface StackOptions {
  /** More environment for the gateway process. */
  env?: Record<string, string>;
}

/** Runs and forgets the clean-ups of a list, newest first; never throws. */
async function runCleanups(cleanups: (() => Promise<unknown>)[]): Promise<void> {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
}

/**
 * Starts database, mock and gateway. Each part registers its clean-up in `cleanups` as soon as it exists, so that a
 * caller whose start timed out can still remove what was made; when a step throws, the parts made so far are
 * removed before the error goes on.
 */
export async function startStack(dialect: E2EDialect, opts: StackOptions = {}, cleanups: (() => Promise<unknown>)[] = []): Promise<E2EStack> {
  try {
    const db = await createE2EDatabase(dialect);
    cleanups.push(() => db.drop());
    const mock = await startOpenAIMock({ apiKey: null });
    cleanups.push(() => mock.stop());
    const providerKey = `sk-e2e-provider-${crypto.randomUUID()}`;
    // PORT is chosen here: several gateways (and other suites) may run at once.
    const gw = await startGatewayProcess({ DATABASE_URL: db.url, PORT: String(await freePort()), ...opts.env });
    cleanups.push(() => gw.stop()); // a no-op wait when a test stopped it already
    const headers = (extra: Record<string, string | null> = {}): Record<string, string> => {
      const all: Record<string, string | null> = {
        'x-gateway-api-key': gw.adminKey,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': mock.url,
        authorization: `Bearer ${providerKey}`,
        ...extra,
      };
      return Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== null));
    };
    const client = (extra: Record<string, string | null> = {}) => {
      const { authorization: _auth, ...defaultHeaders } = headers(extra);
      return new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: providerKey, defaultHeaders, maxRetries: 0, timeout: 15_000 });
    };
    return { db, mock, gw, providerKey, client, headers };
  } catch (error) {
    await runCleanups(cleanups);
    throw error;
  }
}

/** beforeAll / afterAll for a describe block; the returned getter is valid inside its tests. */
export function useStack(dialect: E2EDialect, opts: StackOptions = {}): () => E2EStack {
  let stack: E2EStack | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    stack = await startStack(dialect, opts, cleanups);
  }, 45_000); // above startGatewayProcess's own 30 s, so that its error (with the process output) is what shows
  // Gateway first (SIGTERM), then the mock, then the database: also after a start that failed or timed out.
  afterAll(() => runCleanups(cleanups), 30_000);
  return () => {
    if (!stack) throw new Error('the e2e stack did not start');
    return stack;
  };
}
