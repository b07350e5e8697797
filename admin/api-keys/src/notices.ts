/**
 * The key e-mails of SPEC.md Events item 2: an upcoming rotation, a completed rotation, an expiry warning; and a
 * default key made for a new member, waiting to be picked up. They go to the key's user for a workspace-user key,
 * otherwise to the organisation's owners and admins. No e-mail carries a secret.
 */
import { users } from '@gateway/admin-identity';
import { and, eq, inArray, type Database, type Logger } from '@gateway/sdk';
import type { Mailer } from './mailer.ts';
import type { ApiKeyRow } from './tables.ts';

const at = (ms: number | null) => (ms === null ? 'never' : new Date(ms).toISOString());

function describe(key: ApiKeyRow): string {
  return [
    `Key: ${key.name} (${key.prefix_hint}…)`,
    `Id: ${key.id}`,
    `Type: ${key.type}`,
    ...(key.workspace_id ? [`Workspace: ${key.workspace_id}`] : []),
  ].join('\n');
}

export class KeyNotices {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly database: Database,
    private readonly mailer: Mailer,
    private readonly logger?: Logger,
  ) {}

  /** The key's user, or the organisation's owners and admins. */
  async recipients(key: ApiKeyRow): Promise<string[]> {
    if (key.type === 'workspace-user' && key.user_id) {
      const user = await this.database.findOne(users, 'id', key.user_id);
      return user && user.organisation_id === key.organisation_id ? [user.email] : [];
    }
    const admins = await this.database.select(users, {
      where: (c) => and(eq(c.organisation_id, key.organisation_id), inArray(c.role, ['owner', 'admin'])),
    });
    return admins.map((u) => u.email);
  }

  /** Sent once per scheduled rotation, ahead of it. Rejects when the mail could not be sent. */
  upcomingRotation(key: ApiKeyRow): Promise<boolean> {
    return this.send(key, `API key "${key.name}" will be rotated on ${at(key.next_rotation_at)}`, [
      `Your API key will be given a new secret on ${at(key.next_rotation_at)} by its rotation policy.`,
      `The current secret keeps working for ${Math.round((key.key_transition_period_ms ?? 0) / 60_000)} minutes after that.`,
      '',
      describe(key),
    ]);
  }

  /**
   * After a rotation. A scheduled rotation's secret waits to be picked up once with POST /v1/api-keys/:id/reveal;
   * a manual one was handed to whoever rotated.
   */
  rotationCompleted(key: ApiKeyRow, scheduled: boolean): Promise<boolean> {
    return this.send(key, `API key "${key.name}" was rotated`, [
      `Your API key was given a new secret on ${at(key.last_rotated_at)}${scheduled ? ' by its rotation policy' : ''}.`,
      `The previous secret keeps working until ${at(key.previous_expires_at)}.`,
      scheduled
        ? `Pick up the new secret once with POST /v1/api-keys/${key.id}/reveal (with a key allowed to rotate it) and replace the old one before then.`
        : 'The new secret was shown once to whoever rotated the key; replace the old one before then.',
      ...(key.next_rotation_at !== null ? [`Next rotation: ${at(key.next_rotation_at)}.`] : []),
      '',
      describe(key),
    ]);
  }

  /** A key made for its user by someone else (a default key on joining a workspace): its secret waits for them. */
  waitingForPickup(key: ApiKeyRow): Promise<boolean> {
    return this.send(key, `A new API key "${key.name}" waits for you`, [
      'An API key was made for you when you were added to a workspace. Its secret was shown to nobody.',
      `Pick it up once with POST /v1/api-keys/${key.id}/reveal, called with a key of your own that may rotate workspace-user keys.`,
      '',
      describe(key),
    ]);
  }

  expiryWarning(key: ApiKeyRow): Promise<boolean> {
    return this.send(key, `API key "${key.name}" expires on ${at(key.expires_at)}`, [
      `Your API key stops working on ${at(key.expires_at)}. Create a new key, or extend this one's expires_at, before then.`,
      '',
      describe(key),
    ]);
  }

  /** Sends without the caller waiting; failures are logged. `flush()` waits for these. */
  inBackground(send: () => Promise<boolean>): void {
    const job = send()
      .then(() => undefined)
      .catch((error: unknown) => this.logger?.warn({ error: error instanceof Error ? error.message.slice(0, 300) : String(error) }, 'could not send an API key e-mail'))
      .finally(() => this.pending.delete(job));
    this.pending.add(job);
  }

  async flush(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending);
  }

  /** Resolves to false when there was nobody to send to. */
  private async send(key: ApiKeyRow, subject: string, lines: string[]): Promise<boolean> {
    const to = await this.recipients(key);
    if (to.length === 0) {
      this.logger?.debug({ apiKeyId: key.id, subject }, 'no recipient for an API key e-mail');
      return false;
    }
    await this.mailer.send({ to, subject, text: `${lines.join('\n')}\n` });
    return true;
  }
}
