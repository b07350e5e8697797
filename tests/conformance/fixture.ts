/**
 * A provider under conformance test: how to start its local test server and how to route to it. Each file in
 * providers/ default-exports one (or an array of) ProviderFixture; conformance.test.ts runs every case of cases.ts
 * against each.
 */
export type Feature =
  | 'plain'
  | 'system'
  | 'multiTurn'
  | 'tools'
  | 'parallelTools'
  | 'streamedTools'
  | 'jsonMode'
  | 'images'
  | 'stop'
  | 'usage'
  | 'cachedTokens'
  | 'reasoningTokens'
  | 'providerError'
  | 'embeddings'
  | 'streaming';

export interface StartedServer {
  /**
   * Gateway headers that route to this server (x-gateway-provider + x-gateway-custom-host + Authorization, or an
   * x-gateway-config JSON for providers whose credentials live in the config).
   */
  headers: Record<string, string>;
  /** The model name to send (a deployment alias, a Bedrock model id, …). */
  chatModel: string;
  embeddingModel?: string;
  /** Every request the server received (for assertions on the native wire format). */
  requests: { method: string; path: string; headers: Record<string, string>; body: string }[];
  stop(): Promise<void> | void;
}

export interface ProviderFixture {
  /** Name shown in the test titles, e.g. `anthropic` or `vertex-ai (anthropic publisher)`. */
  name: string;
  start(): Promise<StartedServer>;
  /** Features the provider lacks, each with the reason (shown in the skipped test's name). */
  unsupported?: Partial<Record<Feature, string>>;
}
