/**
 * A local HashiCorp Vault with one KV secrets engine version 2, token auth, speaking Vault's HTTP API:
 * - `GET /v1/{mount}/data/{path}[?version=n]` → `{request_id, lease_id, renewable, lease_duration, data: {data,
 *   metadata: {created_time, custom_metadata, deletion_time, destroyed, version}}, wrap_info, warnings, auth}`;
 * - `POST|PUT /v1/{mount}/data/{path}` with `{data: {...}, options?: {cas}}` writes a new version and answers its
 *   metadata;
 * - `X-Vault-Token` on every call: a missing or unknown token is 403 `{"errors": ["permission denied"]}`; a
 *   namespace, when the server has one, must come as `X-Vault-Namespace`;
 * - no such secret: 404 `{"errors": []}`; sealed: 503 `{"errors": ["Vault is sealed"]}`.
 */
import { isObj, parseJson, startMockServer } from '../harness.ts';

export interface VaultMockOptions {
  /** Tokens accepted. */
  tokens: string[];
  mount?: string;
  namespace?: string;
}

interface Version {
  data: Record<string, unknown> | null;
  created: string;
  deletion: string;
}

export interface VaultMock {
  url: string;
  /** Writes a new version (as `vault kv put` does); returns its number. */
  write(path: string, data: Record<string, unknown>): number;
  /** Soft-deletes the latest version (`vault kv delete`). */
  deleteLatest(path: string): void;
  seal(): void;
  unseal(): void;
  /** Reads that passed the token check. */
  reads: number;
  stop(): void;
}

const errors = (status: number, list: string[]) => Response.json({ errors: list }, { status });

export function startVault(options: VaultMockOptions): VaultMock {
  const mount = options.mount ?? 'secret';
  const store = new Map<string, Version[]>();
  let sealed = false;
  let reads = 0;

  const envelope = (data: unknown) => ({
    request_id: crypto.randomUUID(),
    lease_id: '',
    renewable: false,
    lease_duration: 0,
    data,
    wrap_info: null,
    warnings: null,
    auth: null,
  });
  const metadata = (v: Version, n: number) => ({ created_time: v.created, custom_metadata: null, deletion_time: v.deletion, destroyed: false, version: n });

  function write(path: string, data: Record<string, unknown>): number {
    const versions = store.get(path) ?? [];
    versions.push({ data, created: new Date().toISOString(), deletion: '' });
    store.set(path, versions);
    return versions.length;
  }

  const server = startMockServer({
    record: () => undefined, // counted in reads
    handle({ request: req, url, text }) {
      if (sealed) return errors(503, ['Vault is sealed']);
      const token = req.headers.get('x-vault-token');
      if (!token || !options.tokens.includes(token)) return errors(403, ['permission denied']);
      if (options.namespace !== undefined && req.headers.get('x-vault-namespace') !== options.namespace) return errors(403, ['permission denied']);
      const prefix = `/v1/${mount}/data/`;
      if (!url.pathname.startsWith(prefix)) return errors(404, [`no handler for route "${url.pathname.slice(4)}". route entry not found.`]);
      const path = decodeURIComponent(url.pathname.slice(prefix.length));
      if (req.method === 'GET') {
        const versions = store.get(path);
        if (!versions?.length) return errors(404, []);
        const wanted = Number(url.searchParams.get('version') ?? versions.length);
        const version = versions[wanted - 1];
        if (!version) return errors(404, []);
        // A deleted version: 404 with the metadata and null data, as Vault answers.
        if (version.data === null) return Response.json(envelope({ data: null, metadata: metadata(version, wanted) }), { status: 404 });
        reads++;
        return Response.json(envelope({ data: version.data, metadata: metadata(version, wanted) }));
      }
      if (req.method === 'POST' || req.method === 'PUT') {
        const parsed = parseJson(text);
        if (!parsed) return errors(400, ['failed to parse JSON input']);
        const body = parsed.value as { data?: unknown; options?: { cas?: unknown } };
        if (!isObj(body.data)) return errors(400, ['no data provided']);
        const current = store.get(path)?.length ?? 0;
        if (body.options?.cas !== undefined && Number(body.options.cas) !== current)
          return errors(400, ['check-and-set parameter did not match the current version']);
        const n = write(path, body.data as Record<string, unknown>);
        const v = (store.get(path) as Version[])[n - 1] as Version;
        return Response.json(envelope(metadata(v, n)));
      }
      return errors(405, ['unsupported operation']);
    },
  });

  return {
    url: server.url,
    write,
    deleteLatest(path) {
      const versions = store.get(path);
      const last = versions?.[versions.length - 1];
      if (last) {
        last.data = null;
        last.deletion = new Date().toISOString();
      }
    },
    seal() {
      sealed = true;
    },
    unseal() {
      sealed = false;
    },
    get reads() {
      return reads;
    },
    stop() {
      void server.stop();
    },
  };
}
