/**
 * Azure Key Vault, Get Secret: `GET {vault_url}/secrets/{name}[/{version}]?api-version=7.4` with a bearer token from
 * the Microsoft Entra client-credentials flow (`POST {authority}/{tenant}/oauth2/v2.0/token`, scope
 * `https://vault.azure.net/.default`, or the sovereign cloud's vault suffix). Tokens are kept until a minute before
 * they expire; a 401 drops the token and tries once more with a new one.
 */
import { createHash } from 'node:crypto';
import { TtlCache } from '../cache.ts';
import { ManagerFailure } from '../errors.ts';
import type { AzureAuthConfig } from '../kinds.ts';
import { type ClientContext, readObject, send, short, transient } from './http.ts';
import type { FetchedSecret } from './types.ts';

const MANAGER = 'Azure Key Vault';
export const API_VERSION = '7.4';
export const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';

/** `https://vault.azure.net/.default`, or the suffix of a sovereign cloud's vault (`vault.azure.cn`, …). */
export function vaultScope(vaultUrl: string): string {
  const host = new URL(vaultUrl).hostname.toLowerCase();
  const match = /^[^.]+\.(vault\.[a-z0-9.-]+)$/.exec(host);
  return `https://${match?.[1] ?? 'vault.azure.net'}/.default`;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

export class AzureKeyVaultClient {
  private readonly tokens = new TtlCache<{ token: string; expiresInS: number }>(1_000);

  constructor(private readonly ctx: ClientContext) {}

  async get(config: AzureAuthConfig, path: string): Promise<FetchedSecret> {
    const [name, version] = path.split('/') as [string, string | undefined];
    const url = `${trimSlash(config.vault_url)}/secrets/${encodeURIComponent(name)}${version ? `/${encodeURIComponent(version)}` : ''}?api-version=${API_VERSION}`;
    let response = await this.read(config, url);
    if (response.status === 401) {
      await response.body?.cancel();
      this.tokens.deletePrefix(this.tokenKey(config));
      response = await this.read(config, url);
    }
    if (!response.ok) {
      const answer = await readObject(MANAGER, response).catch(() => undefined);
      const error = answer?.error;
      const code = error !== null && typeof error === 'object' && !Array.isArray(error) && typeof error.code === 'string' ? error.code : 'Error';
      throw new ManagerFailure(`${MANAGER} answered ${response.status} ${short(code, 80)}`, transient(response.status));
    }
    const answer = await readObject(MANAGER, response);
    if (typeof answer.value !== 'string') throw new ManagerFailure(`${MANAGER} answered without a secret value`);
    return { kind: 'text', value: answer.value };
  }

  private async read(config: AzureAuthConfig, url: string): Promise<Response> {
    const { token } = await this.token(config);
    return send(MANAGER, url, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } }, this.ctx);
  }

  private tokenKey(config: AzureAuthConfig): string {
    // The secret is part of the identity of a token, but only as a digest.
    const digest = createHash('sha256').update(config.client_secret).digest('base64url');
    return [config.authority_host ?? DEFAULT_AUTHORITY, config.tenant_id, config.client_id, digest, vaultScope(config.vault_url)].join('\n');
  }

  private token(config: AzureAuthConfig) {
    return this.tokens.get(this.tokenKey(config), () => this.requestToken(config), (t) => (t.expiresInS - 60) * 1000);
  }

  private async requestToken(config: AzureAuthConfig): Promise<{ token: string; expiresInS: number }> {
    const url = `${trimSlash(config.authority_host ?? DEFAULT_AUTHORITY)}/${encodeURIComponent(config.tenant_id)}/oauth2/v2.0/token`;
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: config.client_id,
      client_secret: config.client_secret,
      scope: vaultScope(config.vault_url),
    });
    const response = await send('Microsoft Entra ID', url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
    }, this.ctx);
    const answer = await readObject('Microsoft Entra ID', response);
    if (!response.ok) {
      // error is a code (invalid_client); error_description starts with the AADSTS number.
      const aadsts = /^AADSTS\d+/.exec(typeof answer.error_description === 'string' ? answer.error_description : '')?.[0];
      const code = [short(answer.error, 60), aadsts].filter(Boolean).join(' ');
      throw new ManagerFailure(`Microsoft Entra ID refused the client credentials: ${response.status} ${code || 'error'}`, transient(response.status));
    }
    if (typeof answer.access_token !== 'string' || !answer.access_token) throw new ManagerFailure('Microsoft Entra ID answered without an access token');
    const expiresIn = Number(answer.expires_in);
    return { token: answer.access_token, expiresInS: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 300 };
  }
}
