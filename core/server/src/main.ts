import { createGateway, type Gateway } from './app.ts';
import { serve } from './serve.ts';
import { describeError, refuseStart } from './start-refusal.ts';

/**
 * Starts the gateway on the environment of INTERFACE.md and stops it gracefully on SIGTERM / SIGINT. A setting,
 * database or plugin that keeps it from serving stops the start with the reason.
 */
let gateway: Gateway;
try {
  gateway = await createGateway();
} catch (error) {
  refuseStart([describeError(error)]);
}
if (gateway.readiness.problems.length > 0) {
  await gateway.close();
  refuseStart(gateway.readiness.problems);
}
serve(gateway);
