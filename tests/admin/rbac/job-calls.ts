/**
 * The data-plane rows of the RBAC matrix for files, batches and fine-tuning (docs/batches.md "Scopes"), by the
 * matrix's principals and the one-scope keys of data-plane.ts. Which row applies depends on the target:
 *
 *   forwarded   a stored OpenAI provider (it keeps files, batches and fine-tuning itself): `proxy.write`, as when
 *               these paths were passthrough; `ok` is a 2xx from the provider server, reached with the stored key
 *   kept        a stored vLLM provider (no job API of its own, none translated): files and batches are the
 *               gateway's, `completions.write` or `proxy.write`, and creating a batch also needs its lines' scope;
 *               `ok` is a 2xx with nothing sent to any provider (the input file's line names another url, so the
 *               batch fails validation unsent)
 *
 * A refusal is a 403 in the INTERFACE.md error shape before anything reaches a provider server.
 */
import type { JobKind } from '@gateway/sdk';
import type { Behavior, RecordedRequest } from '../../mocks/openai-server.ts';
import { DATA_PLANE_CALLERS, type DataPlane, type DataPlaneCaller, type DataPlaneOutcome, SCOPED_KEYS, STORED_PROVIDER_KEY } from './data-plane.ts';
import type { Json, World } from './world.ts';

export interface JobCall {
  key: string;
  job: JobKind;
  method: 'GET' | 'POST';
  /** After `/v1`. */
  path: string;
  /** A fresh body per call; `inputFileId` is a gateway file of purpose batch in the caller's workspace. */
  body?: (ctx: { inputFileId: string }) => Record<string, unknown> | FormData;
  /** Forwarded to the provider (the stored OpenAI provider keeps these itself), or kept by the gateway (stored vLLM). */
  target: 'provider' | 'gateway';
}

export const isKept = (call: JobCall) => call.target === 'gateway';

function uploadForm(text: string): FormData {
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', new File([text], 'batch.jsonl', { type: 'application/jsonl' }));
  return form;
}

/** An input file whose only line names another url than the batch's: the batch fails validation, nothing is sent. */
const UNSENT_LINE = `${JSON.stringify({ custom_id: 'rbac-1', method: 'POST', url: '/v1/rbac-never-sent', body: {} })}\n`;

const batchOf =
  (endpoint: string) =>
  ({ inputFileId }: { inputFileId: string }) => ({ input_file_id: inputFileId, endpoint, completion_window: '24h' });

export const JOB_CALLS: readonly JobCall[] = [
  { key: 'GET /files [forwarded]', job: 'files', method: 'GET', path: '/files', target: 'provider' },
  { key: 'GET /batches [forwarded]', job: 'batches', method: 'GET', path: '/batches', target: 'provider' },
  { key: 'GET /fine_tuning/jobs [forwarded]', job: 'fineTuning', method: 'GET', path: '/fine_tuning/jobs', target: 'provider' },
  { key: 'GET /files [kept]', job: 'files', method: 'GET', path: '/files', target: 'gateway' },
  { key: 'POST /files [kept]', job: 'files', method: 'POST', path: '/files', body: () => uploadForm(UNSENT_LINE), target: 'gateway' },
  { key: 'GET /batches [kept]', job: 'batches', method: 'GET', path: '/batches', target: 'gateway' },
  { key: 'POST /batches [kept, chat lines]', job: 'batches', method: 'POST', path: '/batches', body: batchOf('/v1/chat/completions'), target: 'gateway' },
  { key: 'POST /batches [kept, embeddings lines]', job: 'batches', method: 'POST', path: '/batches', body: batchOf('/v1/embeddings'), target: 'gateway' },
  { key: 'POST /batches [kept, responses lines]', job: 'batches', method: 'POST', path: '/batches', body: batchOf('/v1/responses'), target: 'gateway' },
];

// prettier-ignore
const TABLE: Record<string, string> = {
  //                                          own  adm  osv  ons  wsA  wsB  aAd  aMg  aMb  bMb | logs orgL compl emb  mod  prox mdls orgC
  // Forwarded to the provider, which spends its credential on its own storage and jobs: proxy.write.
  'GET /files [forwarded]':                  'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  403   403  403  ok   403  ok',
  'GET /batches [forwarded]':                'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  403   403  403  ok   403  ok',
  'GET /fine_tuning/jobs [forwarded]':       'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  403   403  403  ok   403  ok',
  // Kept by the gateway: completions.write or proxy.write.
  'GET /files [kept]':                       'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  ok    403  403  ok   403  ok',
  'POST /files [kept]':                      'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  ok    403  403  ok   403  ok',
  'GET /batches [kept]':                     'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  ok    403  403  ok   403  ok',
  // Creating one also needs the scope of its lines: completions.write for chat, embeddings.write, either for responses.
  'POST /batches [kept, chat lines]':        'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  ok    403  403  403  403  ok',
  'POST /batches [kept, embeddings lines]':  'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  403   403  403  403  403  ok',
  'POST /batches [kept, responses lines]':   'ok   ok   ok   403  ok   ok   ok   ok   ok   ok  | 403  403  ok    403  403  ok   403  ok',
};

