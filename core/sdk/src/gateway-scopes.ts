/**
 * The scopes of gateway calls (the data plane): which scope a key needs to call each kind of route. A call spends
 * the workspace's stored provider credentials, so it is a permission like any administration route's.
 */
import type { EndpointKind } from './types.ts';

/** The scopes of model calls, one per kind of call; the scope catalogue holds them all. */
export const MODEL_CALL_SCOPES = ['completions.write', 'embeddings.write', 'moderations.write', 'proxy.write'] as const;
export type ModelCallScope = (typeof MODEL_CALL_SCOPES)[number];

/**
 * The scope each kind of gateway route needs; any one of a list (`*` on a key grants all). Typed by EndpointKind,
 * so a new kind of route does not compile until it declares its scope here. A path that leaves passthrough for a
 * kind of its own keeps `proxy.write` in its list, so that keys which reached it before keep working.
 */
export const GATEWAY_CALL_SCOPES: Readonly<Record<EndpointKind, readonly string[]>> = {
  chatComplete: ['completions.write'],
  complete: ['completions.write'],
  embed: ['embeddings.write'],
  moderate: ['moderations.write'],
  // Anthropic's Messages API (and its token count), which were passthrough paths before.
  messages: ['completions.write', 'proxy.write'],
  countTokens: ['completions.write', 'proxy.write'],
  // OpenAI's Responses API (POST /v1/responses and the stored responses' GET, DELETE and input_items), a passthrough
  // path before.
  responses: ['completions.write', 'proxy.write'],
  // GET /v1/models with a provider chosen: the provider's list, with the stored credentials. The same scopes as the
  // administration list of the same path: a key that may call models may list them.
  listModels: ['models.read', 'completions.write'],
  // Every other /v1 path, sent on to the provider unchanged (any method).
  proxy: ['proxy.write'],
};
