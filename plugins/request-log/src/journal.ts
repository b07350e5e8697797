/**
 * The request log's journal: an append-only queue on local disk for the rows the database cannot take now (it is
 * down, or slower than the traffic). Records (journal-record.ts) go to numbered segment files of about
 * `segmentBytes`; a cursor file says how far replay has got. A segment replayed to its end is deleted, so the disk
 * holds only what waits. Every operation after `open` is asynchronous and runs off the request path; appends and
 * reads are serialised by the queue's one drain loop.
 *
 * Crash safety: an append is written in one `write` of whole lines, then (fsync `batch`) flushed to the device. A
 * process killed mid-append leaves at most a partial last line, cut off at the next open. The cursor is saved after
 * each replayed batch without fsync: after a crash, replay may repeat the last batches, which the insert's "ignore
 * duplicates" (each row's id was fixed at enqueue) turns into no-ops.
 *
 * One process per directory: `open` takes a lock file holding the pid; a directory whose lock names a live other
 * process is skipped for the next slot (`<dir>-1`, `<dir>-2`, …), so gateways sharing a data directory do not mix
 * journals. A lock left by a killed process is taken over, with its journal.
 */
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, readFile, rename, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

export type FsyncPolicy = 'batch' | 'off';

export interface JournalOptions {
  /** Disk budget: the journal's files never grow past it (an append that would is refused). */
  maxBytes: number;
  /** `batch`: each append is flushed to the device before it counts as journaled; `off`: left to the OS. */
  fsync: FsyncPolicy;
  /** A new segment file is started past this size. Default 16 MiB. */
  segmentBytes?: number;
}

interface Position {
  segment: number;
  offset: number;
}

export interface JournalBatch {
  /** Whole records (the text ends with a line break). */
  text: string;
  /** Where replay goes on from once these are stored. */
  next: Position;
}

const LOCK = 'lock';
const CURSOR = 'cursor';
const SLOTS = 16;
const segmentName = (n: number) => `${String(n).padStart(12, '0')}.jsonl`;
const isSegment = (name: string) => /^\d{12}\.jsonl$/.test(name);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Directories this process holds (several gateways in one process, as tests run them, each take their own). */
const held = new Set<string>();

/** Takes the first slot of `base` (then `base-1`, …) whose lock is free or left by a process that is gone. */
function claim(base: string): string {
  for (let slot = 0; slot < SLOTS; slot++) {
    const dir = slot === 0 ? base : `${base}-${slot}`;
    if (held.has(dir)) continue;
    mkdirSync(dir, { recursive: true });
    const lock = join(dir, LOCK);
    try {
      closeSync(openSync(lock, 'wx'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lock, 'utf8').trim());
      // The same pid as ours is a lock from an earlier life (a container restarts with the same pid).
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) continue;
    }
    writeFileSync(lock, String(process.pid));
    held.add(dir);
    return dir;
  }
  throw new Error(`every request-log journal slot of ${base} is held by a running process`);
}

export class Journal {
  /** Segment numbers and sizes, oldest first; the last is the one appended to. */
  private readonly segments: { n: number; size: number }[] = [];
  private cursor: Position;
  private handle: FileHandle | undefined;
  private readonly segmentBytes: number;
  private closed = false;
  private readBuffer: Buffer = Buffer.alloc(0);
  /** Appends (the spill) and reads and commits (the replay) run from two loops: one at a time here. */
  private turn: Promise<unknown> = Promise.resolve();

  /** The directory this process holds; undefined until it needs one (no journal on disk yet, nothing appended). */
  private claimed: string | undefined;

  private constructor(
    private readonly base: string,
    private readonly o: JournalOptions,
  ) {
    this.segmentBytes = o.segmentBytes ?? 16 * 1024 * 1024;
    this.cursor = { segment: 1, offset: 0 };
  }

  /**
   * A journal under `base`. When a directory of it exists (an earlier process's records, or its lock), it is claimed
   * now and what it holds is recovered; otherwise nothing is created until the first append, so that a gateway whose
   * log never needed the journal (the usual case, and every test on a fresh database) leaves no directory behind.
   */
  static open(base: string, o: JournalOptions): Journal {
    const journal = new Journal(base, o);
    for (let slot = 0; slot < SLOTS; slot++) {
      if (existsSync(slot === 0 ? base : `${base}-${slot}`)) {
        journal.claim();
        break;
      }
    }
    return journal;
  }

