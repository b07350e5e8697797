/**
 * @gateway/plugin-hooks: the hook engine (README.md). Registers the `hooks:input` request stage and the
 * `hooks:output` response stage, unless GUARDRAILS_ENABLED=OFF (then nothing is registered and hooks in configs are
 * ignored). Checks come from the guardrail registry, which the core provides as the `guardrailChecks` service
 * (complete once every plugin is loaded); the config fields it declares carry their rules (config-rules.ts), which
 * the gateway's config validation applies. Saved guardrails (string entries) arrive already put in: the gateway puts
 * them into header configs for the caller's organisation and workspace (through these fields' rules), and saved
 * configs for their own workspace; the engine never looks a guardrail up by id without knowing for whom (that lookup
 * would reach any organisation's guardrail).
 */
import { definePlugin, type PluginApi, Services } from '@gateway/sdk';
import { hookConfigFields } from './config-fields.ts';
import { hookFieldRules } from './config-rules.ts';
import { createHookEngine } from './engine.ts';
import { toolCallGuardrails } from './tool-calls.ts';
import type { CheckLookup } from './types.ts';

export { type AfterRequestHookConfig, type BeforeRequestHookConfig, hookConfigFields } from './config-fields.ts';
export { hookFieldRules } from './config-rules.ts';
export { createHookEngine, withHookResults, type EngineOptions, type HookEngine } from './engine.ts';
export { createNormaliser, DEFAULT_CHECK_TIMEOUT_MS, qualifyCheckId } from './normalise.ts';
export { runCheck, runHooks } from './run.ts';
export { guardStream, StreamAssembler } from './stream.ts';
export { TOOL_HOOK_RESULTS, toolCallGuardrails } from './tool-calls.ts';
export * from './types.ts';

/** The `settings` service's `features.guardrails` (GUARDRAILS_ENABLED), else the environment; on unless `OFF`. */
export function guardrailsEnabled(api: PluginApi): boolean {
  const settings = api.optional(Services.settings);
  if (settings) return settings.features.guardrails;
  return (api.env.GUARDRAILS_ENABLED ?? 'ON').toUpperCase() !== 'OFF';
}

export default definePlugin({
  setup(api) {
    if (!guardrailsEnabled(api)) {
      // Declared even when guardrails are off, without their rules: configs carrying hooks stay valid (on targets
      // too, as ever), and the hooks in them are ignored.
      api.configFields(hookConfigFields);
      api.logger.info({ plugin: api.name }, 'guardrails are disabled (GUARDRAILS_ENABLED=OFF): hooks and guardrails in configs are ignored');
      return;
    }
    // A live map: the checks of plugins loaded after this one are in it by the first request (and by the first
    // config validated: the gateway validates none before every plugin is set up).
    const registry = api.optional(Services.guardrailChecks);
    if (!registry) api.logger.warn({ service: Services.guardrailChecks.id }, 'no guardrail check registry is provided: every check fails as unknown');
    const lookup: CheckLookup = registry ? (id) => registry.get(id) : () => undefined;
    // Unknown checks, parameters a check refuses, saved guardrails the sender may not use and lists on targets are
    // invalid_config: the gateway's validation applies these rules (config-rules.ts).
    api.configFields({ ...hookConfigFields, rules: hookFieldRules(lookup) });
    const engine = createHookEngine({ checks: () => lookup, logger: api.logger });
    api.stage(engine.request);
    api.stage(engine.response);
    // The same guardrails on the MCP and A2A proxies' tool and agent calls (tool-calls.ts).
    for (const stage of toolCallGuardrails(engine.normaliser, () => lookup, api.logger)) api.stage(stage);
  },
});
