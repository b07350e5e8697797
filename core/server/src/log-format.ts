import type { DestinationStream } from 'pino';

const LEVELS: Record<number, [name: string, colour: string]> = {
  10: ['TRACE', '\x1b[90m'],
  20: ['DEBUG', '\x1b[36m'],
  30: ['INFO ', '\x1b[32m'],
  40: ['WARN ', '\x1b[33m'],
  50: ['ERROR', '\x1b[31m'],
  60: ['FATAL', '\x1b[35m'],
};
const RESET = '\x1b[0m';
const DIM = '\x1b[2m';
/** Written by every line or shown elsewhere on it: not repeated as `key=value`. */
const SKIPPED = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname']);

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

/**
 * One pino JSON line as a line a person reads: `12:04:05.123 INFO  message key=value …`, an error's stack below it.
 * Only for LOG_FORMAT=pretty or a terminal; the cost is paid per line written, never per request that logs nothing.
 */
export function prettyLine(json: string, colour: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const [name, tint] = LEVELS[entry.level as number] ?? ['LOG  ', ''];
  const time = new Date(typeof entry.time === 'number' ? entry.time : Date.now()).toISOString().slice(11, 23);
  const fields: string[] = [];
  let stack = '';
  for (const [k, v] of Object.entries(entry)) {
    if (SKIPPED.has(k) || v === undefined) continue;
    if ((k === 'err' || k === 'error') && v !== null && typeof v === 'object' && typeof (v as { stack?: unknown }).stack === 'string') {
      stack = `\n    ${String((v as { stack: string }).stack).split('\n').join('\n    ')}`;
      fields.push(`${k}=${value((v as { message?: unknown }).message ?? '')}`);
    } else fields.push(`${k}=${value(v)}`);
  }
  const level = colour ? `${tint}${name}${RESET}` : name;
  const rest = fields.length ? ` ${colour ? DIM : ''}${fields.join(' ')}${colour ? RESET : ''}` : '';
  return `${colour ? DIM : ''}${time}${colour ? RESET : ''} ${level} ${String(entry.msg ?? '')}${rest}${stack}\n`;
}

/**
 * Where logs go: readable lines when LOG_FORMAT=pretty, or when unset and stdout is a terminal; pino's JSON lines on
 * stdout otherwise (undefined: pino's own destination), which is what log shippers read.
 */
export function logDestination(format: 'pretty' | 'json' | undefined, out: NodeJS.WriteStream = process.stdout): DestinationStream | undefined {
  const pretty = format === 'pretty' || (format === undefined && out.isTTY === true);
  if (!pretty) return undefined;
  const colour = out.isTTY === true && !process.env.NO_COLOR;
  return { write: (line: string) => void out.write(prettyLine(line, colour)) };
}
