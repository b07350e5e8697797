/**
 * What the limits do when their counters cannot be reached (Redis down, a command timed out): `open` lets the call
 * through unlimited (the default: an outage of the counters is not an outage of the gateway), `closed` refuses it
 * with 503 `limits_unavailable`. Either way the answer comes within the state store's command timeout (1 s), never
 * a 500 or a hang.
 */
export type FailMode = 'open' | 'closed';

/** The mode an environment variable names (`open` or `closed`, case-insensitive); anything else: the default. */
export function failModeOf(value: string | undefined, fallback: FailMode = 'open'): FailMode {
  const v = value?.trim().toLowerCase();
  return v === 'open' || v === 'closed' ? v : fallback;
}
