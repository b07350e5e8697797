/**
 * The web console (console/, docs/console.md) at /console: the files `vite build` wrote to console/dist (the root
 * postinstall runs it), with index.html for every other path under /console (the console routes in the browser).
 * Hashed files under assets/ never change, so browsers keep them a year; index.html is revalidated on each load.
 * Without a build, a 503 says how to make one. Off with CONSOLE_ENABLED=OFF (the route is then not registered).
 */
import { stat } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { Errors, GatewayError } from '@gateway/sdk';

const PREFIX = '/console';

/** The console talks to this origin only; nothing inline, no framing. */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export function consoleNotBuilt(dir: string): GatewayError {
  return new GatewayError({
    code: 'console_not_built',
    type: 'service_unavailable',
    status: 503,
    message: `The web console is not built (no ${resolve(dir, 'index.html')}): run \`npm install\` (its postinstall builds it) or \`npm run build -w @gateway/console\`, or set CONSOLE_ENABLED=OFF`,
  });
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function fileResponse(path: string, cache: string): Response {
  const file = Bun.file(path);
  return new Response(file, { headers: { 'content-type': file.type, 'cache-control': cache, ...SECURITY_HEADERS } });
}

/** Answers a GET under /console from `dir` (console/dist). */
export function consoleHandler(dir: string): (pathname: string) => Promise<Response> {
  const root = resolve(dir);
  const index = resolve(root, 'index.html');
  return async (pathname) => {
    let rel: string;
    try {
      rel = decodeURIComponent(pathname.slice(PREFIX.length)).replace(/^\/+/, '');
    } catch {
      rel = '';
    }
    const path = rel && !rel.includes('\0') ? resolve(root, rel) : index;
    // Only files inside the build: `..` and absolute paths fall back to the page.
    if (path !== index && path.startsWith(root + sep) && (await isFile(path)))
      return fileResponse(path, rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    // A missing file (an old hashed asset, a typo) is a 404, not the page: a script tag must not receive HTML.
    if (rel.startsWith('assets/') || /\.[a-z0-9]+$/i.test(rel)) return Errors.notFound('No such console file').toResponse();
    if (!(await isFile(index))) return consoleNotBuilt(root).toResponse();
    return fileResponse(index, 'no-cache');
  };
}
