import type { LoadResult } from '@gateway/loader';
import type { Database } from '@gateway/sdk';

/** `mysql://user:secret@host/db` without the password, for messages. */
export function describeDatabaseUrl(url: string): string {
  return url.replace(/^(mysql:\/\/[^:/@]*):[^@]*@/, '$1:***@');
}

/** One round trip to the database (the reader when the HADR writer is down): undefined, or why it failed. */
export async function probeDatabase(database: Database): Promise<string | undefined> {
  try {
    if (database.dialect === 'sqlite') database.db.$client.query('SELECT 1').get();
    else {
      const pool = database.health().status === 'ok' ? database.db.$client : database.reader.$client;
      await pool.query({ sql: 'SELECT 1', timeout: 3_000 });
    }
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Refuses the start on a database the gateway cannot use (a MySQL database that does not exist, wrong credentials,
 * nothing listening): every plugin that stores something would be refused, and every call would fail.
 */
export async function assertDatabaseReachable(database: Database, url: string): Promise<void> {
  const failure = await probeDatabase(database);
  if (failure === undefined) return;
  await database.close().catch(() => {});
  const missing = /Unknown database '([^']+)'/.exec(failure);
  const fix = missing
    ? `create it (CREATE DATABASE \`${missing[1]}\` CHARACTER SET utf8mb4) or point DATABASE_URL at one that exists`
    : 'check DATABASE_URL (host, port, user, password, database) and that the server is running';
  throw new Error(`the database ${describeDatabaseUrl(url)} cannot be used: ${failure}; ${fix}`);
}

/**
 * What makes a loaded gateway unable to serve truthfully: a plugin that failed to load (not one switched off with
 * GATEWAY_DISABLED_PLUGINS), or no authenticator at all (every call would be a 500).
 */
export function loadProblems(plugins: LoadResult, hasAuthenticator: boolean): string[] {
  const problems = plugins.refused.map(
    (r) => `plugin ${r.name} did not load: ${r.reason} (fix it, or switch it off with GATEWAY_DISABLED_PLUGINS=${r.name})`,
  );
  if (!hasAuthenticator && plugins.refused.length === 0)
    problems.push('no plugin provides the API-key authenticator (is @gateway/admin-api-keys in GATEWAY_DISABLED_PLUGINS?): every call would fail');
  return problems;
}

export interface ReadinessReport {
  status: 'ready' | 'not_ready';
  checks: { database: 'ok' | string; plugins: 'ok' | string[]; draining: boolean };
}

/**
 * GET /health/ready for orchestrators: 200 while the database answers, every plugin loaded and no stop signal came;
 * 503 with the failing checks otherwise (a load balancer then sends traffic elsewhere, e.g. while draining).
 */
export class Readiness {
  draining = false;

  constructor(
    private readonly database: Database,
    readonly problems: readonly string[],
  ) {}

  async report(): Promise<ReadinessReport> {
    const failure = await probeDatabase(this.database);
    const ready = failure === undefined && this.problems.length === 0 && !this.draining;
    return {
      status: ready ? 'ready' : 'not_ready',
      checks: { database: failure ?? 'ok', plugins: this.problems.length ? [...this.problems] : 'ok', draining: this.draining },
    };
  }

  async respond(): Promise<Response> {
    const report = await this.report();
    return Response.json(report, { status: report.status === 'ready' ? 200 : 503 });
  }
}
