/**
 * @gateway/plugin-hooks: the hook engine (README.md). Registers the `hooks:input` request stage and the
 * `hooks:output` response stage, unless GUARDRAILS_ENABLED=OFF (then nothing is registered and hooks in configs are
 * ignored). Checks come from the guardrail registry, which the core provides as the `guardrailChecks` service
 * (complete once every plugin is loaded). Saved guardrails (string entries) arrive already put in: core/config puts them into header
 * configs for the caller's organisation and workspace, and saved configs for their own workspace; the engine never
 * looks a guardrail up by id without knowing for whom (that lookup would reach any organisation's guardrail).
 */
import { definePlugin, type PluginApi, Services } from '@gateway/sdk';
import { hookConfigFields } from './config-fields.ts';
import { createHookEngine } from './engine.ts';
import type { CheckLookup } from './types.ts';

export { type AfterRequestHookConfig, type BeforeRequestHookConfig, hookConfigFields } from './config-fields.ts';
export { createHookEngine, withHookResults, type EngineOptions, type HookEngine } from './engine.ts';
export { createNormaliser, DEFAULT_CHECK_TIMEOUT_MS, qualifyCheckId } from './normalise.ts';
export { runCheck, runHooks } from './run.ts';
export { guardStream, StreamAssembler } from './stream.ts';
export * from './types.ts';

/** The `settings` service's `features.guardrails` (GUARDRAILS_ENABLED), else the environment; on unless `OFF`. */
export function guardrailsEnabled(api: PluginApi): boolean {
  const settings = api.optional(Services.settings);
  if (settings) return settings.features.guardrails;
  return (api.env.GUARDRAILS_ENABLED ?? 'ON').toUpperCase() !== 'OFF';
}

export default definePlugin({
  setup(api) {
    // Declared even when guardrails are off: configs carrying hooks stay valid, and the hooks in them are ignored.
    api.configFields(hookConfigFields);
    if (!guardrailsEnabled(api)) {
      api.logger.info({ plugin: api.name }, 'guardrails are disabled (GUARDRAILS_ENABLED=OFF): hooks and guardrails in configs are ignored');
      return;
    }
    // A live map: the checks of plugins loaded after this one are in it by the first request.
    const registry = api.optional(Services.guardrailChecks);
    if (!registry) api.logger.warn({ service: Services.guardrailChecks.id }, 'no guardrail check registry is provided: every check fails as unknown');
    const lookup: CheckLookup = registry ? (id) => registry.get(id) : () => undefined;
    const engine = createHookEngine({ checks: () => lookup, logger: api.logger });
    api.stage(engine.request);
    api.stage(engine.response);
  },
});
