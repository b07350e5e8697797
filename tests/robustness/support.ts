// Shared pieces of the robustness tests: a real gateway process on a port chosen here, a "proxy trap" that catches
// any attempt of the gateway to reach a non-loopback address, the INTERFACE.md error-shape check, a seeded PRNG.
//
// Safety: every gateway process started through `startRobustGateway` gets HTTP_PROXY / HTTPS_PROXY pointing at the
// trap (a Bun.serve on 127.0.0.1) and NO_PROXY for the loopback names. Bun's fetch honours these variables, so a
// request to a public host never leaves the machine: it reaches the trap, which records it and answers 599.
// Tests assert that the trap saw nothing. (Checked with Bun 1.4.5 inside `unshare -rn`: loopback goes direct,
// `http://203.0.113.1/` and `https://api.openai.com` both land on the trap.)

import { expect } from 'bun:test';
import { readFileSync } from 'node:fs';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.ts';

export interface ProxyTrap {
  url: string;
  /** `METHOD url` of every request that reached the trap (a CONNECT for https). */
  seen: string[];
  stop(): void;
}

export function startProxyTrap(): ProxyTrap {
  const seen: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      seen.push(`${req.method} ${req.url}`);
      return new Response('refused by the robustness-test proxy trap', { status: 599 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, seen, stop: () => void server.stop(true) };
}

/** A port that was free a moment ago (Bun.serve on port 0, then closed). */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = probe.port as number;
  probe.stop(true);
  return port;
}

export interface RobustGateway extends GatewayProcess {
  trap: ProxyTrap;
  /** Resident set size of the gateway process, KiB (from /proc/<pid>/status). */
  rssKiB(): number;
}

/**
 * The real server (`bun core/server/src/main.ts`) on an explicit free port, with the proxy trap. (An explicit port
 * because PORT=0 fell back to 8787 in earlier versions of env.ts; bad-input.test.ts now checks that it does not.)
 */
export async function startRobustGateway(env: Record<string, string> = {}): Promise<RobustGateway> {
  const trap = startProxyTrap();
  let lastError: unknown;
  for (let i = 0; i < 3; i++) {
    try {
      const gw = await startGatewayProcess({
        PORT: String(freePort()),
        HTTP_PROXY: trap.url,
        HTTPS_PROXY: trap.url,
        http_proxy: trap.url,
        https_proxy: trap.url,
        NO_PROXY: '127.0.0.1,localhost,::1',
        no_proxy: '127.0.0.1,localhost,::1',
        ...env,
      });
      const pid = gw.proc.pid;
      const stopProcess = gw.stop;
      return Object.assign(gw, {
        trap,
        rssKiB: () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN),
        stop: async () => {
          const code = await stopProcess();
          trap.stop();
          return code;
        },
      });
    } catch (error) {
      lastError = error; // most likely the port was taken between freePort() and listen: try another
    }
  }
  trap.stop();
  throw lastError;
}

/** INTERFACE.md "Errors": `{"error": {"message": string, "type": string, "code": string|null, "param": string|null}}`. */
export function isErrorShape(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const e = (body as { error?: unknown }).error;
  if (e === null || typeof e !== 'object' || Array.isArray(e)) return false;
  const { message, type, code, param } = e as Record<string, unknown>;
  return (
    typeof message === 'string' &&
    typeof type === 'string' &&
    (code === null || typeof code === 'string') &&
    (param === null || typeof param === 'string')
  );
}

/** Reads a response and asserts the status and the INTERFACE.md error shape; returns the parsed body. */
export async function expectError(res: Response, status: number, code?: string): Promise<{ error: { message: string; type: string; code: string | null; param: string | null } }> {
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`expected a JSON error body with status ${status}, got ${res.status}: ${JSON.stringify(text.slice(0, 300))}`);
  }
  expect({ status: res.status, body }).toMatchObject({ status, body: code === undefined ? {} : { error: { code } } });
  expect(isErrorShape(body)).toBe(true);
  return body as never;
}

/** mulberry32: small, fast, deterministic. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** JSON with every non-ASCII character escaped, so that it can travel in an HTTP header. */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export const CHAT_BODY = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] };
