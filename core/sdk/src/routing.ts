/**
 * What a call that names nothing but a model runs on (docs/clients.md): a workspace's model aliases and default
 * config, and the metadata a workspace adds to its requests. Provided by administration plugins, read by the core
 * on every such call, so both answer from memory, synchronously.
 */
import type { Caller } from './plugin.ts';
import { defineService } from './services.ts';

/** Where a model alias (or a workspace's default config) sends a call. */
export interface ModelRoute {
  /** A saved config's id: the call runs on it, as with `x-gateway-config: <id>`. */
  readonly savedConfig?: string;
  /** A provider stored for the workspace, `@<slug>`, when no saved config is named. */
  readonly provider?: string;
  /** The model sent upstream instead of the one the client named; undefined: the client's model is kept. */
  readonly model?: string;
}

/** An alias as the model list shows it. */
export interface ModelAliasView {
  readonly alias: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
}

export interface ModelRouting {
  /**
   * For a call that names no config, provider or virtual key: the alias of the caller's workspace named `model`,
   * else the workspace's default config; undefined when it has neither.
   */
  route(model: string | undefined, caller: Caller): ModelRoute | undefined;
  /** The aliases of a workspace, for `GET /v1/models`. */
  aliases(organisationId: string, workspaceId: string): readonly ModelAliasView[];
}

export interface WorkspaceDefaults {
  /** The metadata a workspace adds to its requests (`defaults.metadata`); the request's own keys win. Frozen, shared. */
  metadata(workspaceId: string): Readonly<Record<string, string>> | undefined;
}

export const RoutingServices = {
  /** Model aliases and default configs (the saved-config plugin). */
  modelRouting: defineService<ModelRouting>('modelRouting'),
  /** Workspace defaults (the identity plugin). */
  workspaceDefaults: defineService<WorkspaceDefaults>('workspaceDefaults'),
} as const;
