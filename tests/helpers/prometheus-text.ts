/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for tests that scrape GET /metrics. It throws on
 * anything a Prometheus server would refuse or that hides a bug: a sample before its family's TYPE, a family declared
 * twice, a malformed name, label or value, a series given twice, a histogram whose buckets are not cumulative or
 * whose +Inf bucket differs from its count.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string | undefined;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(raw: string, line: string): number {
  if (raw === '+Inf') return Number.POSITIVE_INFINITY;
  if (raw === '-Inf') return Number.NEGATIVE_INFINITY;
  if (raw === 'NaN') return Number.NaN;
  if (!/^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`bad value ${JSON.stringify(raw)} in: ${line}`);
  return Number(raw);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`bad labels in: ${line}`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name ${JSON.stringify(name)} in: ${line}`);
    if (name in labels) throw new Error(`label ${name} twice in: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`unquoted label value in: ${line}`);
    let j = eq + 2;
    let value = '';
    for (;;) {
      const c = text[j];
      if (c === undefined) throw new Error(`unterminated label value in: ${line}`);
      if (c === '"') break;
      if (c === '\\') {
        const next = text[j + 1];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`bad escape in: ${line}`);
        j += 2;
        continue;
      }
      if (c === '\n') throw new Error(`newline in label value: ${line}`);
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (i < text.length) {
      if (text[i] !== ',') throw new Error(`expected , between labels in: ${line}`);
      i++;
    }
  }
  return labels;
}

const familyOf = (name: string, families: Map<string, Family>): Family | undefined => {
  const direct = families.get(name);
  if (direct) return direct;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const base = families.get(name.slice(0, -suffix.length));
    if (base && (base.type === 'histogram' || (base.type === 'summary' && suffix !== '_bucket'))) return base;
  }
  return undefined;
};

export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  const seen = new Set<string>();
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      if (kind === 'HELP') {
        if (helps.has(name)) throw new Error(`HELP twice for ${name}`);
        helps.set(name, rest);
      } else {
        if (!TYPES.has(rest)) throw new Error(`bad type in: ${line}`);
        if (families.has(name)) throw new Error(`TYPE twice for ${name}`);
        families.set(name, { name, type: rest as MetricType, help: helps.get(name), samples: [] });
      }
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    const [, name, labelText, rawValue] = m as unknown as [string, string, string | undefined, string];
    const family = familyOf(name, families);
    if (!family) throw new Error(`sample before its TYPE: ${line}`);
    const labels = parseLabels(labelText ?? '', line);
    const key = `${name}{${Object.entries(labels).sort().map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
    if (seen.has(key)) throw new Error(`series twice: ${key}`);
    seen.add(key);
    family.samples.push({ name, labels, value: parseValue(rawValue, line) });
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

function checkHistogram(family: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    let entry = series.get(key);
    if (!entry) series.set(key, (entry = { buckets: [] }));
    if (s.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${s.name} without le`);
      entry.buckets.push([parseValue(le, s.name), s.value]);
    } else if (s.name.endsWith('_count')) entry.count = s.value;
    else if (s.name.endsWith('_sum')) entry.sum = s.value;
  }
  for (const [key, entry] of series) {
    const inf = entry.buckets.find(([le]) => le === Number.POSITIVE_INFINITY);
    if (!inf) throw new Error(`${family.name}${key}: no +Inf bucket`);
    if (entry.count === undefined || entry.sum === undefined) throw new Error(`${family.name}${key}: no _count or _sum`);
    if (inf[1] !== entry.count) throw new Error(`${family.name}${key}: +Inf bucket ${inf[1]} differs from count ${entry.count}`);
    for (let i = 1; i < entry.buckets.length; i++) {
      const [le0, v0] = entry.buckets[i - 1] as [number, number];
      const [le1, v1] = entry.buckets[i] as [number, number];
      if (le1 <= le0 || v1 < v0) throw new Error(`${family.name}${key}: buckets not increasing at le=${le1}`);
    }
  }
}

/** The value of the one sample of `name` whose labels include `labels` (throws when none or several match). */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = familyOf(name, families);
  const matches = (family?.samples ?? []).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (matches.length !== 1) throw new Error(`${matches.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return (matches[0] as Sample).value;
}

/** The sum of the samples of `name` whose labels include `labels` (0 when none). */
export function sampleSum(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = familyOf(name, families);
  return (family?.samples ?? []).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
}
