/**
 * Calls to the gateway's documented API (same origin: the console is served by the gateway). The API key lives in
 * this module's memory only — never in localStorage or sessionStorage — so a reload signs out (docs/console.md).
 */
let apiKey: string | null = null;

export function setKey(key: string | null): void {
  apiKey = key;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

function headers(extra?: Record<string, string>): Record<string, string> {
  const h: Record<string, string> = { ...extra };
  if (apiKey) h['x-gateway-api-key'] = apiKey;
  return h;
}

/** A raw call (the playground reads the stream and the headers itself). */
export function call(method: string, path: string, body?: unknown, extra?: Record<string, string>): Promise<Response> {
  return fetch(`/v1${path}`, {
    method,
    headers: headers(body === undefined ? extra : { 'content-type': 'application/json', ...extra }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A JSON call; an error answer (INTERFACE.md shape) becomes an ApiError with its message. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await call(method, path, body);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const error = (parsed as { error?: { message?: string; code?: string } } | undefined)?.error;
    throw new ApiError(response.status, error?.message ?? `HTTP ${response.status}`, error?.code);
  }
  return parsed as T;
}

export interface Self {
  id: string;
  name: string | null;
  type: 'organisation-service' | 'workspace-service' | 'workspace-user';
  organisation_id: string;
  workspace_id: string;
  user_id: string | null;
  scopes: string[];
  organisation_role: string | null;
  workspace_role: string | null;
  /** Signed in by an SSO session cookie, not a key (set by the console). */
  session?: boolean;
}

export interface Page<T> {
  object: 'list';
  data: T[];
  total?: number;
  next_cursor?: string | null;
}

/** Whether the key holds `scope` (or `*`). */
export function can(self: Self, scope: string): boolean {
  return self.scopes.includes('*') || self.scopes.includes(scope);
}
