/**
 * Why the gateway does not start, readably on stderr (not inside a JSON line), then exit 1: a process that cannot
 * serve truthfully must not listen and answer /health 200 and then 500 on every call.
 */
export function refuseStart(reasons: readonly string[]): never {
  const lines = ['', 'The gateway did not start:', ...reasons.map((reason) => `  - ${reason}`), ''];
  process.stderr.write(`${lines.join('\n')}\n`);
  process.exit(1);
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
