/**
 * AWS Secrets Manager, GetSecretValue: the JSON 1.1 protocol (POST / with `X-Amz-Target:
 * secretsmanager.GetSecretValue`, body `{"SecretId": …}`), signed with SigV4 (aws4fetch) for service
 * `secretsmanager`. With `role_arn` the keys first assume the role through STS AssumeRole (the gateway's one STS
 * client, `@gateway/provider-bedrock/sts`, called through this package's guarded `send`); the role's temporary
 * credentials are kept until five minutes before they expire.
 */
import { createHash } from 'node:crypto';
import { AwsV4Signer } from 'aws4fetch';
import { assumeRole, type AwsCredentials, RoleSessions, StsInvalidAnswer, StsRefusal } from '@gateway/provider-bedrock/sts';
import type { JsonObject } from '@gateway/sdk';
import { ManagerFailure } from '../errors.ts';
import type { AwsAuthConfig } from '../kinds.ts';
import { type ClientContext, readObject, send, transient } from './http.ts';
import type { FetchedSecret } from './types.ts';

const MANAGER = 'AWS Secrets Manager';
const STS = 'AWS STS';

const amazonSuffix = (region: string) => (region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com');

export function secretsManagerEndpoint(config: AwsAuthConfig): string {
  return config.endpoint ?? `https://secretsmanager.${config.region}.${amazonSuffix(config.region)}`;
}

export function stsEndpoint(config: AwsAuthConfig): string {
  return config.sts_endpoint ?? `https://sts.${config.region}.${amazonSuffix(config.region)}`;
}

/** The error code of a JSON-protocol error: `x-amzn-errortype` or `__type`, without namespace and suffix. */
function errorCode(response: Response, body: JsonObject | undefined): string {
  const raw = response.headers.get('x-amzn-errortype') ?? (typeof body?.__type === 'string' ? body.__type : undefined) ?? 'UnknownError';
  const [code] = raw.split(':');
  return (code ?? raw).split('#').pop() ?? raw;
}

export class AwsSecretsManagerClient {
  /** Assumed-role credentials by role, external id, base keys and STS endpoint. */
  private readonly roles = new RoleSessions();

  constructor(private readonly ctx: ClientContext) {}

  async get(config: AwsAuthConfig, secretId: string): Promise<FetchedSecret> {
    const credentials = config.role_arn ? await this.assumeRole(config) : baseCredentials(config);
    const url = new URL(secretsManagerEndpoint(config)).href;
    const body = JSON.stringify({ SecretId: secretId });
    const signed = await new AwsV4Signer({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'secretsmanager.GetSecretValue' },
      body,
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      sessionToken: credentials.sessionToken,
      service: 'secretsmanager',
      region: config.region,
    }).sign();
    const response = await send(MANAGER, url, { method: 'POST', headers: signed.headers, body }, this.ctx);
    if (!response.ok) {
      const answer = await readObject(MANAGER, response).catch(() => undefined);
      throw new ManagerFailure(`${MANAGER} answered ${response.status} ${errorCode(response, answer)}`, transient(response.status));
    }
    const answer = await readObject(MANAGER, response);
    if (typeof answer.SecretString === 'string') return { kind: 'text', value: answer.SecretString };
    if (typeof answer.SecretBinary === 'string') return { kind: 'text', value: Buffer.from(answer.SecretBinary, 'base64').toString('utf8') };
    throw new ManagerFailure(`${MANAGER} answered without SecretString or SecretBinary`);
  }

  private async assumeRole(config: AwsAuthConfig): Promise<AwsCredentials> {
    // The secret and token are part of the key (hashed): keys that only share an access key id never share a session.
    const key = createHash('sha256')
      .update([config.role_arn, config.external_id ?? '', config.access_key_id, config.secret_access_key, config.session_token ?? '', stsEndpoint(config)].join('\n'))
      .digest('base64');
    const input = {
      url: stsEndpoint(config),
      region: config.region,
      credentials: baseCredentials(config),
      roleArn: config.role_arn as string,
      externalId: config.external_id,
      sessionName: 'gateway-secret-references',
    };
    try {
      return await this.roles.get(key, () => assumeRole(input, (url, init) => send(STS, url, init, this.ctx)));
    } catch (error) {
      if (error instanceof StsRefusal) throw new ManagerFailure(`AWS STS refused AssumeRole: ${error.status} ${error.code}`, transient(error.status));
      if (error instanceof StsInvalidAnswer) throw new ManagerFailure(error.message);
      throw error;
    }
  }
}

function baseCredentials(config: AwsAuthConfig): AwsCredentials {
  return { accessKeyId: config.access_key_id, secretAccessKey: config.secret_access_key, sessionToken: config.session_token };
}
