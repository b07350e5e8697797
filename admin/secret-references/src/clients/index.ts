import type { AuthConfig, AwsAuthConfig, AzureAuthConfig, ManagerType, VaultAuthConfig } from '../kinds.ts';
import { AwsSecretsManagerClient } from './aws.ts';
import { AzureKeyVaultClient } from './azure.ts';
import type { ClientContext } from './http.ts';
import type { FetchedSecret } from './types.ts';
import { VaultKvClient } from './vault.ts';

export type { ClientContext } from './http.ts';
export type { FetchedSecret } from './types.ts';

/** One client per kind, sharing the host guard and deadline; each keeps its own tokens. */
export class ManagerClients {
  private readonly aws: AwsSecretsManagerClient;
  private readonly azure: AzureKeyVaultClient;
  private readonly vault: VaultKvClient;

  constructor(ctx: ClientContext) {
    this.aws = new AwsSecretsManagerClient(ctx);
    this.azure = new AzureKeyVaultClient(ctx);
    this.vault = new VaultKvClient(ctx);
  }

  fetch(type: ManagerType, config: AuthConfig, path: string): Promise<FetchedSecret> {
    switch (type) {
      case 'aws_sm':
        return this.aws.get(config as AwsAuthConfig, path);
      case 'azure_kv':
        return this.azure.get(config as AzureAuthConfig, path);
      case 'hashicorp_vault':
        return this.vault.get(config as VaultAuthConfig, path);
    }
  }
}
