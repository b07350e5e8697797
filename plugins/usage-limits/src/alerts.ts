/**
 * Usage-limit alerts by e-mail, through the deployment's mailer (the API keys' SMTP transport, service
 * ApiKeyServices.mailer): when a limit's usage passes its `alert_threshold`, and when it is exhausted, once per
 * period and group. Raising the credit limit lets both go out again; raising the threshold (or removing it) lets the
 * threshold alert go out again (each raise bumps an epoch that is part of the alert's key).
 *
 * Recipients: the organisation's owners and admins; for a workspace-user key's own limit, also the key's user (it is
 * their spending). "Once" is kept in the state store (Redis: once across processes; in memory: once per process).
 */
import { apiKeys, type Mailer } from '@gateway/admin-api-keys';
import { users } from '@gateway/admin-identity';
import { and, type Database, eq, type GatewayRequest, inArray, type Logger, type StateStore } from '@gateway/sdk';
import type { Charged } from './stage.ts';
import { amountOf } from './store.ts';

export interface AlertDeps {
  database: Database;
  state: StateStore;
  mailer: Mailer;
  logger: Logger;
}

const unitOf = (type: 'cost' | 'tokens', units: number) => (type === 'cost' ? `USD ${amountOf('cost', units)}` : `${units} tokens`);

export class Alerts {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly deps: AlertDeps) {}

  /** After a call's consumption was added: `value` is the counter's new value. */
  consumed(c: Charged, _before: number, value: number, req: GatewayRequest): void {
    const { policy } = c.entry;
    if (value >= policy.limit) this.exhausted(c, req, value);
    else if (policy.threshold !== null && value >= policy.threshold) this.later(() => this.threshold(c, value));
  }

  /** The limit is used up (a call was refused, or a consumption reached it). */
  exhausted(c: Charged, _req: GatewayRequest, value?: number): void {
    this.later(() => this.once('x', `${c.entry.policy.alertEpoch}`, c, `Usage limit "${c.entry.policy.name}" is exhausted`, value, 'is used up: calls it applies to are refused with 429 usage_limit_exceeded until it resets or its credit limit is raised.'));
  }

  private threshold(c: Charged, value: number): Promise<void> {
    const { policy } = c.entry;
    return this.once('t', `${policy.alertEpoch}.${policy.thresholdEpoch}`, c, `Usage limit "${policy.name}" passed its alert threshold`, value, `has passed its alert threshold of ${unitOf(policy.type, policy.threshold ?? 0)}.`);
  }

  private async once(kind: 't' | 'x', epoch: string, c: Charged, subject: string, value: number | undefined, what: string): Promise<void> {
    const { policy } = c.entry;
    const key = `ula:${kind}:${policy.id}:${c.period.start}:${epoch}:${c.group}`;
    if ((await this.deps.state.incr(key, 1, c.ttlMs)) !== 1) return;
    const to = await this.recipients(c);
    if (to.length === 0) {
      this.deps.logger.debug({ limit: policy.id }, 'usage limits: nobody to alert');
      return;
    }
    const lines = [
      `The usage limit "${policy.name}" (${policy.label}) ${what}`,
      '',
      `Type: ${policy.type}`,
      `Credit limit: ${unitOf(policy.type, policy.limit)}`,
      ...(policy.threshold !== null ? [`Alert threshold: ${unitOf(policy.type, policy.threshold)}`] : []),
      ...(value !== undefined ? [`Used this period: ${unitOf(policy.type, value)}`] : []),
      ...(c.group ? [`Group: ${c.group}`] : []),
      `Period started: ${new Date(c.period.start).toISOString()}`,
      `Next reset: ${c.period.end === null ? 'none' : new Date(c.period.end).toISOString()}`,
    ];
    await this.deps.mailer.send({ to, subject, text: `${lines.join('\n')}\n` });
  }

  /** The organisation's owners and admins, and a workspace-user key's user for its own limit. */
  private async recipients(c: Charged): Promise<string[]> {
    const { policy } = c.entry;
    const admins = await this.deps.database.select(users, {
      where: (u) => and(eq(u.organisation_id, policy.organisationId), inArray(u.role, ['owner', 'admin'])),
    });
    const to = new Set(admins.map((u) => u.email));
    if (policy.kind === 'api_key' && policy.subjectId) {
      const key = await this.deps.database.findOne(apiKeys, 'id', policy.subjectId);
      if (key?.type === 'workspace-user' && key.user_id) {
        const user = await this.deps.database.findOne(users, 'id', key.user_id);
        if (user && user.organisation_id === policy.organisationId) to.add(user.email);
      }
    }
    return [...to];
  }

  /** Sends without the call waiting; failures are logged. `flush()` waits for these (shutdown, tests). */
  private later(send: () => Promise<void>): void {
    const job = send()
      .catch((error: unknown) => this.deps.logger.warn({ err: error instanceof Error ? error.message.slice(0, 300) : String(error) }, 'usage limits: could not send an alert'))
      .finally(() => this.pending.delete(job));
    this.pending.add(job);
  }

  async flush(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending);
  }
}
