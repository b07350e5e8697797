import { col, defineTable, type JsonObject, type Migration } from '@gateway/sdk';

/**
 * One row per Response the gateway produced (native or translated), unless the request said `store: false`. Read by
 * id within the caller's workspace; rows past `expires_at` are never read and are swept.
 */
export const storedResponses = defineTable(
  'stored_responses',
  {
    /** The Response's id (`resp_…`), unique per workspace: two providers' ids cannot clash in a workspace. */
    row_id: col.id(),
    id: col.string(128),
    workspace_id: col.ref(),
    provider: col.string(64),
    translated: col.bool(),
    response: col.json<JsonObject>(),
    input_items: col.json<JsonObject[]>(),
    /** The conversation before this response (previous_response_id chain), flattened into input items. */
    context: col.json<JsonObject[]>(),
    created_at: col.timestamp().default(Date.now),
    expires_at: col.timestamp(),
  },
  { indexes: [{ columns: ['workspace_id', 'id'], unique: true }, { columns: ['expires_at'] }] },
);

export const responseStoreMigrations: Migration[] = [{ id: 'response-store/0001-stored-responses', tables: [storedResponses] }];
