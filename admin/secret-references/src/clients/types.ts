import type { JsonObject } from '@gateway/sdk';

/** A secret as a manager holds it: a text (AWS, Azure; often JSON inside) or a key/value map (Vault KV v2). */
export type FetchedSecret = { kind: 'text'; value: string } | { kind: 'map'; value: JsonObject };
