// Where logs go: readable lines on a terminal or with LOG_FORMAT=pretty, pino's JSON lines otherwise.
import { describe, expect, test } from 'bun:test';
import { logDestination, prettyLine } from './log-format.ts';

const stream = (isTTY: boolean) => {
  const written: string[] = [];
  return { written, out: { isTTY, write: (text: string) => written.push(text) > 0 } as unknown as NodeJS.WriteStream };
};
const LINE = `${JSON.stringify({ level: 40, time: Date.UTC(2026, 10, 26, 14, 5, 12, 345), service: 'gateway', port: 8787, name: 'a b', msg: 'hello' })}\n`;

describe('log destination', () => {
  test('unset on a terminal: readable lines; unset elsewhere: pino JSON (no destination of ours)', () => {
    const tty = stream(true);
    const destination = logDestination(undefined, tty.out);
    expect(destination).toBeDefined();
    destination!.write(LINE);
    expect(Bun.stripANSI(tty.written[0]!)).toBe('14:05:12.345 WARN  hello port=8787 name="a b"\n');
    expect(logDestination(undefined, stream(false).out)).toBeUndefined();
  });

  test('LOG_FORMAT wins over the terminal test; no colours when not a terminal', () => {
    expect(logDestination('json', stream(true).out)).toBeUndefined();
    const piped = stream(false);
    logDestination('pretty', piped.out)!.write(LINE);
    expect(piped.written[0]).toBe('14:05:12.345 WARN  hello port=8787 name="a b"\n');
  });

  test("an error's stack goes below its line; a line that is not JSON passes unchanged", () => {
    const err = { type: 'Error', message: 'boom', stack: 'Error: boom\n    at here' };
    const text = prettyLine(JSON.stringify({ level: 50, time: 0, msg: 'failed', err }), false);
    expect(text).toBe('00:00:00.000 ERROR failed err=boom\n    Error: boom\n        at here\n');
    expect(prettyLine('not json', false)).toBe('not json\n');
  });
});
