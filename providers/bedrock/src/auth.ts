/**
 * Authorization, apart from translation: AWS Signature Version 4 over the final call (method, URL, the x-amz-*
 * headers, body), service `bedrock`, with the target's svcA_access_key_id / svcA_secret_access_key and, for temporary
 * credentials, svcA_session_token (sent and signed as x-amz-security-token). Signing uses aws4fetch's AwsV4Signer.
 *
 * With `svcA_role_arn` (and `svcA_external_id` when the role's trust policy asks for one) those keys only assume the
 * role (STS AssumeRole, sts.ts) and the call is signed with the role's temporary credentials, which are kept until
 * five minutes before they expire. The STS endpoint is AWS's regional one for svcA_region, or the operator's
 * AWS_ENDPOINT_URL_STS; a custom host moves the Bedrock calls only. Nobody who writes a config can choose where STS
 * calls go (the region must look like a region), so they use a plain fetch, not the outbound guard.
 *
 * Only `host` and the `x-amz-*` headers are signed: other headers (content-type, those a client forwards, those the
 * HTTP client adds or rewrites) travel unsigned, which SigV4 allows, so nothing on the way can break the signature.
 */
import { createHash } from 'node:crypto';
import { Errors, GatewayError, type ProviderCall, type TargetConfig } from '@gateway/sdk';
import { AwsV4Signer } from 'aws4fetch';
import { assumeRole, type AwsCredentials, RoleSessions, type Send, StsInvalidAnswer, StsRefusal, stsEndpoint } from './sts.ts';

export const DEFAULT_REGION = 'us-east-1';
export const SERVICE = 'bedrock';
const PROVIDER = 'bedrock';
/** Names the gateway in the role's CloudTrail entries. */
export const ROLE_SESSION_NAME = 'gateway-bedrock';
const STS_TIMEOUT_MS = 15_000;

/** An AWS region name (us-east-1, eu-central-2, us-gov-west-1, cn-north-1, …): it goes into a host name. */
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/;

export function regionOf(target: TargetConfig): string {
  const region = target.svcA_region ?? DEFAULT_REGION;
  if (!REGION.test(region)) throw Errors.badRequest('svcA_region is not an AWS region name (such as us-east-1)', 'svcA_region');
  return region;
}

