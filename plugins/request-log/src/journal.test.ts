import { afterEach, describe, expect, test } from 'bun:test';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal } from './journal.ts';
import { decodeRecords, encodeRecord } from './journal-record.ts';
import type { RequestLogRow } from './row.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function base(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-journal-'));
  dirs.push(dir);
  return join(dir, 'journal');
}
const row = (n: number, body = ''): RequestLogRow =>
  ({ id: `id-${n}`, trace_id: `t-${n}`, endpoint: 'chat', method: 'POST', path: '/x', status: 200, latency_ms: n, created_at: n, request_body: body, metadata: { k: 'é\n' } }) as RequestLogRow;
const records = (from: number, to: number, body = '') => Array.from({ length: to - from }, (_, i) => encodeRecord(row(from + i, body))).join('');
const ids = (text: string) => decodeRecords(text).rows.map((r) => String(r.id));

async function readAll(journal: Journal): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const batch = await journal.read(1024);
    if (!batch) return out;
    out.push(...ids(batch.text));
    await journal.commit(batch.next);
  }
}

describe('journal records', () => {
  test('round trip; a line with a wrong checksum, cut short or not JSON is counted, never returned', () => {
    const good = records(0, 2);
    const damaged = encodeRecord(row(7)).replace('t-7', 't-8');
    const decoded = decodeRecords(`${good}${damaged}garbage\n${encodeRecord(row(9)).slice(0, 20)}`);
    expect(decoded.rows.map((r) => r.id)).toEqual(['id-0', 'id-1']);
    expect(decoded.rows[0]).toEqual(row(0));
    expect(decoded.corrupt).toBe(3);
  });
});

describe('Journal', () => {
  test('appends are read back in order, across segments; replayed segments are deleted', async () => {
    const journal = Journal.open(base(), { maxBytes: 10_000_000, fsync: 'batch', segmentBytes: 2_000 });
    for (let i = 0; i < 10; i++) expect(await journal.append(records(i * 10, i * 10 + 10))).toBe(true);
    expect(readdirSync(journal.dir).filter((n) => n.endsWith('.jsonl')).length).toBeGreaterThan(3);
    expect(journal.pendingBytes).toBe(journal.diskBytes);
    expect(await readAll(journal)).toEqual(Array.from({ length: 100 }, (_, i) => `id-${i}`));
    expect(journal.pendingBytes).toBe(0);
    expect(journal.diskBytes).toBe(0);
    expect(readdirSync(journal.dir).filter((n) => n.endsWith('.jsonl'))).toEqual([]);
    // Appends after a full replay start anew, and survive a restart (the saved cursor must not skip them).
    await journal.append(records(100, 102));
    await journal.close();
    const again = Journal.open(journal.dir, { maxBytes: 10_000_000, fsync: 'batch', segmentBytes: 2_000 });
    expect(await readAll(again)).toEqual(['id-100', 'id-101']);
    await again.close();
  });

  test('the disk budget: an append that would pass it is refused and nothing is written', async () => {
    const one = records(0, 1, 'x'.repeat(400));
    const journal = Journal.open(base(), { maxBytes: Buffer.byteLength(one) * 3 + 10, fsync: 'off' });
    expect([await journal.append(one), await journal.append(one), await journal.append(one), await journal.append(one)]).toEqual([true, true, true, false]);
    expect(journal.diskBytes).toBe(Buffer.byteLength(one) * 3);
    // Replay frees the space.
    const batch = (await journal.read(Buffer.byteLength(one)))!;
    await journal.commit(batch.next);
    await journal.read(1); // moves past nothing; the budget counts files on disk
    expect(journal.diskBytes).toBeLessThanOrEqual(Buffer.byteLength(one) * 3);
    await journal.close();
  });

  test('a restart resumes at the saved cursor; a partial last line (killed mid-append) is cut', async () => {
    const dir = base();
    const first = Journal.open(dir, { maxBytes: 10_000_000, fsync: 'batch' });
    await first.append(records(0, 5));
    await first.append(records(5, 10));
    const batch = (await first.read(Buffer.byteLength(records(0, 5))))!;
    expect(ids(batch.text)).toEqual(['id-0', 'id-1', 'id-2', 'id-3', 'id-4']);
    await first.commit(batch.next);
    // As a SIGKILL would leave it: no close (the lock stays, naming a process that is gone), half a record at the end.
    const segment = readdirSync(first.dir).find((n) => n.endsWith('.jsonl'))!;
    await first.close(); // (its file handle; the lock is put back below as a killed process leaves it)
    appendFileSync(join(first.dir, segment), encodeRecord(row(10)).slice(0, 30));
    writeFileSync(join(first.dir, 'lock'), '999999999');
    const second = Journal.open(dir, { maxBytes: 10_000_000, fsync: 'batch' });
    expect(second.dir).toBe(first.dir);
    expect(await readAll(second)).toEqual(['id-5', 'id-6', 'id-7', 'id-8', 'id-9']);
    await second.append(records(11, 12));
    expect(await readAll(second)).toEqual(['id-11']);
    await second.close();
    // Nothing waits: the directory is removed at close.
    expect(existsSync(second.dir)).toBe(false);
  });

  test('nothing on disk until the first append; an empty journal leaves no directory at close', async () => {
    const dir = base();
    const journal = Journal.open(dir, { maxBytes: 1_000_000, fsync: 'batch' });
    expect(existsSync(dir)).toBe(false);
    expect(await journal.read(1024)).toBeUndefined();
    await journal.close();
    expect(existsSync(dir)).toBe(false);
    const used = Journal.open(dir, { maxBytes: 1_000_000, fsync: 'batch' });
    await used.append(records(0, 1));
    expect(readFileSync(join(dir, 'lock'), 'utf8')).toBe(String(process.pid));
    await used.close();
    // Its record waits for the next start, which finds the directory at open.
    const next = Journal.open(dir, { maxBytes: 1_000_000, fsync: 'batch' });
    expect(next.pendingBytes).toBeGreaterThan(0);
    expect(await readAll(next)).toEqual(['id-0']);
    await next.close();
    expect(existsSync(dir)).toBe(false);
  });

  test('a directory held by a running process is skipped for the next slot; its lock names this process', async () => {
    const dir = base();
    const held = Journal.open(dir, { maxBytes: 1_000_000, fsync: 'off' });
    await held.append(records(0, 1)); // a directory is claimed at the first append
    writeFileSync(join(held.dir, 'lock'), String(process.ppid)); // a live process other than this one
    const other = Journal.open(dir, { maxBytes: 1_000_000, fsync: 'off' });
    expect(other.dir).toBe(`${dir}-1`);
    expect(readFileSync(join(other.dir, 'lock'), 'utf8')).toBe(String(process.pid));
    await other.close();
    // A second claim in this same process (two gateways in one test process) gets a slot of its own too.
    const third = Journal.open(dir, { maxBytes: 1_000_000, fsync: 'off' });
    expect(third.dir).toBe(`${dir}-1`);
    writeFileSync(join(held.dir, 'lock'), String(process.pid));
    const fourth = Journal.open(dir, { maxBytes: 1_000_000, fsync: 'off' });
    expect(fourth.dir).toBe(`${dir}-2`);
    await Promise.all([third.close(), fourth.close(), held.close()]);
  });
});
