import { API_KEY_TYPES, col, defineTable, type Json, type Migration, type Row } from '@gateway/sdk';

/** One successful administration change. Append-only: nothing updates or deletes a row. */
export const auditLogs = defineTable(
  'audit_logs',
  {
    id: col.id(),
    organisation_id: col.ref(),
    /** The workspace the change concerns, when it concerns one. */
    workspace_id: col.ref().nullable(),
    /** The key that made the change; null for a public route (an invitation accepted by its token). */
    actor_api_key_id: col.ref().nullable(),
    actor_user_id: col.ref().nullable(),
    actor_key_type: col.enum(API_KEY_TYPES).nullable(),
    /** `create`, `update`, `delete`, `rotate`, … */
    action: col.string(64),
    method: col.string(8),
    path: col.string(2048),
    /** `workspace`, `api_key`, `integration`, … */
    resource: col.string(64).nullable(),
    resource_id: col.string(191).nullable(),
    /** The resource before and after the change, secret-looking fields redacted. */
    before: col.json<Json>().nullable(),
    after: col.json<Json>().nullable(),
    status: col.int(),
    at: col.timestamp(),
  },
  {
    indexes: [
      { columns: ['organisation_id', 'at'] },
      { columns: ['organisation_id', 'resource', 'resource_id'] },
      { columns: ['organisation_id', 'actor_api_key_id'] },
      { columns: ['organisation_id', 'actor_user_id'] },
      { columns: ['organisation_id', 'workspace_id'] },
    ],
  },
);

export type AuditLogRow = Row<typeof auditLogs>;

export const auditMigrations: Migration[] = [{ id: 'audit/0001-audit-logs', tables: [auditLogs] }];
