/**
 * @gateway/plugin-hooks: the hook engine (README.md). Registers the `hooks:input` request stage and the
 * `hooks:output` response stage, unless GUARDRAILS_ENABLED=OFF (then nothing is registered and hooks in configs are
 * ignored). Checks come from the guardrail registry, which the server provides as the `guardrailChecks` service once
 * every plugin is loaded. Saved guardrails (string entries) arrive already put in: core/config puts them into header
 * configs for the caller's organisation and workspace, and saved configs for their own workspace; the engine never
 * looks a guardrail up by id without knowing for whom (that lookup would reach any organisation's guardrail).
 */
import { definePlugin, type GuardrailCheck, type PluginApi } from '@gateway/sdk';
import { createHookEngine } from './engine.ts';
import type { CheckLookup } from './types.ts';

export { createHookEngine, withHookResults, type EngineOptions, type HookEngine } from './engine.ts';
export { createNormaliser, DEFAULT_CHECK_TIMEOUT_MS, qualifyCheckId } from './normalise.ts';
export { runCheck, runHooks } from './run.ts';
export { guardStream, StreamAssembler } from './stream.ts';
export * from './types.ts';

/** Service names this plugin reads. */
export const SERVICES = {
  /** ReadonlyMap<string, GuardrailCheck>: the registry's checks by id (set by the server after loading). */
  checks: 'guardrailChecks',
} as const;

function optional<T>(api: PluginApi, name: string): T | undefined {
  try {
    return api.service<T>(name);
  } catch {
    return undefined;
  }
}

/** The `settings` service's `features.guardrails` (GUARDRAILS_ENABLED), else the environment; on unless `OFF`. */
export function guardrailsEnabled(api: PluginApi): boolean {
  const settings = optional<{ features?: { guardrails?: boolean } }>(api, 'settings');
  if (typeof settings?.features?.guardrails === 'boolean') return settings.features.guardrails;
  return (api.env.GUARDRAILS_ENABLED ?? 'ON').toUpperCase() !== 'OFF';
}

export default definePlugin({
  setup(api) {
    if (!guardrailsEnabled(api)) {
      api.logger.info({ plugin: api.name }, 'guardrails are disabled (GUARDRAILS_ENABLED=OFF): hooks and guardrails in configs are ignored');
      return;
    }
    let lookup: CheckLookup | undefined;
    const checks = (): CheckLookup => {
      if (lookup) return lookup;
      const registry = optional<ReadonlyMap<string, GuardrailCheck>>(api, SERVICES.checks);
      if (!registry) api.logger.warn({ service: SERVICES.checks }, 'no guardrail check registry is provided: every check fails as unknown');
      lookup = registry ? (id) => registry.get(id) : () => undefined;
      return lookup;
    };
    const engine = createHookEngine({ checks, logger: api.logger });
    api.stage(engine.request);
    api.stage(engine.response);
  },
});
