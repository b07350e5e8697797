/** Recognises a unique-key violation from either driver, through drizzle's wrapping (a race between two writers). */
export function isUniqueViolation(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno, message } = e as { code?: unknown; errno?: unknown; message?: unknown };
    if (code === 'ER_DUP_ENTRY' || errno === 1062) return true;
    if (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT_UNIQUE')) return true;
    if (typeof message === 'string' && message.includes('UNIQUE constraint failed')) return true;
  }
  return false;
}
