/** The `auditLog` service: the server's admin dispatcher hands it every successful change. */
import type { AuditEntry, AuditSink, Database } from '@gateway/sdk';
import { redact } from './redact.ts';
import { auditLogs } from './table.ts';

/** Bounded like the columns, so that a long path or id cannot make the insert fail and the entry go missing. */
const cut = (value: string | null | undefined, length: number): string | null => (value == null ? null : value.slice(0, length));

export class AuditLogStore implements AuditSink {
  constructor(
    private readonly database: Database,
    /** AUDIT_LOGS_ENABLED: read on every call, so that nothing is recorded while it is OFF whoever calls. */
    private readonly enabled: () => boolean,
  ) {}

  async record(entry: AuditEntry): Promise<void> {
    if (!this.enabled()) return;
    await this.database.insert(auditLogs, {
      organisation_id: entry.organisationId,
      workspace_id: entry.workspaceId ?? null,
      actor_api_key_id: entry.actor?.apiKeyId ?? null,
      actor_user_id: entry.actor?.userId ?? null,
      actor_key_type: entry.actor?.keyType ?? null,
      action: cut(entry.action, 64) ?? entry.method.toLowerCase(),
      method: entry.method.slice(0, 8),
      path: entry.path.slice(0, 2048),
      resource: cut(entry.resource, 64),
      resource_id: cut(entry.resourceId, 191),
      before: entry.before === undefined ? null : redact(entry.before),
      after: entry.after === undefined ? null : redact(entry.after),
      status: entry.status,
      at: entry.at,
    });
  }
}
