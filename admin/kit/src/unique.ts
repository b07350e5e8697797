/** Unique-key violations: the race a pre-check lost (two writers, one slug) becomes a 409 instead of a 500. */
import type { GatewayError } from '@gateway/sdk';

/** Recognises a unique-key (or primary-key) violation from either driver, through drizzle's wrapping. */
export function isUniqueViolation(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno, message } = e as { code?: unknown; errno?: unknown; message?: unknown };
    if (code === 'ER_DUP_ENTRY' || errno === 1062) return true; // MySQL / MariaDB
    if (typeof code === 'string' && (code.startsWith('SQLITE_CONSTRAINT_UNIQUE') || code === 'SQLITE_CONSTRAINT_PRIMARYKEY')) return true;
    if (typeof message === 'string' && (message.includes('UNIQUE constraint failed') || message.includes('Duplicate entry'))) return true;
  }
  return false;
}

/** Runs a write; a unique-key violation is thrown as `conflict()`, any other error as it is. */
export async function conflictOnUnique<T>(write: () => Promise<T>, conflict: () => GatewayError): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict();
    throw error;
  }
}