/** The Bedrock runtime endpoint of the target's region (what a custom host replaces). */
export function runtimeBaseUrl(target: TargetConfig): string {
  const region = regionOf(target);
  return `https://bedrock-runtime.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

/** A string field of the target that the generic config type may not list (the role fields of stored credentials). */
function field(target: TargetConfig, name: 'svcA_role_arn' | 'svcA_external_id'): string | undefined {
  const value = (target as Record<string, unknown>)[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `AWS_ENDPOINT_URL_STS` (the AWS SDKs' variable): one STS endpoint for every region, e.g. a VPC endpoint's. */
export function stsEndpointFromEnv(value: string | undefined): string | undefined {
  const url = value?.trim();
  if (!url || !URL.canParse(url)) return undefined;
  const { protocol } = new URL(url);
  return protocol === 'https:' || protocol === 'http:' ? url : undefined;
}

export interface SignerOptions {
  /** The STS endpoint for every region instead of AWS's regional one (AWS_ENDPOINT_URL_STS). */
  stsEndpoint?: string;
  /** How STS is called (tests); by default a fetch with a deadline that follows no redirect. */
  send?: Send;
  /** The clock that decides when role credentials are renewed (tests). */
  now?: () => number;
}

const fetchSts: Send = (url, init) => fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(STS_TIMEOUT_MS) });

/**
 * What an AssumeRole failure is to the client, as for the other providers' token services (docs/errors.md): STS
 * refusing the keys is the target's authentication failure (401), STS failing is a 502 worth another try.
 */
function stsError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof StsRefusal) {
    const failed = error.status >= 500 || error.status === 429;
    return new GatewayError({
      code: 'provider_authentication_failed',
      type: 'authentication_error',
      status: failed ? 502 : 401,
      message: `${PROVIDER}: AWS STS refused AssumeRole for svcA_role_arn (${error.status} ${error.code})${error.detail ? `: ${error.detail}` : ''}`,
      retryable: failed,
      extra: { provider: PROVIDER },
    });
  }
  if (error instanceof StsInvalidAnswer) return Errors.upstreamInvalid(PROVIDER, error.message);
  const name = error instanceof Error ? error.name : '';
  if (name === 'TimeoutError') return Errors.upstreamUnreachable(PROVIDER, `AWS STS did not answer within ${STS_TIMEOUT_MS} ms`);
  return Errors.upstreamUnreachable(PROVIDER, `AWS STS could not be reached (${name || 'network error'})`);
}

/** Headers of the incoming call that must not survive signing: stale credentials a client might have forwarded. */
const REPLACED = new Set(['authorization', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256']);

/**
 * Signs a call with the target's keys (or its role's) for an AWS service: `bedrock` by default (the runtime and the
 * control plane), `s3` for the batch inference bucket (batch-s3.ts).
 */
export type Signer = (call: ProviderCall, target: TargetConfig, service?: string) => Promise<ProviderCall>;

/** The provider's `authorize`, with its own cache of role credentials. */
export function createSigner(options: SignerOptions = {}): Signer {
  const sessions = new RoleSessions({ now: options.now });
  const send = options.send ?? fetchSts;

  /** The keys that sign the call: the target's own, or the role's they assume. */
  function credentialsFor(target: TargetConfig, region: string, own: AwsCredentials): Promise<AwsCredentials> | AwsCredentials {
    const roleArn = field(target, 'svcA_role_arn');
    if (!roleArn) return own;
    const externalId = field(target, 'svcA_external_id');
    const url = options.stsEndpoint ?? stsEndpoint(region);
    // The secret and token are part of the key (hashed): keys that only share an access key id never share a session.
    const key = createHash('sha256')
      .update([own.accessKeyId, own.secretAccessKey, own.sessionToken ?? '', roleArn, externalId ?? '', region, url].join('\n'))
      .digest('base64');
    const input = { url, region, credentials: own, roleArn, externalId, sessionName: ROLE_SESSION_NAME };
    return sessions.get(key, () => assumeRole(input, send)).catch((error: unknown) => {
      throw stsError(error);
    });
  }

  return async function signCall(call, target, service = SERVICE) {
    const accessKeyId = target.svcA_access_key_id;
    const secretAccessKey = target.svcA_secret_access_key;
    if (!accessKeyId || !secretAccessKey) {
      throw Errors.badRequest('The bedrock provider needs svcA_access_key_id and svcA_secret_access_key in the config', 'svcA_access_key_id');
    }
    const body = call.body;
    if (body instanceof ReadableStream) throw Errors.internal('A streamed request body cannot be signed for Bedrock');
    const region = regionOf(target);
    const credentials = await credentialsFor(target, region, { accessKeyId, secretAccessKey, sessionToken: target.svcA_session_token || undefined });

    const headers: Record<string, string> = {};
    const signed: Record<string, string> = {};
    for (const [name, value] of Object.entries(call.headers)) {
      const lower = name.toLowerCase();
      if (REPLACED.has(lower)) continue;
      headers[lower] = value;
      if (lower.startsWith('x-amz-')) signed[lower] = value;
    }
    // S3 wants the payload's hash signed (aws4fetch would send UNSIGNED-PAYLOAD).
    if (service === 's3') signed['x-amz-content-sha256'] = createHash('sha256').update(body ?? '').digest('hex');
    const signer = new AwsV4Signer({
      method: call.method,
      url: call.url,
      headers: signed,
      body: (body ?? undefined) as string | Uint8Array<ArrayBuffer> | undefined,
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      sessionToken: credentials.sessionToken,
      service,
      region,
    });
    const result = await signer.sign();
    result.headers.forEach((value, name) => {
      headers[name.toLowerCase()] = value;
    });
    return { ...call, headers };
  };
}

/** The signer of the exported adapter: AWS's regional STS endpoints. */
export const signCall = createSigner();
