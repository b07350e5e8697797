/**
 * File contents in an S3-compatible bucket (AWS S3, MinIO, R2, …), path-style: `<endpoint>/<bucket>/<prefix><workspace>/<id>`,
 * every request SigV4-signed (aws4fetch, service s3) with its payload's SHA-256. Chosen when FILES_S3_BUCKET is set.
 */
import { AwsClient } from 'aws4fetch';
import { type FileStore, part } from './file-store.ts';

export interface S3Settings {
  /** FILES_S3_ENDPOINT, e.g. https://s3.us-east-1.amazonaws.com or http://minio:9000 */
  endpoint: string;
  /** FILES_S3_BUCKET */
  bucket: string;
  /** FILES_S3_REGION, default us-east-1 */
  region: string;
  /** FILES_S3_ACCESS_KEY_ID, FILES_S3_SECRET_ACCESS_KEY (and FILES_S3_SESSION_TOKEN for temporary credentials) */
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** FILES_S3_PREFIX: prepended to every key, e.g. `gateway/` */
  prefix: string;
}

/** The S3 settings of the environment, undefined without FILES_S3_BUCKET; throws naming what is missing. */
export function s3SettingsFromEnv(env: Readonly<Record<string, string | undefined>>): S3Settings | undefined {
  const bucket = env.FILES_S3_BUCKET?.trim();
  if (!bucket) return undefined;
  const need = (name: string): string => {
    const value = env[name]?.trim();
    if (!value) throw new Error(`FILES_S3_BUCKET is set: ${name} is needed too`);
    return value;
  };
  const endpoint = need('FILES_S3_ENDPOINT').replace(/\/+$/, '');
  if (!/^https?:\/\//.test(endpoint)) throw new Error('FILES_S3_ENDPOINT must be an http(s) URL');
  return {
    endpoint,
    bucket,
    region: env.FILES_S3_REGION?.trim() || 'us-east-1',
    accessKeyId: need('FILES_S3_ACCESS_KEY_ID'),
    secretAccessKey: need('FILES_S3_SECRET_ACCESS_KEY'),
    ...(env.FILES_S3_SESSION_TOKEN?.trim() ? { sessionToken: env.FILES_S3_SESSION_TOKEN.trim() } : {}),
    prefix: env.FILES_S3_PREFIX?.trim() ?? '',
  };
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return new Bun.CryptoHasher('sha256').update(bytes).digest('hex');
}

export class S3FileStore implements FileStore {
  private readonly client: AwsClient;

  constructor(private readonly settings: S3Settings) {
    this.client = new AwsClient({
      accessKeyId: settings.accessKeyId,
      secretAccessKey: settings.secretAccessKey,
      ...(settings.sessionToken ? { sessionToken: settings.sessionToken } : {}),
      service: 's3',
      region: settings.region,
      retries: 2,
    });
  }

  private url(workspaceId: string, id: string): string {
    const key = `${this.settings.prefix}${part(workspaceId)}/${part(id)}`;
    return `${this.settings.endpoint}/${encodeURIComponent(this.settings.bucket)}/${key.split('/').map(encodeURIComponent).join('/')}`;
  }

  private async send(method: string, url: string, body?: Uint8Array): Promise<Response> {
    const payload = body ?? new Uint8Array();
    const response = await this.client.fetch(url, {
      method,
      ...(body ? { body: payload } : {}),
      headers: { 'x-amz-content-sha256': await sha256Hex(payload) },
    });
    return response;
  }

  private async fail(what: string, response: Response): Promise<never> {
    const text = (await response.text()).slice(0, 300);
    throw new Error(`file storage: ${what} answered ${response.status}: ${text}`);
  }

  async put(workspaceId: string, id: string, bytes: Uint8Array | string): Promise<void> {
    const body = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes;
    const response = await this.send('PUT', this.url(workspaceId, id), body);
    if (!response.ok) await this.fail('PUT', response);
    await response.arrayBuffer();
  }

  async get(workspaceId: string, id: string): Promise<Uint8Array> {
    const response = await this.send('GET', this.url(workspaceId, id));
    if (!response.ok) await this.fail('GET', response);
    return new Uint8Array(await response.arrayBuffer());
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    const response = await this.send('DELETE', this.url(workspaceId, id));
    // S3 answers 204 whether or not the object was there.
    if (!response.ok && response.status !== 404) await this.fail('DELETE', response);
    await response.arrayBuffer();
  }
}
