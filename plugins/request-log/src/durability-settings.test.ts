import { describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { durabilityFromEnv } from './durability-settings.ts';

describe('durabilityFromEnv', () => {
  test('defaults: 64 MiB queue, a journal beside the SQLite file, 1 GiB, fsync per batch, nice 19 / 0', () => {
    expect(durabilityFromEnv({}, 'sqlite:./data/gw.db')).toEqual({
      queueMaxBytes: 64 * 1024 * 1024,
      writerNice: { base: 19, behind: 0 },
      journal: { dir: `${resolve('./data/gw.db')}.log-journal`, maxBytes: 1024 * 1024 * 1024, fsync: 'batch' },
    });
  });

  test('MySQL: one directory per database (credentials left out of the name); a given directory holds it', () => {
    const a = durabilityFromEnv({}, 'mysql://u:secret@db:3306/one').journal!.dir;
    const b = durabilityFromEnv({}, 'mysql://other:pw@db:3306/one').journal!.dir;
    const c = durabilityFromEnv({}, 'mysql://u:secret@db:3306/two').journal!.dir;
    expect(a).toBe(b);
    expect(a).not.toBe(c);
    expect(a).not.toContain('secret');
    expect(durabilityFromEnv({ LOG_JOURNAL_DIR: '/var/lib/gw' }, 'mysql://u@db:3306/one').journal!.dir).toBe(`/var/lib/gw/${a.split('/').pop()}`);
  });

  test('OFF, or an in-memory database: no journal', () => {
    expect(durabilityFromEnv({ LOG_JOURNAL_DIR: 'off' }, 'sqlite:./x.db').journal).toBeUndefined();
    expect(durabilityFromEnv({}, 'sqlite::memory:').journal).toBeUndefined();
  });

  test('settings given; malformed ones throw with the name', () => {
    const s = durabilityFromEnv(
      { LOG_QUEUE_MAX_BYTES: '2097152', LOG_JOURNAL_MAX_BYTES: '10485760', LOG_JOURNAL_FSYNC: 'OFF', GATEWAY_LOG_WRITER_NICE: '10', GATEWAY_LOG_WRITER_NICE_BEHIND: '5' },
      'sqlite:/tmp/gw.db',
    );
    expect(s).toMatchObject({ queueMaxBytes: 2097152, writerNice: { base: 10, behind: 5 }, journal: { maxBytes: 10485760, fsync: 'off' } });
    expect(() => durabilityFromEnv({ LOG_QUEUE_MAX_BYTES: '64MB' }, 'sqlite:/tmp/gw.db')).toThrow('LOG_QUEUE_MAX_BYTES');
    expect(() => durabilityFromEnv({ LOG_QUEUE_MAX_BYTES: '1000' }, 'sqlite:/tmp/gw.db')).toThrow('at least');
    expect(() => durabilityFromEnv({ LOG_JOURNAL_MAX_BYTES: '-1' }, 'sqlite:/tmp/gw.db')).toThrow('LOG_JOURNAL_MAX_BYTES');
    expect(() => durabilityFromEnv({ LOG_JOURNAL_FSYNC: 'always' }, 'sqlite:/tmp/gw.db')).toThrow('LOG_JOURNAL_FSYNC');
    expect(() => durabilityFromEnv({ GATEWAY_LOG_WRITER_NICE_BEHIND: '-30' }, 'sqlite:/tmp/gw.db')).toThrow('GATEWAY_LOG_WRITER_NICE_BEHIND');
  });
});
