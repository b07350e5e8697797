/**
 * The data-plane rows of the RBAC matrix: one call of each kind of gateway route (GATEWAY_CALL_SCOPES), made with a
 * stored provider (`@slug`) so that every allowed call spends the workspace's stored key at a local provider server,
 * against the matrix's principals and against keys that hold one scope each. Anthropic's Messages kinds go to a
 * stored Anthropic provider, which serves them natively: a translated count_tokens would be the gateway's estimate
 * and reach no provider (docs/anthropic-messages.md).
 *
 *   ok   a 2xx from the provider server, reached with the stored key
 *   403  refused (permission_error) before anything reached the provider server
 *
 * Gateway calls have no roles: a key's scopes decide (docs/admin/api-keys.md "Scopes of gateway calls").
 */
import type { EndpointKind } from '@gateway/sdk';
import { type OpenAIMock, startOpenAIMock } from '../../mocks/openai-server.ts';
import { type AnthropicTestServer, startAnthropicServer } from '../../providers/anthropic/server.ts';
import { idOf } from './fixture.ts';
import { PRINCIPALS } from './principals.ts';
import type { Json, World } from './world.ts';

export interface DataPlaneCall {
  /** `METHOD path [variant]`, as the matrix shows it. */
  key: string;
  kind: EndpointKind;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** After `/v1`. */
  path: string;
  /** A fresh body per call: JSON, or a multipart form. */
  body?: () => Record<string, unknown> | FormData;
  /** The stored provider the call goes to (default openai). */
  upstream?: Upstream;
}

export type Upstream = 'openai' | 'anthropic';

/** The kinds of route that answer errors in Anthropic's shape, `{type: 'error', error: {type, message}}` (docs/anthropic-messages.md). */
export const ANTHROPIC_SHAPED_KINDS: ReadonlySet<EndpointKind> = new Set<EndpointKind>(['messages', 'countTokens']);

const MESSAGES_BODY = () => ({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });

