// What the suites with several real gateway processes share (tests/rate-limits/exactness.test.ts,
// tests/usage-limits/processes.test.ts): the processes on one database and one Redis, OpenAI SDK clients at one of
// them (the openai mock as provider, the case in the metadata), the status of a call, policies created through the
// first, and a tally of statuses.
import { expect } from 'bun:test';
import OpenAI, { APIError } from 'openai';
import { freePort } from '../helpers/e2e-database.ts';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';
import type { OpenAIMock } from '../mocks/openai-server.ts';

/** Gateway processes sharing `env`'s database and Redis, each with its own extra settings; the first migrates and bootstraps alone. */
export async function startGateways(env: Record<string, string>, each: readonly Record<string, string>[]): Promise<GatewayProcess[]> {
  const base = { TRUSTED_CUSTOM_HOSTS: 'localhost,127.0.0.1,::1', ...env };
  const [first, ...rest] = each;
  const out = [await startGatewayProcess({ ...base, ...first, PORT: String(await freePort()) })];
  out.push(...(await Promise.all(rest.map(async (extra) => startGatewayProcess({ ...base, ...extra, PORT: String(await freePort()) })))));
  return out;
}

/** An OpenAI SDK client at `gw`, the mock as provider, `metadata.case` set to `c`. */
export const processClient = (gw: GatewayProcess, adminKey: string, mock: OpenAIMock, c: string) =>
  new OpenAI({
    apiKey: 'sk-provider',
    baseURL: `${gw.url}/v1`,
    maxRetries: 0,
    timeout: 20_000, // a hang fails the test
    defaultHeaders: { 'x-gateway-api-key': adminKey, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url, 'x-gateway-metadata': JSON.stringify({ case: c }) },
  });

/** The status of one chat call (200, or the error's). */
export async function status(sdk: OpenAI): Promise<number> {
  try {
    await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three' }] });
    return 200;
  } catch (error) {
    if (error instanceof APIError) return error.status ?? 0;
    throw error;
  }
}

/** Creates a policy through `gw` (`/policies/rate-limits` or `/policies/usage-limits`); its id. */
export async function createPolicy(gw: GatewayProcess, adminKey: string, path: string, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${gw.url}/v1${path}`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': adminKey, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  // Reloaded at once in this process and, through Redis, in the others: give the message a moment.
  await Bun.sleep(1_000);
  return ((await res.json()) as { id: string }).id;
}

export function tally(codes: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const c of codes) out[c] = (out[c] ?? 0) + 1;
  return out;
}
