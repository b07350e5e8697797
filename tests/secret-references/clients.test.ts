/**
 * Each manager client against its local server: the wire format, the signature / token / namespace checks, and the
 * failures a client must report without leaking a credential.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { HostGuard } from '@gateway/pipeline';
import { AwsSecretsManagerClient } from '../../admin/secret-references/src/clients/aws.ts';
import { AzureKeyVaultClient } from '../../admin/secret-references/src/clients/azure.ts';
import { VaultKvClient } from '../../admin/secret-references/src/clients/vault.ts';
import { ManagerFailure } from '../../admin/secret-references/src/errors.ts';
import { startAwsSecretsManager } from '../mocks/secret-managers/aws.ts';
import { startAzureKeyVault } from '../mocks/secret-managers/azure.ts';
import { startVault } from '../mocks/secret-managers/vault.ts';

const ctx = { hostGuard: new HostGuard(['127.0.0.1']), timeoutMs: 5_000 };
const KEY = { id: 'AKIDSECRETREFTEST01', secret: 'aws-secret-key-never-shown' };
const ROLE = 'arn:aws:iam::123456789012:role/gateway-reader';

const aws = startAwsSecretsManager({ credentials: { [KEY.id]: { secret: KEY.secret } }, roles: { [ROLE]: { externalId: 'ext-42' } } });
const azure = startAzureKeyVault({ tenantId: 'contoso.onmicrosoft.com', clientId: 'app-1', clientSecret: 'azure-client-secret-never-shown' });
const vault = startVault({ tokens: ['hvs.vault-token-never-shown'], mount: 'kv', namespace: 'team-a' });
afterAll(() => {
  aws.stop();
  azure.stop();
  vault.stop();
});

async function failure(p: Promise<unknown>): Promise<ManagerFailure> {
  try {
    await p;
  } catch (error) {
    if (error instanceof ManagerFailure) return error;
    throw error;
  }
  throw new Error('did not fail');
}

/** A port with nothing listening. */
async function closedPort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = s.port as number;
  s.stop(true);
  return port;
}

describe('AWS Secrets Manager client', () => {
  const client = new AwsSecretsManagerClient(ctx);
  const config = { region: 'us-east-1', access_key_id: KEY.id, secret_access_key: KEY.secret, endpoint: aws.url };

  test('GetSecretValue, SigV4-signed, by name and by ARN; a binary secret as text', async () => {
    const stored = aws.putSecret('prod/openai', '{"api_key":"sk-aws-1"}');
    expect(await client.get(config, 'prod/openai')).toEqual({ kind: 'text', value: '{"api_key":"sk-aws-1"}' });
    expect(await client.get(config, stored.arn)).toEqual({ kind: 'text', value: '{"api_key":"sk-aws-1"}' });
    aws.putSecret('bin', new TextEncoder().encode('binary-value'));
    expect(await client.get(config, 'bin')).toEqual({ kind: 'text', value: 'binary-value' });
    expect(aws.reads.at(-1)).toEqual({ secretId: 'bin', accessKeyId: KEY.id });
  });

  test('a wrong secret key fails the signature; an unknown secret is ResourceNotFoundException', async () => {
    const bad = await failure(client.get({ ...config, secret_access_key: 'wrong-secret' }, 'prod/openai'));
    expect(bad.detail).toBe('AWS Secrets Manager answered 400 InvalidSignatureException');
    expect(bad.retryable).toBe(false);
    const missing = await failure(client.get(config, 'no/such/secret'));
    expect(missing.detail).toBe('AWS Secrets Manager answered 400 ResourceNotFoundException');
    expect(`${bad.message}${missing.message}`).not.toContain('wrong-secret');
  });

  test('role_arn: assumes the role through STS (with its external id) and reads with the temporary credentials, once per session', async () => {
    aws.putSecret('role/secret', 'via-role');
    const before = aws.assumeRoleCalls;
    const roleConfig = { ...config, role_arn: ROLE, external_id: 'ext-42', sts_endpoint: aws.url };
    expect(await client.get(roleConfig, 'role/secret')).toEqual({ kind: 'text', value: 'via-role' });
    expect(await client.get(roleConfig, 'role/secret')).toEqual({ kind: 'text', value: 'via-role' });
    expect(aws.assumeRoleCalls).toBe(before + 1);
    expect(aws.reads.at(-1)?.accessKeyId).toStartWith('ASIA');
    const refused = await failure(client.get({ ...roleConfig, external_id: 'wrong' }, 'role/secret'));
    expect(refused.detail).toBe('AWS STS refused AssumeRole: 403 AccessDenied');
  });

  test('role_arn: keys that share only the access key id never get the session of the right ones', async () => {
    aws.putSecret('role/kept', 'via-role');
    const roleConfig = { ...config, role_arn: ROLE, external_id: 'ext-42', sts_endpoint: aws.url };
    expect(await client.get(roleConfig, 'role/kept')).toEqual({ kind: 'text', value: 'via-role' });
    const guessed = await failure(client.get({ ...roleConfig, secret_access_key: 'guessed-secret' }, 'role/kept'));
    expect(guessed.detail).toBe('AWS STS refused AssumeRole: 403 InvalidSignatureException');
  });

  test('unreachable endpoint: a retryable failure', async () => {
    const port = await closedPort();
    const down = await failure(client.get({ ...config, endpoint: `http://127.0.0.1:${port}` }, 'prod/openai'));
    expect(down.detail).toStartWith('AWS Secrets Manager could not be reached');
    expect(down.retryable).toBe(true);
  });
});

