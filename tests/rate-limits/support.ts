// What the rate-limit suites share: an in-process gateway with the openai mock behind it, administration calls with
// the bootstrap key, OpenAI SDK clients for a key, and the request log's rows.
import { RequestLogServices } from '@gateway/plugin-request-log';
import { limitsClock } from '@gateway/policy-kit';
import type { Gateway } from '@gateway/server';
import OpenAI from 'openai';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

export { TEST_ADMIN_KEY };
export type Json = Record<string, unknown>;

export interface Stack {
  gateway: Gateway;
  mock: OpenAIMock;
  admin<T = Json>(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: T }>;
  /** An OpenAI SDK client at the gateway: this key, the mock as provider, extra gateway headers. */
  client(key?: string, headers?: Record<string, string>): OpenAI;
  /** An OpenAI SDK client at the gateway that names the provider by these headers only (a virtual key, an `@slug`). */
  storedClient(headers: Record<string, string>, key?: string): OpenAI;
  /** A new key of the organisation (workspace-service in `workspace`, or organisation-service). */
  newKey(workspace?: string): Promise<{ id: string; key: string }>;
  /** Rows of the request log for a trace id prefix. */
  logs(where?: (row: Json) => boolean): Promise<Json[]>;
  close(): Promise<void>;
}

export async function startStack(env: Record<string, string> = {}): Promise<Stack> {
  const mock = await startOpenAIMock({ apiKey: null });
  const gateway = await startInProcessGateway(env);
  const admin = async <T>(method: string, path: string, body?: unknown, key = TEST_ADMIN_KEY) => {
    const res = await gateway.handle(
      new Request(`http://gateway.test/v1${path}`, {
        method,
        headers: { 'x-gateway-api-key': key, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  };
  return {
    gateway,
    mock,
    admin,
    client: (key = TEST_ADMIN_KEY, headers = {}) =>
      new OpenAI({
        apiKey: 'sk-provider',
        baseURL: 'http://gateway.test/v1',
        maxRetries: 0,
        fetch: ((input: string | URL | Request, init?: RequestInit) => gateway.handle(new Request(input as string, init))) as typeof fetch,
        defaultHeaders: { 'x-gateway-api-key': key, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url, ...headers },
      }),
    storedClient: (headers, key = TEST_ADMIN_KEY) =>
      new OpenAI({
        apiKey: 'unused',
        baseURL: 'http://gateway.test/v1',
        maxRetries: 0,
        fetch: ((input: string | URL | Request, init?: RequestInit) => gateway.handle(new Request(input as string, init))) as typeof fetch,
        defaultHeaders: { 'x-gateway-api-key': key, ...headers },
      }),
    async newKey(workspace) {
      const body = workspace
        ? { name: `k-${crypto.randomUUID().slice(0, 6)}`, type: 'workspace-service', workspace_id: workspace, scopes: ['completions.write', 'embeddings.write'] }
        : { name: `k-${crypto.randomUUID().slice(0, 6)}`, type: 'organisation-service', scopes: ['completions.write', 'embeddings.write'] };
      const r = await admin<{ id: string; key: string }>('POST', '/api-keys', body);
      if (r.status !== 201) throw new Error(`key not created: ${JSON.stringify(r.body)}`);
      return { id: r.body.id, key: r.body.key };
    },
    async logs(where = () => true) {
      await gateway.service(RequestLogServices.queue).flush();
      const r = await admin<{ data: Json[] }>('GET', '/logs?page_size=100');
      return (r.body.data ?? []).filter(where);
    },
    async close() {
      limitsClock.now = () => Date.now();
      await gateway.close();
      await mock.stop();
    },
  };
}

/** Moves the limits' clock (the gateway runs in this process). */
export function setClock(ms: number): void {
  limitsClock.now = () => ms;
}
