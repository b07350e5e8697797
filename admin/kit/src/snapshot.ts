/**
 * A stored object set the gateway reads on the hot path (integrations, virtual keys, saved configs): held whole in
 * memory so a request does no database round trip, reloaded when it changes. A write in this process reloads here
 * before it answers and publishes on the state store's channel; every other process sharing the Redis reloads on
 * that message (well within a second). A slow periodic reload covers a lost message. A failed reload (database
 * down) keeps the last good snapshot.
 */
import type { Logger, StateStore } from '@gateway/sdk';

export interface SnapshotOptions<T> {
  /** Names the change channel: `changes:<name>`. */
  name: string;
  state: StateStore;
  load: () => Promise<T>;
  logger?: Logger;
  /** Reload anyway this often; 0 disables. Default 60 s. */
  refreshMs?: number;
  /**
   * Called after every successful load with the new value and the one it replaces (undefined at the first), so an
   * owner can drop what it derived from the old set; a load that hands back the same object changed nothing.
   */
  onReload?: (value: T, previous: T | undefined) => void;
}

export class StoredSnapshot<T> {
  private value: T | undefined;
  private loading: Promise<void> | undefined;
  private again = false;
  private unsubscribe: (() => void) | undefined;
  private timer: Timer | undefined;
  /** Bumped by every completed reload (tests wait on it). */
  version = 0;

  constructor(private readonly o: SnapshotOptions<T>) {}

  private get channel(): string {
    return `changes:${this.o.name}`;
  }

  /** The current set; start() must have resolved. */
  get current(): T {
    if (this.value === undefined) throw new Error(`snapshot ${this.o.name} read before start()`);
    return this.value;
  }

  async start(): Promise<void> {
    this.unsubscribe = this.o.state.subscribe(this.channel, () => void this.reload());
    await this.reload();
    if (this.value === undefined) this.set(await this.o.load()); // the first load must succeed
    const every = this.o.refreshMs ?? 60_000;
    if (every > 0) {
      this.timer = setInterval(() => void this.reload(), every);
      this.timer.unref();
    }
  }

  /** Reloads now; concurrent calls share one load, and a call during a load runs one more after it. */
  reload(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.again = false;
        try {
          this.set(await this.o.load());
          this.version++;
        } catch (error) {
          this.o.logger?.warn({ snapshot: this.o.name, error: error instanceof Error ? error.message.slice(0, 300) : String(error) }, 'could not reload stored objects; keeping the last ones');
        }
      } while (this.again);
    })().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private set(value: T): void {
    const previous = this.value;
    this.value = value;
    this.o.onReload?.(value, previous);
  }

  /** After a write in this process: reload here, then tell the other processes. */
  async changed(): Promise<void> {
    await this.reload();
    await this.o.state.publish(this.channel, String(Date.now())).catch((error: unknown) => {
      this.o.logger?.warn({ snapshot: this.o.name, error: error instanceof Error ? error.message : String(error) }, 'could not announce a change to other processes; they pick it up at their next periodic reload');
    });
  }

  stop(): void {
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
  }
}
