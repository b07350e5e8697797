/**
 * A local AWS Secrets Manager (and the STS AssumeRole it needs for role credentials), speaking the wire format of
 * the real services:
 * - Secrets Manager, JSON 1.1 protocol: `POST /`, `Content-Type: application/x-amz-json-1.1`,
 *   `X-Amz-Target: secretsmanager.GetSecretValue`, body `{"SecretId": name-or-ARN}`; answer `{ARN, Name, VersionId,
 *   SecretString | SecretBinary, VersionStages, CreatedDate}`; errors `{"__type": "...Exception", "message"}` (400).
 * - STS, query protocol: form body `Action=AssumeRole&Version=2011-06-15&RoleArn=…&RoleSessionName=…`, XML answer
 *   with temporary credentials, which this server then accepts (with their session token).
 * Every request's SigV4 signature is recomputed with the server's copy of the secret key (tests/providers/bedrock/
 * sigv4.ts, written from the specification independently of aws4fetch) and refused when it differs.
 */
import { type Credential, verifyRequest } from '../../providers/bedrock/sigv4.ts';
import { answerAssumeRole, type AssumeRoleCall } from '../../providers/bedrock/sts.ts';
import { startMockServer } from '../harness.ts';

export const ACCOUNT = '123456789012';

export interface AwsMockOptions {
  region?: string;
  /** Long-term keys: access key id → secret access key (and session token for temporary ones). */
  credentials: Record<string, Credential>;
  /** Roles that may be assumed, with the external id they require. */
  roles?: Record<string, { externalId?: string }>;
}

interface StoredSecret {
  name: string;
  arn: string;
  versionId: string;
  createdDate: number;
  string?: string;
  binary?: Uint8Array;
}

export interface AwsSecretsManagerMock {
  url: string;
  region: string;
  /** Creates the secret or puts a new current version of it. */
  putSecret(name: string, value: string | Uint8Array): StoredSecret;
  deleteSecret(name: string): void;
  /** GetSecretValue calls that passed the signature check, with the key that signed them. */
  reads: { secretId: string; accessKeyId: string }[];
  assumeRoleCalls: number;
  stop(): void;
}

const suffix = () => Math.random().toString(36).slice(2, 8).padEnd(6, 'x');

function jsonError(status: number, type: string, message: string): Response {
  return new Response(JSON.stringify({ __type: type, message }), {
    status,
    headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': crypto.randomUUID() },
  });
}

export function startAwsSecretsManager(options: AwsMockOptions): AwsSecretsManagerMock {
  const region = options.region ?? 'us-east-1';
  const credentials: Record<string, Credential> = { ...options.credentials };
  const secrets = new Map<string, StoredSecret>();
  const reads: { secretId: string; accessKeyId: string }[] = [];
  const stsCalls: AssumeRoleCall[] = [];

  const find = (id: string) => secrets.get(id) ?? [...secrets.values()].find((s) => s.arn === id);
  const keyOf = (req: Request) => /Credential=([^/]+)\//.exec(req.headers.get('authorization') ?? '')?.[1] ?? '';

  async function getSecretValue(req: Request, body: Uint8Array): Promise<Response> {
    const rejection = verifyRequest({ method: req.method, url: req.url, headers: req.headers, body }, { credentials, region, service: 'secretsmanager' });
    if (rejection) return jsonError(400, rejection.errorType, rejection.message);
    let input: { SecretId?: unknown };
    try {
      input = JSON.parse(new TextDecoder().decode(body)) as { SecretId?: unknown };
    } catch {
      return jsonError(400, 'SerializationException', 'Start of structure or map found where not expected.');
    }
    if (typeof input.SecretId !== 'string' || !input.SecretId) return jsonError(400, 'ValidationException', "1 validation error detected: Value at 'secretId' failed to satisfy constraint: Member must not be null");
    const secret = find(input.SecretId);
    if (!secret) return jsonError(400, 'ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
    reads.push({ secretId: input.SecretId, accessKeyId: keyOf(req) });
    return new Response(
      JSON.stringify({
        ARN: secret.arn,
        Name: secret.name,
        VersionId: secret.versionId,
        ...(secret.string !== undefined ? { SecretString: secret.string } : { SecretBinary: Buffer.from(secret.binary ?? new Uint8Array()).toString('base64') }),
        VersionStages: ['AWSCURRENT'],
        CreatedDate: secret.createdDate / 1000,
      }),
      { headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': crypto.randomUUID() } },
    );
  }

  // STS shares the bedrock tests' AssumeRole; the credentials it issues are accepted here too.
  const assumeRole = (req: Request, body: Uint8Array) =>
    answerAssumeRole(req, body, { region, callers: credentials, roles: options.roles ?? {}, issued: credentials }, (call) => stsCalls.push(call));

  const server = startMockServer({
    record: () => undefined, // the calls that count are in `reads` and the STS calls
    handle({ request: req, url, bytes: body }) {
      if (req.method !== 'POST' || url.pathname !== '/') return jsonError(404, 'UnknownOperationException', 'Not found');
      const target = req.headers.get('x-amz-target');
      if (target === null && (req.headers.get('content-type') ?? '').startsWith('application/x-www-form-urlencoded')) return assumeRole(req, body);
      if (req.headers.get('content-type') !== 'application/x-amz-json-1.1') return jsonError(400, 'SerializationException', 'Content-Type must be application/x-amz-json-1.1');
      if (target !== 'secretsmanager.GetSecretValue') return jsonError(400, 'UnknownOperationException', `Unknown operation ${target}`);
      return getSecretValue(req, body);
    },
  });

  return {
    url: server.url,
    region,
    reads,
    get assumeRoleCalls() {
      return stsCalls.filter((call) => call.issued).length;
    },
    putSecret(name, value) {
      const existing = secrets.get(name);
      const secret: StoredSecret = {
        name,
        arn: existing?.arn ?? `arn:aws:secretsmanager:${region}:${ACCOUNT}:secret:${name}-${suffix()}`,
        versionId: crypto.randomUUID(),
        createdDate: Date.now(),
        ...(typeof value === 'string' ? { string: value } : { binary: value }),
      };
      secrets.set(name, secret);
      return secret;
    },
    deleteSecret(name) {
      secrets.delete(name);
    },
    stop() {
      void server.stop();
    },
  };
}
