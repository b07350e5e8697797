/**
 * The circuit breaker plugin: an attempt stage that refuses calls to targets whose circuit is open and counts
 * failures, and the `circuitBreaker` service whose synchronous `isAvailable(req, index, target)` the pipeline asks
 * so that strategies skip open targets. See breaker.ts for the state machine and how state is shared.
 *
 * Settings (environment):
 * - `CIRCUIT_BREAKER_KEY_PREFIX`: prefix of the state keys (default `cb:`); every gateway process that should share
 *   circuits must use the same one.
 * - `CIRCUIT_BREAKER_REFRESH_MS`: how often a process re-reads shared circuit state (default 250).
 */
import { definePlugin, MetricsServices, Services } from '@gateway/sdk';
import { CircuitBreaker } from './breaker.ts';
import { circuitBreakerFields } from './config-fields.ts';

export { CIRCUIT_BREAKER_STAGE, CircuitBreaker, type CircuitBreakerOptions, type CircuitStatus, type CircuitView, isFailure } from './breaker.ts';
export { circuitBreakerFields } from './config-fields.ts';
export { circuitId, credentialsHash, hasCircuitBreaker, nodeAt } from './identity.ts';

/** GET /metrics: the circuits this process knows, by state (closed, open, half_open), counted at each scrape. */
function renderCircuitStates(breaker: CircuitBreaker): string {
  const counts = { closed: 0, open: 0, half_open: 0 };
  for (const circuit of breaker.view()) counts[circuit.status]++;
  return [
    '# HELP gateway_circuits Circuits this process knows (targets with cb_config it called), by state.',
    '# TYPE gateway_circuits gauge',
    ...Object.entries(counts).map(([state, n]) => `gateway_circuits{state="${state}"} ${n}`),
    '',
  ].join('\n');
}

export default definePlugin({
  setup(api) {
    api.configFields(circuitBreakerFields);
    const refresh = Number(api.env.CIRCUIT_BREAKER_REFRESH_MS);
    const breaker = new CircuitBreaker({
      state: api.state,
      logger: api.logger,
      keyPrefix: api.env.CIRCUIT_BREAKER_KEY_PREFIX || 'cb:',
      refreshMs: Number.isFinite(refresh) && refresh >= 10 ? refresh : 250,
      name: api.name,
    });
    api.provide(Services.circuitBreaker, breaker);
    api.stage(breaker.stage);
    breaker.start();
    api.optional(MetricsServices.sources)?.add(() => renderCircuitStates(breaker));
    api.onClose(() => breaker.close());
  },
});
