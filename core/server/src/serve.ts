import type { Gateway } from './app.ts';
import { drain } from './drain.ts';

const SIGNAL_NUMBERS: Record<string, number> = { SIGINT: 2, SIGTERM: 15 };

/**
 * Listens for a gateway on its settings' port and host, prints the loaded plugin set, and stops gracefully on
 * SIGTERM / SIGINT: /health/ready turns 503, no new connections, in-flight requests and streams finish, queues
 * flush, then the process exits (0). In-flight work gets GATEWAY_DRAIN_TIMEOUT_MS: then open streams end with the
 * `gateway_shutting_down` error frame, the rest is cut, and the process exits 1. A second signal exits at once.
 */
export function serve(gateway: Gateway): ReturnType<typeof Bun.serve> {
  const { settings, logger, plugins } = gateway;
  logger.info(
    {
      loaded: plugins.loaded.map((p) => p.name),
      providers: [...plugins.registry.providers.keys()],
      guardrails: [...plugins.registry.guardrails.keys()],
    },
    `loaded ${plugins.loaded.length} plugins`,
  );
  for (const refusal of plugins.refused) logger.warn(refusal, `plugin refused: ${refusal.name}: ${refusal.reason}`);
  for (const name of plugins.skipped) logger.info({ name }, `plugin disabled: ${name}`);

  const server = Bun.serve({
    port: settings.port,
    hostname: settings.host,
    // The gateway enforces MAX_REQUEST_BODY_BYTES itself (readBody), so that a 413 carries its error body; Bun's own
    // limit would answer first with an empty one.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    idleTimeout: 255,
    fetch: (request) => gateway.handle(request),
  });
  logger.info({ port: server.port, host: settings.host }, `gateway listening on http://${settings.host}:${server.port}`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, `second ${signal}: exiting now, without waiting for in-flight requests`);
      process.exit(128 + (SIGNAL_NUMBERS[signal] ?? 15));
    }
    stopping = true;
    gateway.readiness.draining = true;
    logger.info(
      { signal, drainTimeoutMs: settings.drainTimeoutMs },
      `shutting down: finishing in-flight requests for at most ${settings.drainTimeoutMs} ms (send ${signal} again to exit at once)`,
    );
    // stop(false) refuses new connections and resolves once in-flight requests have finished.
    const onTime = await drain({ drained: server.stop(false), cut: () => void server.stop(true), close: () => gateway.close() }, settings.drainTimeoutMs, logger);
    logger.info('stopped');
    process.exit(onTime ? 0 : 1);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  return server;
}
