/**
 * The OpenID Connect client of an organisation's provider (openid-client): discovery through the outbound guard (the
 * issuer is administrator-chosen), kept per provider row until it changes; the authorisation-code flow with PKCE,
 * state and nonce.
 */
import type { OutboundGuard } from '@gateway/sdk';
import * as client from 'openid-client';

export interface ProviderRecord {
  readonly id: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly updatedAt: number;
}

export class OidcClients {
  private readonly configs = new Map<string, { version: number; config: Promise<client.Configuration> }>();

  constructor(
    private readonly guard: OutboundGuard | undefined,
    private readonly allowHttpIssuer: boolean,
  ) {}

  config(provider: ProviderRecord): Promise<client.Configuration> {
    const known = this.configs.get(provider.id);
    if (known && known.version === provider.updatedAt) return known.config;
    const guard = this.guard;
    const options: client.DiscoveryRequestOptions = {
      execute: this.allowHttpIssuer ? [client.allowInsecureRequests] : [],
      timeout: 10,
      ...(guard ? { [client.customFetch]: (url: string, init: RequestInit) => guard.fetch(url, init) } : {}),
    };
    const config = client.discovery(new URL(provider.issuer), provider.clientId, provider.clientSecret, undefined, options);
    // A failed discovery is not kept: the next sign-in tries again.
    config.catch(() => this.configs.delete(provider.id));
    this.configs.set(provider.id, { version: provider.updatedAt, config });
    return config;
  }
}

export const pkce = {
  verifier: () => client.randomPKCECodeVerifier(),
  challenge: (verifier: string) => client.calculatePKCECodeChallenge(verifier),
  nonce: () => client.randomNonce(),
};

export { client };