export const JOB_MATRIX: readonly { call: JobCall; expect: Readonly<Record<DataPlaneCaller, DataPlaneOutcome>> }[] = JOB_CALLS.map((call) => {
  const cells = TABLE[call.key]?.replace('|', ' ').trim().split(/\s+/);
  if (!cells || cells.length !== DATA_PLANE_CALLERS.length) throw new Error(`job row ${call.key}: ${cells?.length ?? 0} cells for ${DATA_PLANE_CALLERS.length} callers`);
  const expect = {} as Record<DataPlaneCaller, DataPlaneOutcome>;
  DATA_PLANE_CALLERS.forEach((who, i) => {
    if (cells[i] !== 'ok' && cells[i] !== '403') throw new Error(`${call.key}: cell ${who} is ${JSON.stringify(cells[i])}, not ok or 403`);
    expect[who] = cells[i] === 'ok' ? 'ok' : 403;
  });
  return { call, expect };
});

for (const key of Object.keys(TABLE)) if (!JOB_CALLS.some((c) => c.key === key)) throw new Error(`job row ${key} has no call`);

/** The workspace each caller's key acts in (principals.ts; organisation keys act in the default workspace). */
const WORKSPACE: Record<DataPlaneCaller, 'default' | 'A' | 'B'> = {
  owner: 'A',
  orgAdmin: 'A',
  orgService: 'default',
  orgNoScope: 'default',
  serviceA: 'A',
  serviceB: 'B',
  adminA: 'A',
  managerA: 'A',
  memberA: 'A',
  memberB: 'B',
  ...(Object.fromEntries(Object.entries(SCOPED_KEYS).map(([who, { type }]) => [who, type === 'workspace-service' ? 'A' : 'default'])) as Record<keyof typeof SCOPED_KEYS, 'default' | 'A'>),
};

/** The OpenAI server answers the batch and fine-tuning lists it does not implement as OpenAI does. */
function jobsApi(req: RecordedRequest): Behavior | undefined {
  if (req.method === 'GET' && (req.path === '/v1/batches' || req.path === '/v1/fine_tuning/jobs')) return { kind: 'respond', body: { object: 'list', data: [], has_more: false } };
  return undefined;
}

export interface JobPlane {
  /** Forgets what the provider servers received, and answers the job paths again. */
  reset(): void;
  /** What reached any provider server since the last reset (method and path). */
  received(): readonly string[];
  send(call: JobCall, who: DataPlaneCaller): Promise<{ status: number; body: Json | null }>;
}

async function answer(response: Response): Promise<{ status: number; body: Json | null }> {
  const text = await response.text();
  try {
    return { status: response.status, body: text ? (JSON.parse(text) as Json) : null };
  } catch {
    return { status: response.status, body: { text } };
  }
}

/**
 * A stored vLLM provider at the OpenAI server (reachable from the default workspace, A and B), and an input file
 * uploaded to the gateway in each workspace (with a `*` key of it) for the batch rows.
 */
export async function createJobPlane(world: World, plane: DataPlane): Promise<JobPlane> {
  const list = (await world.admin('GET', '/workspaces')).data as { id: string; slug: string }[];
  const workspaces = [list.find((w) => w.slug === 'default'), world.A, world.B].map((w) => ({ id: w?.id, enabled: true }));
  const slug = world.unique('data-plane-vllm');
  await world.admin('POST', '/integrations', {
    name: 'RBAC data plane (vLLM)',
    slug,
    ai_provider_id: 'vllm',
    key: STORED_PROVIDER_KEY,
    configurations: { custom_host: plane.mock.url },
    workspaces,
  });
  const providers = { provider: plane.providers.openai, gateway: `@${slug}` };
  const request = (call: Pick<JobCall, 'method' | 'path' | 'target'>, key: string, body: Record<string, unknown> | FormData | undefined) => {
    const headers: Record<string, string> = { 'x-gateway-api-key': key, 'x-gateway-provider': providers[call.target] };
    if (body !== undefined && !(body instanceof FormData)) headers['content-type'] = 'application/json';
    return new Request(`http://gateway.test/v1${call.path}`, { method: call.method, headers, body: body instanceof FormData ? body : body === undefined ? undefined : JSON.stringify(body) });
  };
  const uploaders = { default: 'orgService', A: 'serviceA', B: 'serviceB' } as const;
  const inputFiles = {} as Record<'default' | 'A' | 'B', string>;
  for (const [workspace, who] of Object.entries(uploaders) as ['default' | 'A' | 'B', DataPlaneCaller][]) {
    const made = await answer(await world.gateway.handle(request({ method: 'POST', path: '/files', target: 'gateway' }, plane.keys[who], uploadForm(UNSENT_LINE))));
    if (made.status !== 200 || typeof made.body?.id !== 'string') throw new Error(`input file of ${workspace}: ${made.status} ${JSON.stringify(made.body)}`);
    inputFiles[workspace] = made.body.id;
  }
  return {
    reset() {
      plane.reset();
      plane.mock.setBehavior(jobsApi);
    },
    received: () => [...plane.mock.requests, ...plane.anthropic.requests].map((r) => `${r.method} ${r.path}`),
    async send(call, who) {
      const body = call.body?.({ inputFileId: inputFiles[WORKSPACE[who]] });
      return answer(await world.gateway.handle(request(call, plane.keys[who] ?? '', body)));
    },
  };
}
