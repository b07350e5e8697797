import { expect, test } from 'bun:test';
import { windowOf } from './window.ts';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

test('fixed windows aligned in UTC: minute, hour, day, ISO week from Monday', () => {
  const now = at('2025-03-13T15:42:17.250Z'); // a Thursday
  expect([windowOf('rpm', now)].map((w) => [iso(w.start), iso(w.end)])).toEqual([['2025-03-13T15:42:00.000Z', '2025-03-13T15:43:00.000Z']]);
  expect(iso(windowOf('rph', now).start)).toBe('2025-03-13T15:00:00.000Z');
  expect(iso(windowOf('rpd', now).end)).toBe('2025-03-14T00:00:00.000Z');
  expect([iso(windowOf('rpw', now).start), iso(windowOf('rpw', now).end)]).toEqual(['2025-03-10T00:00:00.000Z', '2025-03-17T00:00:00.000Z']);
  // Monday at midnight starts its own week; Sunday night is still the week before.
  expect(iso(windowOf('rpw', at('2025-03-17T00:00:00.000Z')).start)).toBe('2025-03-17T00:00:00.000Z');
  expect(iso(windowOf('rpw', at('2025-03-16T23:59:59.999Z')).start)).toBe('2025-03-10T00:00:00.000Z');
});
