/**
 * Administration on the database directly, without a running gateway or a key: for a lost admin key.
 *
 *   npm run admin -- create-key [--organisation <slug>] [--name <name>]
 *
 * Reads DATABASE_URL (default sqlite:./data/gateway.db, as the gateway) and API_KEY_PREFIX. create-key stores a new
 * organisation-service key with every scope (hashed, as every key) in the organisation named, or the first one, and
 * prints its secret once on stdout. Running gateways accept it at once. Revoke the lost key afterwards
 * (DELETE /v1/api-keys/<id>).
 */
import { createAdminKey, findOrganisation } from '@gateway/admin-api-keys';
import { existsSync } from 'node:fs';
import { createDatabaseFromEnv, parseDatabaseUrl } from '@gateway/db';

const USAGE = 'usage: npm run admin -- create-key [--organisation <slug>] [--name <name>]';

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function options(args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i += 2) {
    const name = args[i];
    const value = args[i + 1];
    if ((name !== '--organisation' && name !== '--name') || value === undefined || value.startsWith('--')) fail(USAGE, 2);
    out[name.slice(2)] = value;
  }
  return out;
}

const [command, ...rest] = process.argv.slice(2);
if (command !== 'create-key') fail(USAGE, 2);
const opts = options(rest);

const url = process.env.DATABASE_URL || 'sqlite:./data/gateway.db';
const shown = url.replace(/^(mysql:\/\/[^:/@]*):[^@]*@/, '$1:***@');
const target = parseDatabaseUrl(url);
// Opening a SQLite path that does not exist would create an empty database there.
if (target.dialect === 'sqlite' && target.path !== ':memory:' && !existsSync(target.path))
  fail(`${shown} does not exist: run this from the gateway's directory with its DATABASE_URL, or start the gateway once`);
let database: Awaited<ReturnType<typeof createDatabaseFromEnv>>;
try {
  database = await createDatabaseFromEnv(process.env);
} catch (error) {
  fail(`cannot open the database ${shown}: ${error instanceof Error ? error.message : String(error)}`);
}
try {
  let organisation: Awaited<ReturnType<typeof findOrganisation>>;
  try {
    organisation = await findOrganisation(database, opts.organisation);
  } catch (error) {
    fail(
      `cannot read organisations from ${shown} (${error instanceof Error ? error.message : String(error)}): ` +
        'is DATABASE_URL the gateway\'s, and has the gateway started on it once?',
    );
  }
  if (!organisation)
    fail(
      opts.organisation
        ? `no organisation with slug ${opts.organisation} in ${shown}`
        : `${shown} has no organisation yet: start the gateway once, it creates one and prints its admin key`,
    );
  const created = await createAdminKey(database, organisation, { keyPrefix: process.env.API_KEY_PREFIX || undefined, name: opts.name });
  process.stdout.write(
    `New admin API key ${created.apiKeyId} of organisation ${organisation.slug} (every scope; shown once, stored only hashed):\n\n` +
      `    ${created.secret}\n\n`,
  );
} finally {
  await database.close();
}
