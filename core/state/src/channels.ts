/** In-process publish/subscribe: the memory store's channels, and the local fan-out of the Redis store's. */
export class Channels {
  private readonly listeners = new Map<string, Set<(message: string) => void>>();

  /** Returns true when this was the channel's first listener. */
  add(channel: string, listener: (message: string) => void): boolean {
    let set = this.listeners.get(channel);
    const first = !set;
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    return first;
  }

  /** Returns true when the channel has no listener left. */
  remove(channel: string, listener: (message: string) => void): boolean {
    const set = this.listeners.get(channel);
    if (!set) return false;
    set.delete(listener);
    if (set.size > 0) return false;
    this.listeners.delete(channel);
    return true;
  }

  deliver(channel: string, message: string): void {
    const set = this.listeners.get(channel);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(message);
      } catch {
        // A listener's failure is its own; the others still hear the message.
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
