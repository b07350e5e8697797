import { describe, expect, test } from 'bun:test';
import { Errors, GatewayError } from '@gateway/sdk';
import { isConnectionError, WriterHealth, writerUnavailableIn } from './writer-health.ts';

const driverError = (code: string, fatal?: boolean) => Object.assign(new Error(`${code} happened`), { code, ...(fatal === undefined ? {} : { fatal }) });

describe('what counts as the writer being unreachable', () => {
  test.each(['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'PROTOCOL_CONNECTION_LOST', 'ER_SERVER_SHUTDOWN'])('%s', (code) =>
    expect(isConnectionError(driverError(code))).toBe(true),
  );

  test('a fatal driver error, also when wrapped as a cause (drizzle does)', () => {
    expect(isConnectionError(driverError('ER_ACCESS_DENIED_ERROR', true))).toBe(true);
    expect(isConnectionError(new Error('Failed query: insert …', { cause: driverError('ECONNRESET') }))).toBe(true);
  });

  test('statement errors are not', () => {
    expect(isConnectionError(driverError('ER_DUP_ENTRY', false))).toBe(false);
    expect(isConnectionError(driverError('ER_PARSE_ERROR'))).toBe(false);
    expect(isConnectionError(new Error('no code'))).toBe(false);
    expect(isConnectionError(undefined)).toBe(false);
  });

  test('the 503 is found inside a wrapper', () => {
    const unavailable = Errors.writerUnavailable();
    expect(writerUnavailableIn(new Error('Failed query', { cause: unavailable }))).toBe(unavailable);
    expect(writerUnavailableIn(Errors.badRequest('x'))).toBeUndefined();
  });
});

describe('WriterHealth', () => {
  test('down on a connection failure, 503 at once while down, up again when the probe answers', async () => {
    let reachable = true;
    const health = new WriterHealth(async () => {
      if (!reachable) throw driverError('ECONNREFUSED');
    }, { heartbeatMs: 20, probeMs: 10 });
    try {
      expect(await health.run(async () => 1)).toBe(1);
      // A statement error passes through untouched and changes nothing.
      const duplicate = driverError('ER_DUP_ENTRY', false);
      await expect(health.run(() => Promise.reject(duplicate))).rejects.toBe(duplicate);
      expect(health.health()).toEqual({ status: 'ok' });

      reachable = false;
      const refused = await health.run(() => Promise.reject(driverError('ECONNREFUSED'))).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(GatewayError);
      expect((refused as GatewayError).status).toBe(503);
      expect(health.health()).toEqual({ status: 'degraded', reason: 'writer database unavailable (ECONNREFUSED: ECONNREFUSED happened)' });
      let ran = false;
      await expect(health.run(async () => (ran = true))).rejects.toBeInstanceOf(GatewayError);
      expect(ran).toBe(false);

      reachable = true;
      for (let i = 0; i < 100 && health.isDown; i++) await Bun.sleep(10);
      expect(health.health()).toEqual({ status: 'ok' });
      expect(await health.run(async () => 2)).toBe(2);
    } finally {
      health.stop();
    }
  });

  test('the heartbeat notices an idle writer going away', async () => {
    let reachable = true;
    const health = new WriterHealth(async () => {
      if (!reachable) throw driverError('PROTOCOL_CONNECTION_LOST', true);
    }, { heartbeatMs: 10, probeMs: 10 });
    try {
      reachable = false;
      for (let i = 0; i < 100 && !health.isDown; i++) await Bun.sleep(10);
      expect(health.health().status).toBe('degraded');
    } finally {
      health.stop();
    }
  });
});
