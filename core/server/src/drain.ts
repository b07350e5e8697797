import { interruptOpenStreams } from '@gateway/pipeline';
import { GatewayError, type Logger } from '@gateway/sdk';

/** The frame an open stream ends with when the drain deadline passes. */
export function shuttingDownError(): GatewayError {
  return new GatewayError({
    code: 'gateway_shutting_down',
    type: 'service_unavailable',
    status: 503,
    message: 'The gateway is shutting down and its drain deadline passed before this stream ended; try again',
    retryable: true,
    phase: 'server',
  });
}

/** How long the frames written at the deadline get to reach their clients before the sockets are closed. */
const FRAME_GRACE_MS = 1_000;
/** The longest the queues' flush and the connections' close may take after the drain. */
const CLOSE_LIMIT_MS = 5_000;

export interface Drainable {
  /** Resolves once every in-flight request and stream has ended (Bun's server.stop(false)). */
  drained: Promise<unknown>;
  /** Closes every connection at once (Bun's server.stop(true)). */
  cut(): void;
  /** Flushes queues and closes connections (gateway.close()). */
  close(): Promise<void>;
}

/**
 * Waits for in-flight work up to `deadlineMs`; past it, ends open streams with the `gateway_shutting_down` frame,
 * gives the frames a moment, cuts the rest, then flushes (bounded). Resolves to whether everything ended in time.
 */
export async function drain(target: Drainable, deadlineMs: number, logger: Logger): Promise<boolean> {
  let timer: Timer | undefined;
  const onTime = await Promise.race([
    target.drained.then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), deadlineMs))),
  ]);
  clearTimeout(timer);
  if (!onTime) {
    const streams = interruptOpenStreams(shuttingDownError());
    logger.warn({ streams, drainTimeoutMs: deadlineMs }, `drain deadline passed: ${streams} open streams ended with an error frame, other requests cut`);
    await Promise.race([target.drained, Bun.sleep(FRAME_GRACE_MS)]);
    target.cut();
  }
  await Promise.race([
    target.close(),
    Bun.sleep(CLOSE_LIMIT_MS).then(() => logger.warn({ limitMs: CLOSE_LIMIT_MS }, 'closing the queues and connections took too long; exiting anyway')),
  ]);
  return onTime;
}
