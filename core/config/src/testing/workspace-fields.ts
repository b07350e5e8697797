/**
 * For tests of this package that validate configs without a gateway: the config fields of this workspace's providers
 * and strategies in force, as a gateway loading them would assemble them (fields.ts). Not imported by the package.
 */
import { createAzureAdapter } from '@gateway/provider-azure-openai';
import { bedrock } from '@gateway/provider-bedrock';
import { openai } from '../../../../providers/openai/src/index.ts';
import { vertexAi } from '@gateway/provider-vertex-ai';
import { conditional, fallback, loadbalance, single } from '../../../../plugins/strategies/src/index.ts';
import { useLoadedFields } from '../fields.ts';

export function useWorkspaceFields(): () => void {
  return useLoadedFields({
    providers: [openai, createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai' }), bedrock, vertexAi],
    strategies: [single, loadbalance, fallback, conditional],
  });
}
