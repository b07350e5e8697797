import { describe, expect, test } from 'bun:test';
import { hadrFromEnv, parseDatabaseUrl, readerFromEnv } from './url.ts';

describe('parseDatabaseUrl', () => {
  test('sqlite paths and memory', () => {
    expect(parseDatabaseUrl('sqlite:./data/gateway.db')).toEqual({ dialect: 'sqlite', path: './data/gateway.db' });
    expect(parseDatabaseUrl('sqlite:///var/lib/gw.db')).toEqual({ dialect: 'sqlite', path: '/var/lib/gw.db' });
    expect(parseDatabaseUrl('sqlite::memory:')).toEqual({ dialect: 'sqlite', path: ':memory:' });
    expect(() => parseDatabaseUrl('sqlite:')).toThrow();
  });

  test('mysql URLs, with escaped credentials and a default port', () => {
    expect(parseDatabaseUrl('mysql://gw:p%40ss@db.local:3307/gateway')).toEqual({
      dialect: 'mysql',
      host: 'db.local',
      port: 3307,
      user: 'gw',
      password: 'p@ss',
      database: 'gateway',
    });
    expect(parseDatabaseUrl('mysql://root@127.0.0.1/test')).toMatchObject({ port: 3306, user: 'root', password: '' });
    expect(() => parseDatabaseUrl('mysql://root@127.0.0.1/')).toThrow(/database name/);
  });

  test('other schemes are refused without echoing credentials', () => {
    expect(() => parseDatabaseUrl('postgres://u:secret@h/db')).toThrow(/postgres:…/);
    try {
      parseDatabaseUrl('postgres://u:secret@h/db');
    } catch (err) {
      expect(String(err)).not.toContain('secret');
    }
  });
});

describe('readerFromEnv', () => {
  test('only when DB_READER_HOST is set', () => {
    expect(readerFromEnv({})).toBeUndefined();
    expect(readerFromEnv({ DB_READER_HOST: 'replica', DB_READER_USER: 'ro', DB_READER_PASS: 'x', DB_READER_PORT: '3307' })).toEqual({
      host: 'replica',
      user: 'ro',
      pass: 'x',
      port: 3307,
    });
  });
});

describe('hadrFromEnv', () => {
  test('MYSQL_WRITER_HADR_MODE=ON only (default OFF)', () => {
    expect(hadrFromEnv({})).toBe(false);
    expect(hadrFromEnv({ MYSQL_WRITER_HADR_MODE: 'OFF' })).toBe(false);
    expect(hadrFromEnv({ MYSQL_WRITER_HADR_MODE: 'on' })).toBe(true);
    expect(hadrFromEnv({ MYSQL_WRITER_HADR_MODE: 'ON' })).toBe(true);
    expect(hadrFromEnv({ MYSQL_WRITER_HADR_MODE: 'yes' })).toBe(false);
  });
});
