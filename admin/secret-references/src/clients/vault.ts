/**
 * HashiCorp Vault, KV secrets engine version 2: `GET {address}/v1/{mount}/data/{path}` with `X-Vault-Token` (and
 * `X-Vault-Namespace` when set). The answer is `{data: {data: {...}, metadata: {version, …}}}`; `data.data` is null
 * when the latest version was deleted. Errors are `{errors: [...]}`.
 */
import { ManagerFailure } from '../errors.ts';
import type { VaultAuthConfig } from '../kinds.ts';
import { type ClientContext, readObject, send, short, transient } from './http.ts';
import type { FetchedSecret } from './types.ts';

const MANAGER = 'Vault';

const segments = (path: string) => path.split('/').map(encodeURIComponent).join('/');

export function kvDataUrl(config: VaultAuthConfig, path: string): string {
  const base = new URL(config.address);
  const prefix = base.pathname.replace(/\/+$/, '');
  base.pathname = `${prefix}/v1/${segments(config.mount ?? 'secret')}/data/${segments(path)}`;
  return base.href;
}

export class VaultKvClient {
  constructor(private readonly ctx: ClientContext) {}

  async get(config: VaultAuthConfig, path: string): Promise<FetchedSecret> {
    const headers: Record<string, string> = { 'x-vault-token': config.token, accept: 'application/json' };
    if (config.namespace) headers['x-vault-namespace'] = config.namespace;
    const response = await send(MANAGER, kvDataUrl(config, path), { headers }, this.ctx);
    if (!response.ok) {
      const answer = await readObject(MANAGER, response).catch(() => undefined);
      const errors = Array.isArray(answer?.errors) ? answer.errors.filter((e): e is string => typeof e === 'string') : [];
      const said = errors.length ? short(errors.join('; '), 160) : response.status === 404 ? 'no secret at this path' : 'error';
      throw new ManagerFailure(`${MANAGER} answered ${response.status}: ${said}`, transient(response.status));
    }
    const answer = await readObject(MANAGER, response);
    const outer = answer.data;
    if (outer === null || typeof outer !== 'object' || Array.isArray(outer)) throw new ManagerFailure(`${MANAGER} answered without data`);
    const inner = outer.data;
    if (inner === null) throw new ManagerFailure(`${MANAGER}: the latest version of the secret is deleted`);
    if (typeof inner !== 'object' || Array.isArray(inner)) throw new ManagerFailure(`${MANAGER} answered without a KV v2 data map (is the mount KV version 2?)`);
    return { kind: 'map', value: inner };
  }
}
