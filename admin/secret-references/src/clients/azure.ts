/**
 * Azure Key Vault, Get Secret: `GET {vault_url}/secrets/{name}[/{version}]?api-version=7.4` with a bearer token from
 * the Microsoft Entra client-credentials flow (`POST {authority}/{tenant}/oauth2/v2.0/token`, scope
 * `https://vault.azure.net/.default`, or the sovereign cloud's vault suffix), through the gateway's one Entra client
 * (`@gateway/provider-azure-openai/entra`) called through this package's guarded `send`. Tokens are kept until
 * shortly before they expire; a 401 drops the token and tries once more with a new one.
 */
import { type EntraCredentials, type EntraFailure, EntraTokens } from '@gateway/provider-azure-openai/entra';
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

const ENTRA = 'Microsoft Entra ID';

/** Entra's failures as a manager's: a status and an error code (with the AADSTS number), never its description. */
function entraFailure(failure: EntraFailure): Error {
  switch (failure.kind) {
    case 'tenant':
      return new ManagerFailure(`${ENTRA}: the tenant id is not a tenant id (GUID) or a domain name`);
    case 'unreachable':
      // `send` already said why, as a ManagerFailure.
      return failure.cause instanceof ManagerFailure ? failure.cause : new ManagerFailure(`${ENTRA} could not be reached`, true);
    case 'refused': {
      const aadsts = /^AADSTS\d+/.exec(failure.description)?.[0];
      const code = [short(failure.code, 60), aadsts].filter(Boolean).join(' ');
      return new ManagerFailure(`${ENTRA} refused the client credentials: ${failure.status} ${code || 'error'}`, transient(failure.status));
    }
    case 'no-token':
      return new ManagerFailure(`${ENTRA} answered without an access token`);
    case 'assertion':
      return new ManagerFailure(`${ENTRA}: no client assertion`); // not used here: Key Vault access has a client secret
  }
}

export class AzureKeyVaultClient {
  private readonly tokens: EntraTokens;

  constructor(private readonly ctx: ClientContext) {
    this.tokens = new EntraTokens({ authorityHost: DEFAULT_AUTHORITY, fetch: (url, init) => send(ENTRA, url, init, ctx), fail: entraFailure });
  }

  async get(config: AzureAuthConfig, path: string): Promise<FetchedSecret> {
    const [name, version] = path.split('/') as [string, string | undefined];
    const url = `${trimSlash(config.vault_url)}/secrets/${encodeURIComponent(name)}${version ? `/${encodeURIComponent(version)}` : ''}?api-version=${API_VERSION}`;
    let response = await this.read(config, url);
    if (response.status === 401) {
      await response.body?.cancel();
      this.tokens.forget(credentials(config));
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
    const token = await this.tokens.get(credentials(config));
    return send(MANAGER, url, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } }, this.ctx);
  }
}

function credentials(config: AzureAuthConfig): EntraCredentials {
  return {
    tenantId: config.tenant_id,
    clientId: config.client_id,
    clientSecret: config.client_secret,
    scope: vaultScope(config.vault_url),
    authorityHost: config.authority_host,
  };
}
