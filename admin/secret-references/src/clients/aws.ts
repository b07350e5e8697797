/**
 * AWS Secrets Manager, GetSecretValue: the JSON 1.1 protocol (POST / with `X-Amz-Target:
 * secretsmanager.GetSecretValue`, body `{"SecretId": …}`), signed with SigV4 (aws4fetch) for service
 * `secretsmanager`. With `role_arn` the keys first assume the role through STS AssumeRole (query protocol, XML
 * answer); the role's temporary credentials are kept until shortly before they expire.
 */
import { AwsV4Signer } from 'aws4fetch';
import type { JsonObject } from '@gateway/sdk';
import { TtlCache } from '../cache.ts';
import { ManagerFailure } from '../errors.ts';
import type { AwsAuthConfig } from '../kinds.ts';
import { type ClientContext, readObject, send, short, transient } from './http.ts';
import type { FetchedSecret } from './types.ts';

const MANAGER = 'AWS Secrets Manager';

interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** Epoch ms; undefined for long-term keys. */
  expires?: number;
}

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

const xmlText = (xml: string, tag: string): string | undefined => {
  const match = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml);
  return match?.[1]
    ?.replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
};

export class AwsSecretsManagerClient {
  /** Assumed-role credentials by role, external id and base key. */
  private readonly roles = new TtlCache<Credentials>(1_000);

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

  private assumeRole(config: AwsAuthConfig): Promise<Credentials> {
    const key = [config.role_arn, config.external_id ?? '', config.access_key_id, stsEndpoint(config)].join('\n');
    // Kept until five minutes before they expire (the default session lasts an hour).
    return this.roles.get(key, () => this.callAssumeRole(config), (c) => (c.expires ?? 0) - Date.now() - 5 * 60_000);
  }

  private async callAssumeRole(config: AwsAuthConfig): Promise<Credentials> {
    const url = new URL(stsEndpoint(config)).href;
    const form = new URLSearchParams({
      Action: 'AssumeRole',
      Version: '2011-06-15',
      RoleArn: config.role_arn as string,
      RoleSessionName: 'gateway-secret-references',
      DurationSeconds: '3600',
    });
    if (config.external_id) form.set('ExternalId', config.external_id);
    const body = form.toString();
    const base = baseCredentials(config);
    const signed = await new AwsV4Signer({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body,
      accessKeyId: base.accessKeyId,
      secretAccessKey: base.secretAccessKey,
      sessionToken: base.sessionToken,
      service: 'sts',
      region: config.region,
    }).sign();
    const response = await send('AWS STS', url, { method: 'POST', headers: signed.headers, body }, this.ctx);
    const xml = await response.text().catch(() => '');
    if (!response.ok) {
      throw new ManagerFailure(`AWS STS refused AssumeRole: ${response.status} ${short(xmlText(xml, 'Code') ?? 'UnknownError', 80)}`, transient(response.status));
    }
    const accessKeyId = xmlText(xml, 'AccessKeyId');
    const secretAccessKey = xmlText(xml, 'SecretAccessKey');
    const sessionToken = xmlText(xml, 'SessionToken');
    const expiration = Date.parse(xmlText(xml, 'Expiration') ?? '');
    if (!accessKeyId || !secretAccessKey || !sessionToken || Number.isNaN(expiration)) {
      throw new ManagerFailure('AWS STS answered AssumeRole without credentials');
    }
    return { accessKeyId, secretAccessKey, sessionToken, expires: expiration };
  }
}

function baseCredentials(config: AwsAuthConfig): Credentials {
  return { accessKeyId: config.access_key_id, secretAccessKey: config.secret_access_key, sessionToken: config.session_token };
}
