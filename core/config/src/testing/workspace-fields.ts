/**
 * For tests of this package that validate configs without a gateway: the config fields of this workspace's providers,
 * strategies and stage plugins (the response cache, the circuit breaker, the hook engine) in force, as a gateway
 * loading them would assemble them (fields.ts). Not imported by the package.
 */
import { createAzureAdapter } from '@gateway/provider-azure-openai';
import { bedrock } from '@gateway/provider-bedrock';
import { openai } from '../../../../providers/openai/src/index.ts';
import { vertexAi } from '@gateway/provider-vertex-ai';
import { cacheFields } from '../../../../plugins/cache/src/config-fields.ts';
import { circuitBreakerFields } from '../../../../plugins/circuit-breaker/src/config-fields.ts';
import { hookConfigFields } from '../../../../plugins/hooks/src/config-fields.ts';
import { conditional, fallback, loadbalance, single } from '../../../../plugins/strategies/src/index.ts';
import { type FieldSources, useLoadedFields } from '../fields.ts';

/** The stage plugins' declarations, in the order the gateway loads them. */
export const WORKSPACE_PLUGIN_FIELDS: NonNullable<FieldSources['plugins']> = [
  { plugin: '@gateway/plugin-cache', fields: cacheFields },
  { plugin: '@gateway/plugin-circuit-breaker', fields: circuitBreakerFields },
  { plugin: '@gateway/plugin-hooks', fields: hookConfigFields },
];

/** What a gateway loading this workspace's plugins assembles the config from. */
export const WORKSPACE_FIELD_SOURCES = {
  providers: [openai, createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai' }), bedrock, vertexAi],
  strategies: [single, loadbalance, fallback, conditional],
  plugins: WORKSPACE_PLUGIN_FIELDS,
} satisfies FieldSources;

export function useWorkspaceFields(): () => void {
  return useLoadedFields(WORKSPACE_FIELD_SOURCES);
}
