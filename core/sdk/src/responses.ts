/**
 * The contract of stored responses (OpenAI's Responses API, docs/responses.md): the responses the gateway produced,
 * kept per workspace so that `GET /v1/responses/{id}`, `input_items`, `DELETE` and `previous_response_id` work for any
 * provider. Provided by the response-store plugin; read by the core for POST /v1/responses and the stored routes.
 */
import type { JsonObject } from './types.ts';
import { defineService } from './services.ts';

export interface StoredResponse {
  /** The Response's `id`. */
  readonly id: string;
  readonly workspaceId: string;
  /** The Response object as the client received it (its `output`, `usage`, echoed request fields). */
  readonly response: JsonObject;
  /** This request's own input, as input items, each with an `id`. */
  readonly inputItems: readonly JsonObject[];
  /**
   * The conversation before this request (the items of the responses its `previous_response_id` chain named), as
   * input items; `instructions` are never part of it.
   */
  readonly context: readonly JsonObject[];
  /** The provider adapter that answered, and whether the core translated it (so a native provider cannot know it). */
  readonly provider: string;
  readonly translated: boolean;
  /** Unix milliseconds. */
  readonly createdAt: number;
}

export interface ResponseStore {
  /** Keeps a response for the store's retention (RESPONSES_RETENTION_DAYS). */
  save(record: Omit<StoredResponse, 'createdAt'>): Promise<void>;
  /** The response, if it is the workspace's and not expired. */
  get(workspaceId: string, id: string): Promise<StoredResponse | undefined>;
  /** Whether there was one to delete. */
  delete(workspaceId: string, id: string): Promise<boolean>;
}

export const ResponseServices = {
  store: defineService<ResponseStore>('responseStore'),
} as const;

/** The items a stored response leaves to the next turn: its context, its input, then its output. */
export function conversationOf(stored: StoredResponse): JsonObject[] {
  const output = Array.isArray(stored.response.output) ? (stored.response.output as JsonObject[]) : [];
  return [...stored.context, ...stored.inputItems, ...output];
}