describe('Azure Key Vault client', () => {
  const client = new AzureKeyVaultClient(ctx);
  const config = { vault_url: azure.url, tenant_id: 'contoso.onmicrosoft.com', client_id: 'app-1', client_secret: 'azure-client-secret-never-shown', authority_host: azure.url };

  test('client-credentials token, then Get Secret (latest or a version); the token is reused', async () => {
    const v1 = azure.setSecret('openai-key', 'sk-azure-1');
    azure.setSecret('openai-key', 'sk-azure-2');
    const tokensBefore = azure.tokenRequests;
    expect(await client.get(config, 'openai-key')).toEqual({ kind: 'text', value: 'sk-azure-2' });
    expect(await client.get(config, `openai-key/${v1}`)).toEqual({ kind: 'text', value: 'sk-azure-1' });
    expect(azure.tokenRequests).toBe(tokensBefore + 1);
  });

  test('a revoked token: 401, a new token, one more try', async () => {
    azure.setSecret('rotating', 'value');
    await client.get(config, 'rotating');
    const tokensBefore = azure.tokenRequests;
    azure.revokeTokens();
    expect(await client.get(config, 'rotating')).toEqual({ kind: 'text', value: 'value' });
    expect(azure.tokenRequests).toBe(tokensBefore + 1);
  });

  test('a wrong client secret, an unknown tenant, a missing secret', async () => {
    const wrong = await failure(client.get({ ...config, client_secret: 'not-it' }, 'openai-key'));
    expect(wrong.detail).toBe('Microsoft Entra ID refused the client credentials: 401 invalid_client AADSTS7000215');
    const tenant = await failure(client.get({ ...config, tenant_id: 'other' }, 'openai-key'));
    expect(tenant.detail).toContain('invalid_request AADSTS90002');
    const missing = await failure(client.get(config, 'nope'));
    expect(missing.detail).toBe('Azure Key Vault answered 404 SecretNotFound');
  });
});

describe('Vault KV v2 client', () => {
  const client = new VaultKvClient(ctx);
  const config = { address: vault.url, token: 'hvs.vault-token-never-shown', mount: 'kv', namespace: 'team-a' };

  test('reads the latest version of the data map', async () => {
    vault.write('team/openai', { api_key: 'sk-v1' });
    expect(await client.get(config, 'team/openai')).toEqual({ kind: 'map', value: { api_key: 'sk-v1' } });
    vault.write('team/openai', { api_key: 'sk-v2', org: 'o' });
    expect(await client.get(config, 'team/openai')).toEqual({ kind: 'map', value: { api_key: 'sk-v2', org: 'o' } });
  });

  test('bad token, wrong namespace, missing path, deleted version, sealed', async () => {
    const denied = await failure(client.get({ ...config, token: 'hvs.wrong' }, 'team/openai'));
    expect(denied.detail).toBe('Vault answered 403: permission denied');
    expect((await failure(client.get({ ...config, namespace: 'team-b' }, 'team/openai'))).detail).toBe('Vault answered 403: permission denied');
    expect((await failure(client.get(config, 'team/none'))).detail).toBe('Vault answered 404: no secret at this path');
    vault.write('gone', { a: '1' });
    vault.deleteLatest('gone');
    expect((await failure(client.get(config, 'gone'))).detail).toBe('Vault answered 404: no secret at this path');
    vault.seal();
    try {
      const sealed = await failure(client.get(config, 'team/openai'));
      expect(sealed.detail).toBe('Vault answered 503: Vault is sealed');
      expect(sealed.retryable).toBe(true);
    } finally {
      vault.unseal();
    }
  });

  test('a private address not trusted: refused before any request', async () => {
    const guarded = new VaultKvClient({ hostGuard: new HostGuard([]), timeoutMs: 1_000 });
    const before = vault.reads;
    const refused = await failure(guarded.get(config, 'team/openai'));
    expect(refused.detail).toContain('the manager URL is refused');
    expect(refused.detail).toContain('TRUSTED_CUSTOM_HOSTS');
    expect(vault.reads).toBe(before);
  });
});
