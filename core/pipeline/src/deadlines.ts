/**
 * One timer for every in-flight attempt instead of a setTimeout and clearTimeout each: an attempt registers a
 * watch (a Set insertion) and removes it when done. A tick every TICK_MS fires what is due, so deadlines are met
 * within one tick. The same tick runs each watch's `slow` callback once the attempt has been pending for a while:
 * work that only slow attempts need (listening for the client going away) costs fast ones nothing.
 */
export const TICK_MS = 25;

export interface Watch {
  /** performance.now() after which `expire` runs. */
  readonly deadline: number;
  expire(): void;
  /** performance.now() after which `slow` runs once, if the watch is still there. */
  readonly slowAt?: number;
  slow?(): void;
}

/** Watches whose `slow` already ran (a Set rather than a flag on the watch, so watches can be plain classes). */
const slowDone = new WeakSet<Watch>();

const watches = new Set<Watch>();
let timer: Timer | undefined;

function tick(): void {
  const now = performance.now();
  for (const w of watches) {
    if (w.slow && w.slowAt !== undefined && now >= w.slowAt && !slowDone.has(w)) {
      slowDone.add(w);
      w.slow();
    }
    if (now >= w.deadline) {
      watches.delete(w);
      w.expire();
    }
  }
  if (watches.size === 0 && timer) {
    clearInterval(timer);
    timer = undefined;
  }
}

/** Starts watching (allocates nothing); `untrack` stops it. */
export function track(w: Watch): void {
  watches.add(w);
  if (!timer) {
    timer = setInterval(tick, TICK_MS);
    timer.unref();
  }
}

/** Stops watching (idempotent). */
export function untrack(w: Watch): void {
  watches.delete(w);
}

/** Starts watching; the returned function stops it (idempotent). */
export function watch(w: Watch): () => void {
  track(w);
  return () => untrack(w);
}

/** For tests: how many attempts are being watched. */
export function watchedCount(): number {
  return watches.size;
}