  /** The directory held (or, before the first append, the one that will be tried first). */
  get dir(): string {
    return this.claimed ?? this.base;
  }

  /** Takes a directory (sync I/O: at start, or once at the first append, never on a request's path). */
  private claim(): string {
    if (this.claimed) return this.claimed;
    const dir = claim(this.base);
    this.claimed = dir;
    const names = readdirSync(dir).filter(isSegment).sort();
    for (const name of names) this.segments.push({ n: Number(name.slice(0, 12)), size: statSync(join(dir, name)).size });
    this.cursor = this.readCursor();
    this.cutPartialTail();
    return dir;
  }

  /** Bytes of the journal's files on disk. */
  get diskBytes(): number {
    let total = 0;
    for (const s of this.segments) total += s.size;
    return total;
  }

  /** Bytes not replayed yet. */
  get pendingBytes(): number {
    let total = 0;
    for (const s of this.segments) if (s.n >= this.cursor.segment) total += s.n === this.cursor.segment ? s.size - this.cursor.offset : s.size;
    return total;
  }

  get maxBytes(): number {
    return this.o.maxBytes;
  }

  /**
   * Appends whole records. False (nothing written) when they would take the journal past its disk budget. Throws
   * on an I/O error (the caller counts the records as dropped).
   */
  append(text: string): Promise<boolean> {
    return this.exclusive(() => this.appendNow(text));
  }

  /** The next records to replay, about `maxBytes` of them (at least one), or undefined when none wait. */
  read(maxBytes: number): Promise<JournalBatch | undefined> {
    return this.exclusive(() => this.readNow(maxBytes));
  }

