import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Subprocess } from 'bun';

export const ROOT = resolve(import.meta.dir, '../..');

export interface GatewayProcess {
  url: string;
  port: number;
  adminKey: string;
  proc: Subprocess<'ignore', 'pipe', 'pipe'>;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM and wait for a graceful exit; returns the exit code. */
  stop(): Promise<number>;
}

/**
 * Starts the real server (`bun core/server/src/main.ts`) on a free port with its own SQLite file unless
 * DATABASE_URL is given, and waits until it listens.
 */
export async function startGatewayProcess(
  env: Record<string, string> = {},
  /** The script to run, relative to the repository root (a fixture server may load extra plugin roots). */
  entry = 'core/server/src/main.ts',
): Promise<GatewayProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-e2e-'));
  const adminKey = env.GATEWAY_ADMIN_API_KEY ?? `gw-test-${crypto.randomUUID()}`;
  const proc = Bun.spawn([process.execPath, entry], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'gw.db')}`,
      LOG_LEVEL: 'info',
      // A MySQL deployment must name its credentials key; every test gateway shares this one.
      GATEWAY_ENCRYPTION_KEY: 'gateway-test-encryption-key',
      BUN_CONFIG_MAX_HTTP_REQUESTS: '65535',
      // Local provider servers listen on loopback, which the gateway no longer trusts by default.
      TRUSTED_CUSTOM_HOSTS: 'localhost,127.0.0.1,::1',
      ...env,
      GATEWAY_ADMIN_API_KEY: adminKey,
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let text = '';
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  };
  void pump(proc.stdout);
  void pump(proc.stderr);

  const deadline = Date.now() + 30_000;
  let port = 0;
  while (!port) {
    const match = /"port":(\d+)[^\n]*gateway listening/.exec(text);
    if (match) port = Number(match[1]);
    else if (proc.exitCode !== null) throw new Error(`gateway exited with ${proc.exitCode} before listening:\n${text}`);
    else if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`gateway did not start within 30 s:\n${text}`);
    }
    else await Bun.sleep(25);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    adminKey,
    proc,
    output: () => text,
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      const code = await Promise.race([proc.exited, Bun.sleep(15_000).then(() => -1)]);
      if (code === -1) proc.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}
