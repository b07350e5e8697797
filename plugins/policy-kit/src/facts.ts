/**
 * What a policy looks at in a call, gathered once per attempt. The endpoint type is the gateway's endpoint kind, or
 * for a passthrough call the kind its path names (`/images/generations` → imageGenerate), so that conditions can
 * target the endpoint types users know from other gateways.
 */
import type { Attempt, EndpointKind, GatewayRequest } from '@gateway/sdk';

export interface CallFacts {
  readonly organisationId: string;
  readonly workspaceId: string;
  readonly apiKeyId: string;
  /** The workspace user behind a workspace-user key; null for service keys. */
  readonly userId: string | null;
  readonly endpointType: string;
  /** The provider adapter's id (`openai`), and the `@slug` or name the target gave, when different. */
  readonly provider: string;
  readonly providerAlias: string | undefined;
  readonly model: string | undefined;
  readonly metadata: Readonly<Record<string, string>>;
}

/** Passthrough paths that are an endpoint type of their own. */
const PROXY_ENDPOINT_TYPES: ReadonlyMap<string, string> = new Map([
  ['/images/generations', 'imageGenerate'],
  ['/images/edits', 'imageEdit'],
  ['/images/variations', 'imageVariation'],
  ['/audio/speech', 'createSpeech'],
  ['/audio/transcriptions', 'createTranscription'],
  ['/audio/translations', 'createTranslation'],
  ['/responses', 'createModelResponse'],
  ['/rerank', 'rerank'],
  ['/batches', 'createBatch'],
  ['/files', 'uploadFile'],
  ['/fine_tuning/jobs', 'createFinetune'],
]);

/** Every endpoint type a condition may name (docs/admin/policies.md). */
export const ENDPOINT_TYPES: readonly string[] = [
  ...(['chatComplete', 'complete', 'embed', 'moderate', 'messages', 'countTokens', 'listModels', 'proxy'] satisfies EndpointKind[]),
  ...new Set(PROXY_ENDPOINT_TYPES.values()),
];

export function endpointTypeOf(endpoint: EndpointKind, path: string, method: string): string {
  // The Responses API keeps the type it had as a passthrough path, so conditions naming it keep matching.
  if (endpoint === 'responses') return 'createModelResponse';
  if (endpoint !== 'proxy' || method !== 'POST') return endpoint;
  return PROXY_ENDPOINT_TYPES.get(path) ?? 'proxy';
}

/** The facts of one attempt (the target decides provider and model). */
export function factsOf(req: GatewayRequest, attempt: Attempt): CallFacts {
  const caller = req.caller;
  const model = (attempt.body ?? req.body)?.model;
  const named = attempt.target.provider;
  return {
    organisationId: caller.organisationId,
    workspaceId: caller.workspaceId,
    apiKeyId: caller.apiKeyId,
    userId: caller.userId,
    endpointType: endpointTypeOf(req.endpoint, req.path, req.method),
    provider: attempt.provider.id,
    providerAlias: typeof named === 'string' && named !== attempt.provider.id ? named : undefined,
    model: typeof model === 'string' ? model : undefined,
    metadata: req.metadata,
  };
}
