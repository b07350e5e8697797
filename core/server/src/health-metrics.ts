/**
 * GET /metrics: whether the database and Redis answer. The database reports its own health (HADR: the writer down
 * is degraded); Redis is probed with one GET every PROBE_INTERVAL_MS (every second while it fails) from a timer, never by a scrape or a request,
 * so a scrape costs no I/O and a Redis that hangs is seen within the store's command timeout.
 */
import type { Database, StateStore } from '@gateway/sdk';

const PROBE_INTERVAL_MS = 5000;
/** After a failed probe (Redis down, or still connecting at start) the next comes sooner. */
const RETRY_INTERVAL_MS = 1000;

export class HealthMetrics {
  private redisUp: 0 | 1 = 1;
  private redisFailures = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(
    private readonly database: Database,
    private readonly state: StateStore,
    private readonly redis: boolean,
  ) {
    if (redis) this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.probe(), ms);
    this.timer.unref?.();
  }

  private async probe(): Promise<void> {
    try {
      await this.state.get('gateway:health-probe');
      this.redisUp = 1;
    } catch {
      this.redisUp = 0;
      this.redisFailures++;
    }
    this.schedule(this.redisUp ? PROBE_INTERVAL_MS : RETRY_INTERVAL_MS);
  }

  render(): string {
    const lines = [
      '# HELP gateway_database_up 1 while the database answers (and, in HADR mode, its writer); 0 while degraded.',
      '# TYPE gateway_database_up gauge',
      `gateway_database_up ${this.database.health().status === 'ok' ? 1 : 0}`,
    ];
    if (this.redis)
      lines.push(
        '# HELP gateway_redis_up 1 when the last Redis probe answered, 0 when it failed (REDIS_URL set only).',
        '# TYPE gateway_redis_up gauge',
        `gateway_redis_up ${this.redisUp}`,
        '# HELP gateway_redis_probe_failures_total Redis probes that failed.',
        '# TYPE gateway_redis_probe_failures_total counter',
        `gateway_redis_probe_failures_total ${this.redisFailures}`,
      );
    return `${lines.join('\n')}\n`;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
