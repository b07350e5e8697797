/**
 * Support of the identity tests: the identity plugin set up on a real database (with the api-keys table and verifier), their routes run
 * through the server's own admin dispatcher (authentication, scopes, roles, audit), and keys of every type made
 * straight in the api_keys table (the api-keys routes are another package's).
 */
import identity, { IdentityServices, type OrganisationRole, users, workspaceMembers, type WorkspaceRole, workspaces } from '@gateway/admin-identity';
import { apiKeyMigrations, apiKeys, ApiKeyVerifier, bootstrapKey, hashSecret } from '@gateway/admin-api-keys';
import { type AdminEvents, AdminServices } from '@gateway/admin-kit';
import { testPluginApi, type TestPluginApi } from '@gateway/sdk/testing';
import { readSettings } from '@gateway/server';
import { type AdminRoute, type ApiKeyType, type AuditEntry, type Database, GatewayError, Services } from '@gateway/sdk';
import { type AdminDeps, adminHandler } from '../../core/server/src/admin-routes.ts';

export const ADMIN_KEY = 'identity-test-admin-key';

export interface KeyOptions {
  type: ApiKeyType;
  workspaceId?: string | null;
  userId?: string | null;
  scopes?: string[];
  organisationId?: string;
}

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  query?: Record<string, string>;
}

export interface Answer {
  status: number;
  body: unknown;
}

export interface IdentityHarness {
  database: Database;
  organisationId: string;
  /** The bootstrap workspace. */
  workspaceId: string;
  events: AdminEvents;
  routes: AdminRoute[];
  audits: AuditEntry[];
  plugin: TestPluginApi;
  call(method: AdminRoute['method'], path: string, options?: CallOptions): Promise<Answer>;
  key(options: KeyOptions): Promise<string>;
  /** A user of the organisation with memberships, written directly; with `key`, a workspace-user key of theirs. */
  user(options: { role?: OrganisationRole; email?: string; workspaces?: [string, WorkspaceRole][]; scopes?: string[] }): Promise<{ id: string; key: string }>;
  workspace(slug: string, organisationId?: string): Promise<string>;
  close(): Promise<void>;
}

/** Matches `/workspaces/:workspaceId` against a path; static segments win over parameters (as in the server). */
function match(routes: AdminRoute[], method: string, path: string): { route: AdminRoute; params: Record<string, string> } | undefined {
  const parts = path.split('/');
  let best: { route: AdminRoute; params: Record<string, string>; statics: number } | undefined;
  for (const route of routes) {
    if (route.method !== method) continue;
    const pattern = route.path.split('/');
    if (pattern.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let statics = 0;
    let ok = true;
    pattern.forEach((seg, i) => {
      const part = parts[i] ?? '';
      if (seg.startsWith(':')) params[seg.slice(1)] = decodeURIComponent(part);
      else if (seg === part) statics++;
      else ok = false;
    });
    if (ok && (!best || statics > best.statics)) best = { route, params, statics };
  }
  return best;
}

let counter = 0;

export async function identityHarness(database: Database): Promise<IdentityHarness> {
  const routes: AdminRoute[] = [];
  const plugin = testPluginApi({ services: { database } });
  // testPluginApi refuses routes: this harness collects them instead.
  const api = Object.assign(plugin.api, { route: (route: AdminRoute) => void routes.push(route) });
  await identity.setup(api);
  const boot = plugin.api.service(IdentityServices.bootstrap);
  if (!boot.created) throw new Error('the test database was not empty');
  // The key table, the bootstrap key and the verifier only: the api-keys plugin's own listeners stay out of these tests.
  await database.migrate(apiKeyMigrations);
  await bootstrapKey(database, boot.organisationId, { adminApiKey: ADMIN_KEY });
  const verifier = new ApiKeyVerifier(database);
  // The identity plugin verifies the key of an existing user accepting an invitation with it: the api-keys plugin's
  // place, taken once every plugin is set up.
  plugin.api.provide(Services.apiKeyVerifier, verifier);
  await plugin.ready();
  const audits: AuditEntry[] = [];
  const deps: AdminDeps = {
    authenticator: verifier,
    authorizer: plugin.api.service(Services.adminAuthorizer),
    audit: { record: async (entry: AuditEntry) => void audits.push(entry) },
    settings: readSettings({}),
    logger: plugin.logger,
  };

  const harness: IdentityHarness = {
    database,
    organisationId: boot.organisationId,
    workspaceId: boot.workspaceId,
    events: plugin.api.service(AdminServices.events),
    routes,
    audits,
    plugin,
    async call(method, path, options = {}) {
      const found = match(routes, method, path);
      if (!found) throw new Error(`no route ${method} ${path}`);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      const key = options.key === undefined ? ADMIN_KEY : options.key;
      if (key !== null) headers['x-gateway-api-key'] = key;
      const text = options.body === undefined ? undefined : JSON.stringify(options.body);
      if (text !== undefined) headers['content-length'] = String(Buffer.byteLength(text));
      const url = `http://gateway.test/v1${path}${options.query ? `?${new URLSearchParams(options.query)}` : ''}`;
      const request = new Request(url, { method, headers, body: text });
      let response: Response;
      try {
        response = await adminHandler(found.route, deps)(request, found.params);
      } catch (error) {
        // The server's onError does this for thrown GatewayErrors.
        response = GatewayError.from(error).toResponse();
      }
      const raw = await response.text();
      return { status: response.status, body: raw ? JSON.parse(raw) : null };
    },
    async key(options) {
      const secret = `idk-${crypto.randomUUID()}`;
      await database.insert(apiKeys, {
        organisation_id: options.organisationId ?? boot.organisationId,
        workspace_id: options.type === 'organisation-service' ? null : (options.workspaceId ?? boot.workspaceId),
        user_id: options.userId ?? null,
        name: `test key ${++counter}`,
        type: options.type,
        hash: hashSecret(secret),
        prefix_hint: secret.slice(0, 4),
        scopes: options.scopes ?? ['*'],
      });
      return secret;
    },
    async user(options) {
      const id = crypto.randomUUID();
      await database.insert(users, {
        id,
        organisation_id: boot.organisationId,
        email: options.email ?? `user-${++counter}-${id.slice(0, 6)}@example.com`,
        role: options.role ?? 'member',
      });
      for (const [workspaceId, role] of options.workspaces ?? [])
        await database.insert(workspaceMembers, { organisation_id: boot.organisationId, workspace_id: workspaceId, user_id: id, role });
      const firstWorkspace = options.workspaces?.[0]?.[0] ?? boot.workspaceId;
      const key = await harness.key({ type: 'workspace-user', userId: id, workspaceId: firstWorkspace, scopes: options.scopes });
      return { id, key };
    },
    async workspace(slug, organisationId) {
      const id = crypto.randomUUID();
      await database.insert(workspaces, { id, organisation_id: organisationId ?? boot.organisationId, name: slug, slug });
      return id;
    },
    close: () => plugin.close(),
  };
  return harness;
}

/** The error body's param and status, for compact assertions on refusals. */
export function refusal(answer: Answer): { status: number; param: string | null } {
  const error = (answer.body as { error?: { param?: string | null } } | null)?.error;
  return { status: answer.status, param: error?.param ?? null };
}