  /** Records up to `next` are stored: replay goes on from there (saved for the next start). */
  commit(next: Position): Promise<void> {
    return this.exclusive(() => this.commitNow(next));
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn, fn);
    this.turn = run.catch(() => undefined);
    return run;
  }

  private async appendNow(text: string): Promise<boolean> {
    if (this.closed) throw new Error('the request-log journal is closed');
    const bytes = Buffer.byteLength(text);
    this.claim();
    if (this.diskBytes + bytes > this.o.maxBytes) return false;
    let last = this.segments.at(-1);
    if (!last || (last.size > 0 && last.size + bytes > this.segmentBytes)) {
      await this.handle?.close();
      this.handle = undefined;
      // Never below the cursor: a number the saved cursor has passed would be taken for replayed at the next start.
      last = { n: Math.max((last?.n ?? 0) + 1, this.cursor.segment), size: 0 };
      this.segments.push(last);
      if (this.segments.length === 1) this.cursor = { segment: last.n, offset: 0 };
    }
    this.handle ??= await open(join(this.claim(), segmentName(last.n)), 'a');
    // The string is written as UTF-8 directly (no Buffer copy of every append); a short write goes on from its end.
    const { bytesWritten } = await this.handle.write(text);
    if (bytesWritten < bytes) {
      const rest = Buffer.from(text).subarray(bytesWritten);
      let written = 0;
      while (written < rest.length) written += (await this.handle.write(rest, written)).bytesWritten;
    }
    if (this.o.fsync === 'batch') await this.handle.datasync();
    last.size += bytes;
    return true;
  }

  private async readNow(maxBytes: number): Promise<JournalBatch | undefined> {
    for (;;) {
      const index = this.segments.findIndex((s) => s.n >= this.cursor.segment);
      if (index < 0) return undefined;
      const segment = this.segments[index]!;
      if (segment.n !== this.cursor.segment) this.cursor = { segment: segment.n, offset: 0 };
      const left = segment.size - this.cursor.offset;
      if (left <= 0) {
        if (index === this.segments.length - 1) return undefined;
        await this.dropSegment(segment.n);
        continue;
      }
      const file = await open(join(this.dir, segmentName(segment.n)), 'r');
      try {
        let want = Math.min(left, maxBytes);
        for (;;) {
          // One read buffer, kept: a replay reads megabytes per batch, and fresh ones would pile up until a GC.
          if (this.readBuffer.length < want) this.readBuffer = Buffer.allocUnsafe(want);
          const buffer = this.readBuffer;
          const { bytesRead } = await file.read(buffer, 0, want, this.cursor.offset);
          const end = buffer.subarray(0, bytesRead).lastIndexOf(10);
          if (end >= 0) {
            return { text: buffer.toString('utf8', 0, end + 1), next: { segment: segment.n, offset: this.cursor.offset + end + 1 } };
          }
          // One record longer than the read: read more (a size recorded is always whole lines).
          if (want >= left) return { text: '', next: { segment: segment.n, offset: segment.size } };
          want = Math.min(left, want * 2);
        }
      } finally {
        await file.close();
      }
    }
  }

  private async commitNow(next: Position): Promise<void> {
    this.cursor = next;
    // Segments wholly replayed, except the one appended to, are deleted at once.
    while (this.segments.length > 1 && this.segments[0]!.n < next.segment) await this.dropSegment(this.segments[0]!.n);
    const first = this.segments[0];
    if (first && this.segments.length > 1 && first.n === next.segment && next.offset >= first.size) await this.dropSegment(first.n);
    // The segment appended to, replayed to its end: emptied so its space returns (the next append starts anew).
    const last = this.segments.at(-1);
    if (this.segments.length === 1 && last && last.n === next.segment && next.offset >= last.size && last.size > 0) {
      await this.handle?.close();
      this.handle = undefined;
      await rm(join(this.dir, segmentName(last.n)), { force: true });
      this.segments.pop();
      this.cursor = { segment: last.n + 1, offset: 0 };
    }
    const tmp = join(this.dir, `${CURSOR}.tmp`);
    await writeFile(tmp, `${this.cursor.segment} ${this.cursor.offset}`);
    await rename(tmp, join(this.dir, CURSOR));
  }

  /** Releases the directory (its files stay for the next start). */
  close(): Promise<void> {
    return this.exclusive(() => this.closeNow());
  }

  private async closeNow(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.claimed) return;
    held.delete(this.dir);
    await this.handle?.close();
    this.handle = undefined;
    const lock = join(this.dir, LOCK);
    if ((await readFile(lock, 'utf8').catch(() => '')).trim() !== String(process.pid)) return;
    // Nothing waits: the directory goes (a fresh database per test run must not leave one behind each time).
    if (this.segments.length === 0) await rm(this.dir, { recursive: true, force: true });
    else await rm(lock, { force: true });
  }

  private async dropSegment(n: number): Promise<void> {
    const index = this.segments.findIndex((s) => s.n === n);
    if (index < 0) return;
    if (index === this.segments.length - 1) {
      await this.handle?.close();
      this.handle = undefined;
    }
    this.segments.splice(index, 1);
    await rm(join(this.dir, segmentName(n)), { force: true });
  }

  private readCursor(): Position {
    const first = this.segments[0];
    const fallback = { segment: first?.n ?? 1, offset: 0 };
    const file = join(this.dir, CURSOR);
    if (!existsSync(file)) return fallback;
    const [segment, offset] = readFileSync(file, 'utf8').trim().split(' ').map(Number);
    if (!Number.isInteger(segment) || !Number.isInteger(offset)) return fallback;
    // Segments before the cursor were replayed (a crash came before their deletion).
    for (const s of [...this.segments]) if (s.n < segment!) this.removeSync(s.n);
    return { segment: segment!, offset: offset! };
  }

  /** A crash mid-append leaves a partial last line: cut at the last line break (at open, before any traffic). */
  private cutPartialTail(): void {
    const last = this.segments.at(-1);
    if (!last || last.size === 0) return;
    const path = join(this.dir, segmentName(last.n));
    const fd = openSync(path, 'r+');
    try {
      let end = last.size;
      const chunk = Buffer.allocUnsafe(64 * 1024);
      let cut = 0;
      while (end > 0) {
        const start = Math.max(0, end - chunk.length);
        const n = readSync(fd, chunk, 0, end - start, start);
        const at = chunk.subarray(0, n).lastIndexOf(10);
        if (at >= 0) {
          cut = start + at + 1;
          break;
        }
        end = start;
      }
      if (cut < last.size) {
        ftruncateSync(fd, cut);
        last.size = cut;
      }
    } finally {
      closeSync(fd);
    }
  }

  private removeSync(n: number): void {
    const index = this.segments.findIndex((s) => s.n === n);
    if (index >= 0) this.segments.splice(index, 1);
    rmSync(join(this.dir, segmentName(n)), { force: true });
  }
}
