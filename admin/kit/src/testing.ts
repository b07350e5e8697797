/** Test support for administration plugins (`@gateway/admin-kit/testing`). */
import { classifierCheck } from '@gateway/guardrail-classifier';
import { contentSafetyCheck } from '@gateway/guardrail-content-safety';
import { policyCheck } from '@gateway/guardrail-policy';
import { securityCheck } from '@gateway/guardrail-security';
import { createDefaultChecks } from '@gateway/plugin-guardrails-default';
import { createAzureAdapter } from '@gateway/provider-azure-openai';
import { bedrock } from '@gateway/provider-bedrock';
import { openai } from '../../../providers/openai/src/index.ts';
import { vertexAi } from '@gateway/provider-vertex-ai';
import { GatewayError } from '@gateway/sdk';
import { type DeclaredFields, declaredFields } from './declared-fields.ts';

/** The GatewayError `fn` throws (an answer's status, message and param to assert on); fails when it throws none. */
export function thrown(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('did not throw');
}

/**
 * The fields this workspace's providers and guardrail checks declare, indexed as a gateway loading them would
 * (declared-fields.ts): for unit tests of the administration plugins, without a gateway.
 */
export function workspaceFields(): DeclaredFields {
  return declaredFields(
    [
      openai,
      createAzureAdapter({ id: 'azure-openai', defaultForm: 'openai' }),
      createAzureAdapter({ id: 'azure-ai', defaultForm: 'serverless' }),
      bedrock,
      vertexAi,
    ],
    [...createDefaultChecks(), policyCheck, securityCheck, contentSafetyCheck, classifierCheck('classifier.toxicity', 'toxicity')],
  );
}
