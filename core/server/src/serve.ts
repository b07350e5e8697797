import type { Gateway } from './app.ts';

/**
 * Listens for a gateway on its settings' port and host, prints the loaded plugin set, and stops gracefully on
 * SIGTERM / SIGINT: no new connections, in-flight requests and streams finish, queues flush, then the process exits.
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
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    // stop(false) refuses new connections and resolves once in-flight requests have finished.
    await server.stop(false);
    await gateway.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  return server;
}
