/**
 * Authorization, apart from translation: AWS Signature Version 4 over the final call (method, URL, the x-amz-*
 * headers, body), service `bedrock`, with the target's svcA_access_key_id / svcA_secret_access_key and, for temporary
 * credentials, svcA_session_token (sent and signed as x-amz-security-token). Signing uses aws4fetch's AwsV4Signer.
 *
 * Only `host` and the `x-amz-*` headers are signed: other headers (content-type, those a client forwards, those the
 * HTTP client adds or rewrites) travel unsigned, which SigV4 allows, so nothing on the way can break the signature.
 */
import { Errors, type ProviderCall, type TargetConfig } from '@gateway/sdk';
import { AwsV4Signer } from 'aws4fetch';

export const DEFAULT_REGION = 'us-east-1';
export const SERVICE = 'bedrock';

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

/** Headers of the incoming call that must not survive signing: stale credentials a client might have forwarded. */
const REPLACED = new Set(['authorization', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256']);

export async function signCall(call: ProviderCall, target: TargetConfig): Promise<ProviderCall> {
  const accessKeyId = target.svcA_access_key_id;
  const secretAccessKey = target.svcA_secret_access_key;
  if (!accessKeyId || !secretAccessKey) {
    throw Errors.badRequest('The bedrock provider needs svcA_access_key_id and svcA_secret_access_key in the config', 'svcA_access_key_id');
  }
  const body = call.body;
  if (body instanceof ReadableStream) throw Errors.internal('A streamed request body cannot be signed for Bedrock');

  const headers: Record<string, string> = {};
  const signed: Record<string, string> = {};
  for (const [name, value] of Object.entries(call.headers)) {
    const lower = name.toLowerCase();
    if (REPLACED.has(lower)) continue;
    headers[lower] = value;
    if (lower.startsWith('x-amz-')) signed[lower] = value;
  }
  const signer = new AwsV4Signer({
    method: call.method,
    url: call.url,
    headers: signed,
    body: (body ?? undefined) as string | Uint8Array<ArrayBuffer> | undefined,
    accessKeyId,
    secretAccessKey,
    sessionToken: target.svcA_session_token || undefined,
    service: SERVICE,
    region: regionOf(target),
  });
  const result = await signer.sign();
  result.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  return { ...call, headers };
}
