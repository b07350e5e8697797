/**
 * The administration contract: routes an admin plugin registers, the principal a route acts for, the audit record
 * a change leaves. The server checks scope, key type, organisation role and feature flag before a handler runs and
 * writes the audit entry after a successful change; handlers check what depends on the resource (workspace roles,
 * security settings).
 */
import type { Caller } from './plugin.ts';

export const API_KEY_TYPES = ['organisation-service', 'workspace-service', 'workspace-user'] as const;
export type ApiKeyType = (typeof API_KEY_TYPES)[number];

/** Roles, least to most: organisation roles are owner, admin, member; workspace roles admin, manager, member. */
export const ROLES = ['member', 'manager', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/** True when `role` is at least `least`. */
export function roleAtLeast(role: Role | null | undefined, least: Role): boolean {
  return role != null && ROLES.indexOf(role) >= ROLES.indexOf(least);
}

/** The `*_ENABLED` switches of SPEC.md's self-hosted settings (`OFF` disables). */
export type FeatureFlag = 'guardrails' | 'apiAccess' | 'dataExports' | 'usageLimits' | 'auditLogs' | 'scim' | 'policy';

/** The scope that grants every other scope (the bootstrap key has it). */
export const ALL_SCOPES = '*';

/** Who an administration call acts for: the key, and the roles its user (or its type) carries. */
export interface Principal {
  readonly caller: Caller;
  /**
   * The role in the organisation. An organisation-service key acts as `admin`; a workspace-service key has none
   * (it acts inside its workspace only); a workspace-user key has its user's organisation role.
   */
  readonly orgRole: Role | null;
  /** owner or admin of the organisation (or an organisation-service key): sees and may change everything. */
  readonly isOrgAdmin: boolean;
  /**
   * The role in a workspace: organisation owners and admins are `admin` in every workspace, a workspace-service key
   * is `admin` in its own, a user has the role of their membership; null when the caller has no access to it.
   */
  workspaceRole(workspaceId: string): Promise<Role | null>;
}

/** Resolves a caller's principal (service `adminAuthorizer`, provided by the identity plugin). */
export interface AdminAuthorizer {
  principal(caller: Caller): Promise<Principal>;
}

/** What a change did, filled in by the handler for the audit log. */
export interface AuditRecord {
  /** e.g. `workspace`, `api_key`, `integration`. */
  resource?: string;
  resourceId?: string;
  /** e.g. `create`, `update`, `delete`, `rotate`; defaults from the method. */
  action?: string;
  workspaceId?: string | null;
  before?: unknown;
  after?: unknown;
}

/** One audit log entry (service `auditLog`, provided by the audit plugin). */
export interface AuditEntry extends AuditRecord {
  organisationId: string;
  /** Null for a public route (an invitation accepted by its token). */
  actor: { apiKeyId: string; userId: string | null; keyType: ApiKeyType } | null;
  method: string;
  path: string;
  status: number;
  at: number;
}

export interface AuditSink {
  record(entry: AuditEntry): Promise<void>;
}

export interface AdminRequest {
  caller: Caller;
  principal: Principal;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  headers: Headers;
  /** Aborted when the client goes away: a route that calls a model or streams passes it on. */
  signal?: AbortSignal;
  /** Filled by a handler that changes something; written to the audit log after a successful answer. */
  audit: AuditRecord;
}

/** An admin feature's route, with what a caller needs to reach it. */
export type AdminRoute = ProtectedAdminRoute | PublicAdminRoute;

export interface ProtectedAdminRoute {
  public?: false;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path after `/v1`, with `:params`. */
  path: string;
  /** The scope the key needs; with a list, any one of them. `*` on a key grants all. */
  scope: string | readonly string[];
  /** Key types allowed; all three when absent. */
  keyTypes?: readonly ApiKeyType[];
  /** Least organisation role (see Principal.orgRole); no check when absent. */
  role?: Role;
  /** A feature that must be on (`*_ENABLED`); 403 feature_disabled otherwise. */
  feature?: FeatureFlag;
  /** Write an audit entry after a successful call; default: every method but GET. */
  audit?: boolean;
  handle(req: AdminRequest): Promise<Response> | Response;
}

/**
 * A route reached without an API key (accepting an invitation by its token, say): the handler authenticates the
 * request itself. Its changes are audited under `audit.organisationId`.
 */
export interface PublicAdminRoute {
  public: true;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  feature?: FeatureFlag;
  audit?: boolean;
  handle(req: PublicAdminRequest): Promise<Response> | Response;
}

export interface PublicAdminRequest {
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  headers: Headers;
  audit: AuditRecord & { organisationId?: string };
}
