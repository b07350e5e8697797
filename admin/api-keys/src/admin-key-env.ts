import type { Database, Logger } from '@gateway/sdk';
import { applyAdminKeyFromEnv } from './admin-key.ts';

/**
 * GATEWAY_ADMIN_API_KEY on an existing database, applied (applyAdminKeyFromEnv) or refused; a refusal is an error
 * log line and a plain block on stderr, so that an operator who set the variable to get in learns why it did not work.
 */
export async function announceAdminKeyFromEnv(
  database: Database,
  secret: string,
  logger: Pick<Logger, 'info' | 'warn' | 'error'>,
  write: (text: string) => void = (text) => void process.stderr.write(text),
): Promise<void> {
  const outcome = await applyAdminKeyFromEnv(database, secret);
  if (outcome.applied === 'already') return;
  if (outcome.applied === 'added') {
    logger.warn(
      { apiKeyId: outcome.apiKeyId, organisation: outcome.organisation.slug },
      `GATEWAY_ADMIN_API_KEY was not in the database: added as a new admin key (every scope) of organisation ${outcome.organisation.slug}; the other keys keep working`,
    );
    return;
  }
  const message = `GATEWAY_ADMIN_API_KEY is NOT applied: ${outcome.reason}. Set a new value, or run \`npm run admin -- create-key\``;
  logger.error({ reason: outcome.reason }, message);
  write(`\n!!! ${message}\n\n`);
}
