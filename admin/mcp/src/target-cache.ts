/**
 * The proxy's reads per call, kept per process for a short time (TTL_MS) so that a steady stream of calls reads the
 * database once per TTL rather than on every call: the MCP server by workspace and slug with its integration, and
 * that an API key may use the workspace (the reader check). Cleared at once, here and in every other process
 * (through the state store's channel), by a write through the MCP administration routes, a member leaving a
 * workspace and an archived workspace. User connections are not kept: an OAuth refresh rewrites them.
 */
import type { Logger, StateStore } from '@gateway/sdk';

/** How long a read is kept by default (MCP_PROXY_CACHE_TTL_MS; 0 keeps nothing). */
export const TARGET_TTL_MS = 5_000;
/** Past this many entries the cache starts again (slugs are the callers' to choose). */
const MAX_ENTRIES = 10_000;
const CHANNEL = 'changes:mcp-proxy-targets';

interface Entry<T> {
  expires: number;
  value: Promise<T>;
}

export class TargetCache<T> {
  private readonly targets = new Map<string, Entry<T | undefined>>();
  private readonly readers = new Map<string, number>();
  /** Bumped by every clear: a read that started before it is not kept. */
  private generation = 0;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly state: StateStore,
    private readonly logger: Logger,
    private readonly ttlMs = TARGET_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.unsubscribe = this.state.subscribe(CHANNEL, () => this.clear());
  }

  stop(): void {
    this.unsubscribe?.();
  }

  /** The target of `workspaceId` and `slug`, loaded at most once per TTL; a miss (undefined) is not kept. */
  target(workspaceId: string, slug: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const key = `${workspaceId}\n${slug}`;
    const held = this.targets.get(key);
    if (held && held.expires > this.now()) return held.value;
    const generation = this.generation;
    const value = load();
    if (this.targets.size >= MAX_ENTRIES) this.targets.clear();
    const entry = { expires: this.now() + this.ttlMs, value };
    this.targets.set(key, entry);
    const forget = () => {
      if (this.targets.get(key) === entry) this.targets.delete(key);
    };
    value.then((found) => {
      if (found === undefined || generation !== this.generation) forget();
    }, forget);
    return value;
  }

  /** Whether the reader check of this key in this workspace passed within the TTL. */
  readerKnown(key: string): boolean {
    const expires = this.readers.get(key);
    return expires !== undefined && expires > this.now();
  }

  /** The reader check passed (in `generation`, read before it started). */
  rememberReader(key: string, generation: number): void {
    if (generation !== this.generation) return;
    if (this.readers.size >= MAX_ENTRIES) this.readers.clear();
    this.readers.set(key, this.now() + this.ttlMs);
  }

  get currentGeneration(): number {
    return this.generation;
  }

  clear(): void {
    this.generation++;
    this.targets.clear();
    this.readers.clear();
  }

  /** After a change: clear here, then in the other processes. */
  async changed(): Promise<void> {
    this.clear();
    await this.state.publish(CHANNEL, String(Date.now())).catch((error: unknown) => {
      this.logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'could not announce an MCP change to other processes; their proxy cache expires within seconds');
    });
  }
}
