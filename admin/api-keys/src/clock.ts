/**
 * The time every part of this plugin reads (validation of future dates, the verifier, rotation, notices): the
 * system clock, shifted by an offset that tests move forward to live through a week in a few milliseconds. Nothing
 * outside the process can move it.
 */
export class ApiKeyClock {
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** Moves this clock forward (tests). */
  advance(ms: number): void {
    this.offsetMs += ms;
  }

  /** Sets this clock to `ms` since the epoch (tests). */
  set(ms: number): void {
    this.offsetMs = ms - Date.now();
  }
}