/** One call of every kind, and passthrough with each method. */
export const DATA_PLANE_CALLS: readonly DataPlaneCall[] = [
  { key: 'POST /chat/completions', kind: 'chatComplete', method: 'POST', path: '/chat/completions', body: () => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) },
  { key: 'POST /completions', kind: 'complete', method: 'POST', path: '/completions', body: () => ({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi' }) },
  { key: 'POST /embeddings', kind: 'embed', method: 'POST', path: '/embeddings', body: () => ({ model: 'text-embedding-3-small', input: 'hi' }) },
  { key: 'POST /moderations', kind: 'moderate', method: 'POST', path: '/moderations', body: () => ({ model: 'omni-moderation-latest', input: 'hi' }) },
  { key: 'GET /models [provider chosen]', kind: 'listModels', method: 'GET', path: '/models' },
  { key: 'POST /responses', kind: 'responses', method: 'POST', path: '/responses', body: () => ({ model: 'gpt-4o-mini', input: 'hi' }) },
  { key: 'POST /messages', kind: 'messages', method: 'POST', path: '/messages', body: MESSAGES_BODY, upstream: 'anthropic' },
  { key: 'POST /messages/count_tokens', kind: 'countTokens', method: 'POST', path: '/messages/count_tokens', body: MESSAGES_BODY, upstream: 'anthropic' },
  { key: 'GET /files [passthrough]', kind: 'proxy', method: 'GET', path: '/files' },
  {
    key: 'POST /files [passthrough]',
    kind: 'proxy',
    method: 'POST',
    path: '/files',
    body: () => {
      const form = new FormData();
      form.set('purpose', 'batch');
      form.set('file', new File(['{"custom_id":"1"}\n'], 'batch.jsonl', { type: 'application/jsonl' }));
      return form;
    },
  },
];

/** The request of a call, with a gateway key and a stored provider. */
export function dataPlaneRequest(call: DataPlaneCall, gatewayKey: string, provider: string): Request {
  const headers: Record<string, string> = { 'x-gateway-api-key': gatewayKey, 'x-gateway-provider': provider };
  const body = call.body?.();
  if (body !== undefined && !(body instanceof FormData)) headers['content-type'] = 'application/json';
  return new Request(`http://gateway.test/v1${call.path}`, {
    method: call.method,
    headers,
    body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
  });
}

/** Keys that hold one scope each (workspace-service keys of A, and organisation-service keys). */
export const SCOPED_KEYS = {
  logsReader: { type: 'workspace-service', scopes: ['logs.read'] },
  orgLogsReader: { type: 'organisation-service', scopes: ['logs.read'] },
  completions: { type: 'workspace-service', scopes: ['completions.write'] },
  embeddings: { type: 'workspace-service', scopes: ['embeddings.write'] },
  moderations: { type: 'workspace-service', scopes: ['moderations.write'] },
  proxy: { type: 'workspace-service', scopes: ['proxy.write'] },
  modelsReader: { type: 'workspace-service', scopes: ['models.read'] },
  orgModelCalls: { type: 'organisation-service', scopes: ['completions.write', 'embeddings.write', 'moderations.write', 'proxy.write'] },
} as const;

export type ScopedKeyName = keyof typeof SCOPED_KEYS;
export const DATA_PLANE_CALLERS = [...PRINCIPALS, ...(Object.keys(SCOPED_KEYS) as ScopedKeyName[])] as const;
export type DataPlaneCaller = (typeof DATA_PLANE_CALLERS)[number];

// The matrix's ten principals (all `*` but `ons`, which has no scope), then the keys above.
const HEADER = 'own adm osv ons wsA wsB aAd aMg aMb bMb | logs orgLogs compl embed moder proxy models orgCalls';

// prettier-ignore
const TABLE: Record<string, string> = {
  //                                 own  adm  osv  ons  wsA  wsB  aAd  aMg  aMb  bMb | logs orgL compl emb  mod  prox mdls orgC
  'POST /chat/completions':         'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  ok    403  403  403  403  ok',
  'POST /completions':              'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  ok    403  403  403  403  ok',
  'POST /embeddings':               'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  403   ok   403  403  403  ok',
  'POST /moderations':              'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  403   403  ok   403  403  ok',
  // The provider's own list: models.read or completions.write, as the administration list of the same path.
  'GET /models [provider chosen]':  'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  ok    403  403  403  ok   ok',
  // The Responses API was passthrough: completions.write or proxy.write.
  'POST /responses':                'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  ok    403  403  ok   403  ok',
  // Anthropic's Messages API and its token count were passthrough: completions.write or proxy.write.
  'POST /messages':                 'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  ok    403  403  ok   403  ok',
  'POST /messages/count_tokens':    'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  ok    403  403  ok   403  ok',
  'GET /files [passthrough]':       'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  403   403  403  ok   403  ok',
  'POST /files [passthrough]':      'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  403   403  403  ok   403  ok',
};

export type DataPlaneOutcome = 'ok' | 403;

export const DATA_PLANE_MATRIX: readonly { call: DataPlaneCall; expect: Readonly<Record<DataPlaneCaller, DataPlaneOutcome>> }[] = DATA_PLANE_CALLS.map((call) => {
  const cells = TABLE[call.key]?.replace('|', ' ').trim().split(/\s+/);
  if (!cells) throw new Error(`no data-plane row for ${call.key}`);
  if (cells.length !== DATA_PLANE_CALLERS.length) throw new Error(`${call.key}: ${cells.length} cells for ${DATA_PLANE_CALLERS.length} callers (${HEADER})`);
  const expect = {} as Record<DataPlaneCaller, DataPlaneOutcome>;
  DATA_PLANE_CALLERS.forEach((who, i) => {
    const cell = cells[i];
    if (cell !== 'ok' && cell !== '403') throw new Error(`${call.key}: cell ${who} is ${JSON.stringify(cell)}, not ok or 403`);
    expect[who] = cell === 'ok' ? 'ok' : 403;
  });
  return { call, expect };
});

for (const key of Object.keys(TABLE)) if (!DATA_PLANE_CALLS.some((c) => c.key === key)) throw new Error(`data-plane row ${key} has no call`);

/** The provider key the integration stores: the provider server answers no other. */
export const STORED_PROVIDER_KEY = 'sk-rbac-stored-0123456789abcdef';

export interface DataPlane {
  /** The OpenAI provider server: answers only STORED_PROVIDER_KEY. */
  mock: OpenAIMock;
  /** The Anthropic provider server: answers only STORED_PROVIDER_KEY (as x-api-key). */
  anthropic: AnthropicTestServer;
  /** `@slug` of each stored provider, reachable from the default workspace, A and B. */
  providers: Readonly<Record<Upstream, string>>;
  /** What the provider server of a call received since the last reset. */
  received(call: DataPlaneCall): readonly unknown[];
  /** Forgets what the provider servers received. */
  reset(): void;
  /** The secret of every caller. */
  keys: Readonly<Record<DataPlaneCaller, string>>;
  /** Sends a call as `who`. */
  send(call: DataPlaneCall, who: DataPlaneCaller): Promise<{ status: number; body: Json | null }>;
  close(): Promise<void>;
}

/**
 * Provider servers (OpenAI, Anthropic), an integration holding the key of each for the default workspace (where
 * organisation keys call), A and B, and the one-scope keys, all made through the administration API with the
 * bootstrap key.
 */
export async function createDataPlane(world: World): Promise<DataPlane> {
  const mock = await startOpenAIMock({ apiKey: STORED_PROVIDER_KEY });
  const anthropic = startAnthropicServer({ apiKey: STORED_PROVIDER_KEY });
  try {
    const list = (await world.admin('GET', '/workspaces')).data as { id: string; slug: string }[];
    const defaultWorkspace = list.find((w) => w.slug === 'default');
    if (!defaultWorkspace) throw new Error('no default workspace');
    const workspaces = [defaultWorkspace, world.A, world.B].map(({ id }) => ({ id, enabled: true }));
    const slug = world.unique('data-plane');
    const anthropicSlug = world.unique('data-plane-anthropic');
    await world.admin('POST', '/integrations', {
      name: 'RBAC data plane',
      slug,
      ai_provider_id: 'openai',
      key: STORED_PROVIDER_KEY,
      configurations: { custom_host: mock.url },
      workspaces,
    });
    await world.admin('POST', '/integrations', {
      name: 'RBAC data plane (Anthropic)',
      slug: anthropicSlug,
      ai_provider_id: 'anthropic',
      key: STORED_PROVIDER_KEY,
      configurations: { custom_host: anthropic.baseUrl },
      workspaces,
    });
    const keys: Record<string, string> = Object.fromEntries(Object.entries(world.keys).map(([who, key]) => [who, key.secret]));
    await Promise.all(
      Object.entries(SCOPED_KEYS).map(async ([who, { type, scopes }]) => {
        const made = await world.admin('POST', '/api-keys', {
          name: `data plane ${who}`,
          type,
          ...(type === 'workspace-service' ? { workspace_id: world.A.id } : {}),
          scopes,
        });
        idOf(made);
        keys[who] = String(made.key);
      }),
    );
    const providers: Record<Upstream, string> = { openai: `@${slug}`, anthropic: `@${anthropicSlug}` };
    return {
      mock,
      anthropic,
      providers,
      received: (call) => ((call.upstream ?? 'openai') === 'anthropic' ? anthropic.requests : mock.requests),
      reset() {
        mock.reset();
        anthropic.requests.length = 0;
      },
      keys: keys as Record<DataPlaneCaller, string>,
      async send(call, who) {
        const response = await world.gateway.handle(dataPlaneRequest(call, keys[who] ?? '', providers[call.upstream ?? 'openai']));
        const text = await response.text();
        let body: Json | null = null;
        try {
          body = text ? (JSON.parse(text) as Json) : null;
        } catch {
          body = { text };
        }
        return { status: response.status, body };
      },
      async close() {
        anthropic.stop();
        await mock.stop();
      },
    };
  } catch (error) {
    anthropic.stop();
    await mock.stop();
    throw error;
  }
}
