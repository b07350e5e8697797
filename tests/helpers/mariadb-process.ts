/**
 * Private MariaDB servers for tests that must stop and restart a database (HADR): each one a `mariadbd` on its
 * own data directory and free port, root without a password, started and killed by the test. Never the shared
 * server on 3306. A replica follows a primary by real binlog replication (CHANGE MASTER TO … START SLAVE).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { freePort } from './e2e-database.ts';

function binary(names: string[]): string | undefined {
  for (const name of names) {
    const found = Bun.which(name) ?? ['/usr/sbin', '/usr/local/sbin', '/usr/bin'].map((dir) => join(dir, name)).find((p) => existsSync(p));
    if (found) return found;
  }
  return undefined;
}

const SERVER = binary(['mariadbd', 'mysqld']);
/** mariadbd refuses to run as root unless told `--user=root`; os.userInfo() may not know the name (no passwd entry). */
const USER = Bun.spawnSync(['id', '-un'], { stdout: 'pipe', stderr: 'ignore' }).stdout.toString().trim() || 'root';
const INSTALL = binary(['mariadb-install-db', 'mysql_install_db']);

/** Why private servers cannot run here, or undefined when they can. */
export const MARIADB_MISSING: string | undefined =
  SERVER === undefined ? 'mariadbd is not installed' : INSTALL === undefined ? 'mariadb-install-db is not installed' : undefined;

export interface MariaDbOptions {
  /** Unique per server of a replication setup. */
  serverId: number;
  /** Write a binlog (a primary that replicas follow). */
  binlog?: boolean;
  /** A replica: read-only for ordinary users. */
  readOnly?: boolean;
}

export interface MariaDbServer {
  readonly port: number;
  readonly dir: string;
  /** `mysql://root@127.0.0.1:<port>/<database>`. */
  url(database: string): string;
  running(): boolean;
  /** Starts the server (again) on the same data directory and port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Kills it (SIGKILL by default: a crash, not a shutdown) and waits for the process to end. */
  kill(signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  query<T extends RowDataPacket[]>(sql: string, params?: unknown[]): Promise<T>;
  /** Stops the server and removes its data directory. */
  destroy(): Promise<void>;
}

const live = new Set<Subprocess>();
// A test run that ends without its afterAll must not leave servers behind.
process.once('exit', () => {
  for (const proc of live) proc.kill('SIGKILL');
});

async function connectable(port: number): Promise<boolean> {
  try {
    const conn = await createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 1_000 });
    await conn.end();
    return true;
  } catch {
    return false;
  }
}

/** A new server on a free port; again on another port if something took the port between choosing and binding. */
export async function startMariaDb(options: MariaDbOptions): Promise<MariaDbServer> {
  if (MARIADB_MISSING) throw new Error(MARIADB_MISSING);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt >= 3 || !/Bind on TCP\/IP port|Address already in use/i.test(String(error))) throw error;
    }
  }
}

async function startOnce(options: MariaDbOptions): Promise<MariaDbServer> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-mariadb-'));
  const data = join(dir, 'data');
  mkdirSync(data);
  const install = Bun.spawnSync(
    [INSTALL!, '--no-defaults', `--datadir=${data}`, `--user=${USER}`, '--auth-root-authentication-method=normal', '--skip-test-db'],
    { stdout: 'pipe', stderr: 'pipe' },
  );
  if (install.exitCode !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`mariadb-install-db failed (${install.exitCode}):\n${install.stdout.toString()}\n${install.stderr.toString()}`);
  }
  const port = await freePort();
  const args = [
    SERVER!,
    '--no-defaults',
    `--datadir=${data}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${join(dir, 'mysqld.sock')}`,
    `--pid-file=${join(dir, 'mysqld.pid')}`,
    `--log-error=${join(dir, 'error.log')}`,
    `--user=${USER}`,
    `--server-id=${options.serverId}`,
    `--relay-log=${join(dir, 'relay')}`,
    '--skip-name-resolve',
    '--innodb-buffer-pool-size=16M',
    '--performance-schema=OFF',
    ...(options.binlog ? [`--log-bin=${join(dir, 'binlog')}`, '--binlog-format=ROW'] : []),
    ...(options.readOnly ? ['--read-only'] : []),
  ];
  let proc: Subprocess | undefined;

  const server: MariaDbServer = {
    port,
    dir,
    url: (database) => `mysql://root@127.0.0.1:${port}/${database}`,
    running: () => proc !== undefined && proc.exitCode === null && proc.signalCode === null,
    async start() {
      if (server.running()) return;
      const started = Bun.spawn(args, { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' });
      proc = started;
      live.add(started);
      void started.exited.then(() => live.delete(started));
      const deadline = Date.now() + 30_000;
      while (!(await connectable(port))) {
        if (started.exitCode !== null || started.signalCode !== null) {
          const log = await Bun.file(join(dir, 'error.log')).text().catch(() => '');
          throw new Error(`mariadbd exited with ${started.exitCode ?? started.signalCode}:\n${log.slice(-3000)}`);
        }
        if (Date.now() > deadline) {
          started.kill('SIGKILL');
          throw new Error(`mariadbd on port ${port} did not accept connections within 30 s`);
        }
        await Bun.sleep(100);
      }
    },
    async kill(signal = 'SIGKILL') {
      const current = proc;
      if (!current || !server.running()) return;
      current.kill(signal);
      await Promise.race([current.exited, Bun.sleep(20_000)]);
      if (current.exitCode === null && current.signalCode === null) {
        current.kill('SIGKILL');
        await current.exited;
      }
    },
    async query<T extends RowDataPacket[]>(sql: string, params: unknown[] = []) {
      const conn = await createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 5_000, multipleStatements: false });
      try {
        const [rows] = await conn.query<T>(sql, params);
        return rows;
      } finally {
        await conn.end();
      }
    },
    async destroy() {
      await server.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await server.start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return server;
}

/** Makes `replica` follow `primary` from the start of the primary's binlog (retrying every second while it is down). */
export async function replicate(replica: MariaDbServer, primary: MariaDbServer): Promise<void> {
  const [first] = await primary.query<(RowDataPacket & { Log_name: string })[]>('SHOW BINARY LOGS');
  if (!first) throw new Error('the primary writes no binlog (start it with binlog: true)');
  await replica.query(
    `CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${primary.port}, MASTER_USER='root', MASTER_PASSWORD='', ` +
      `MASTER_LOG_FILE=?, MASTER_LOG_POS=4, MASTER_CONNECT_RETRY=1`,
    [first.Log_name],
  );
  await replica.query('START SLAVE');
}

/** Waits until the replica has applied everything the primary has written so far. */
export async function caughtUp(replica: MariaDbServer, primary: MariaDbServer, timeoutS = 20): Promise<void> {
  const [status] = await primary.query<(RowDataPacket & { File: string; Position: number })[]>('SHOW MASTER STATUS');
  if (!status) throw new Error('the primary writes no binlog');
  const [row] = await replica.query<(RowDataPacket & { done: number | null })[]>('SELECT MASTER_POS_WAIT(?, ?, ?) AS done', [
    status.File,
    status.Position,
    timeoutS,
  ]);
  if (row?.done === null || row?.done === undefined || row.done < 0) throw new Error(`the replica did not catch up with the primary within ${timeoutS} s`);
}
