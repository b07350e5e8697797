/**
 * The AWS calls of batch inference, apart from the runtime: the bucket the records go through (S3) and the Bedrock
 * control plane (CreateModelInvocationJob, GetModelInvocationJob, StopModelInvocationJob). Each is signed with the
 * target's keys, or its role's (auth.ts): service `s3` with the payload's SHA-256, service `bedrock` for the control
 * plane.
 *
 * Hosts: AWS's regional ones, `https://bedrock.<region>.amazonaws.com` and the bucket's virtual host
 * `https://<bucket>.s3.<region>.amazonaws.com` (path-style on `s3.<region>` for a bucket name with dots, which a
 * virtual host's certificate does not cover), or the operator's AWS_ENDPOINT_URL_BEDROCK / AWS_ENDPOINT_URL_S3 (the
 * AWS SDKs' variables; S3 then path-style, `<endpoint>/<bucket>/<key>`). A config chooses only a region and a bucket
 * name, both checked to fit in a host name, so these calls use a plain fetch, as STS does, not the outbound guard. A
 * custom host moves the runtime calls only (it is often a VPC endpoint of bedrock-runtime).
 */
import { Errors, type GatewayError, type JsonObject, type ProviderCall, type TargetConfig } from '@gateway/sdk';
import { regionOf, type Signer } from './auth.ts';
import { bedrockError } from './errors.ts';

const PROVIDER = 'bedrock';
const TIMEOUT_MS = 30_000;

/** The operator's endpoints (AWS_ENDPOINT_URL_BEDROCK, AWS_ENDPOINT_URL_S3), when set. */
export interface BatchEndpoints {
  bedrock?: string;
  s3?: string;
}

/** An http(s) URL of the environment without its trailing slashes, or undefined. */
export function endpointFromEnv(value: string | undefined): string | undefined {
  const url = value?.trim().replace(/\/+$/, '');
  if (!url || !URL.canParse(url)) return undefined;
  const { protocol } = new URL(url);
  return protocol === 'https:' || protocol === 'http:' ? url : undefined;
}

const awsDomain = (region: string) => `amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;

export function controlPlaneUrl(target: TargetConfig, endpoints: BatchEndpoints): string {
  return endpoints.bedrock ?? `https://bedrock.${regionOf(target)}.${awsDomain(regionOf(target))}`;
}

const encodeKey = (key: string) => key.split('/').map(encodeURIComponent).join('/');

/** Where an object of the bucket is read and written. */
export function objectUrl(target: TargetConfig, bucket: string, key: string, endpoints: BatchEndpoints): string {
  if (endpoints.s3) return `${endpoints.s3}/${bucket}/${encodeKey(key)}`;
  const region = regionOf(target);
  if (bucket.includes('.')) return `https://s3.${region}.${awsDomain(region)}/${bucket}/${encodeKey(key)}`;
  return `https://${bucket}.s3.${region}.${awsDomain(region)}/${encodeKey(key)}`;
}

/** A call's failure as the client sees it: AWS unreachable (502, worth another try), or its own error relayed. */
async function failure(what: string, response: Response): Promise<GatewayError> {
  const text = (await response.text()).slice(0, 2000);
  let info: ReturnType<typeof bedrockError>;
  try {
    info = bedrockError(JSON.parse(text), response.status);
  } catch {
    // S3 answers XML: its <Message>, else the status alone.
    const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
    const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
    info = { message: message ?? `HTTP ${response.status}`, code: code ?? null, type: 'provider_error' };
  }
  return Errors.provider(PROVIDER, response.status, `${what}: ${info?.message ?? `HTTP ${response.status}`}`, info?.type, info?.code ?? null);
}

export class BatchAws {
  constructor(
    private readonly sign: Signer,
    private readonly endpoints: BatchEndpoints,
    private readonly send: (url: string, init: RequestInit) => Promise<Response> = (url, init) =>
      fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) }),
  ) {}

  private async call(target: TargetConfig, service: string, call: ProviderCall, what: string): Promise<Response> {
    const signed = await this.sign(call, target, service);
    let response: Response;
    try {
      response = await this.send(signed.url, { method: signed.method, headers: signed.headers, body: signed.body as RequestInit["body"] });
    } catch (error) {
      throw Errors.upstreamUnreachable(PROVIDER, `${what}: ${error instanceof Error ? error.name : 'network error'}`);
    }
    return response;
  }

  private async s3(target: TargetConfig, method: string, bucket: string, key: string, body?: Uint8Array): Promise<Response> {
    // The signer adds the payload's hash, as S3 asks.
    const headers: Record<string, string> = body ? { 'content-type': 'application/jsonl' } : {};
    return this.call(target, 's3', { url: objectUrl(target, bucket, key, this.endpoints), method, headers, body: body ?? null }, `S3 ${method} s3://${bucket}/${key}`);
  }

  async putObject(target: TargetConfig, bucket: string, key: string, body: Uint8Array): Promise<void> {
    const response = await this.s3(target, 'PUT', bucket, key, body);
    if (!response.ok) throw await failure(`S3 PUT s3://${bucket}/${key}`, response);
    await response.arrayBuffer();
  }

  /** The object's bytes, or undefined when there is none (404). */
  async getObject(target: TargetConfig, bucket: string, key: string): Promise<Uint8Array | undefined> {
    const response = await this.s3(target, 'GET', bucket, key);
    if (response.status === 404) {
      await response.arrayBuffer();
      return undefined;
    }
    if (!response.ok) throw await failure(`S3 GET s3://${bucket}/${key}`, response);
    return new Uint8Array(await response.arrayBuffer());
  }

  /** A control-plane call; its JSON answer. */
  async bedrock(target: TargetConfig, method: 'GET' | 'POST', path: string, what: string, body?: JsonObject): Promise<JsonObject> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body) headers['content-type'] = 'application/json';
    const url = `${controlPlaneUrl(target, this.endpoints)}${path}`;
    const response = await this.call(target, 'bedrock', { url, method, headers, body: body ? JSON.stringify(body) : null }, what);
    if (!response.ok) throw await failure(what, response);
    const text = await response.text();
    if (!text.trim()) return {};
    try {
      const json = JSON.parse(text) as unknown;
      if (typeof json === 'object' && json !== null && !Array.isArray(json)) return json as JsonObject;
    } catch {
      // Reported below.
    }
    throw Errors.upstreamInvalid(PROVIDER, `${what} answered something other than a JSON object`);
  }
}
