/**
 * A local AWS STS for tests, speaking AssumeRole as the STS API reference documents it (Query protocol): `POST /`
 * with the form body `Action=AssumeRole&Version=2011-06-15&RoleArn=…&RoleSessionName=…[&ExternalId=…]
 * [&DurationSeconds=…]`, SigV4-signed for service `sts` (verified byte for byte by sigv4.ts, written from the
 * specification independently of aws4fetch); the answer is the XML `AssumeRoleResponse` with temporary credentials,
 * an error the XML `ErrorResponse` (`Type`, `Code`, `Message`).
 *
 * Issued credentials are added to `issued` (the caller's record, handed to the Bedrock or Secrets Manager mock), so
 * the service behind accepts them, with their session token, and nothing else it was not given.
 */
import { startMockServer } from '../../mocks/harness.ts';
import { type Credential, verifyRequest } from './sigv4.ts';

export interface StsRole {
  /** The external id the role's trust policy requires. */
  externalId?: string;
  /** Lifetime of the credentials issued (default: DurationSeconds, else 3600). */
  lifetimeSeconds?: number;
}

export interface StsOptions {
  region?: string;
  /** Keys allowed to call STS: access key id → secret (and session token). */
  callers: Record<string, Credential>;
  /** Roles that may be assumed. */
  roles: Record<string, StsRole>;
  /** Where issued credentials go. */
  issued: Record<string, Credential>;
}

export interface AssumeRoleCall {
  /** The access key id that signed the call. */
  signedBy: string;
  form: Record<string, string>;
  /** The credentials answered, if any. */
  issued?: { accessKeyId: string; sessionToken: string; expiration: string };
}

const random = (n: number, alphabet: string) => Array.from({ length: n }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('');

export function stsError(status: number, code: string, message: string): Response {
  const body = `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>${crypto.randomUUID()}</RequestId></ErrorResponse>`;
  return new Response(body, { status, headers: { 'content-type': 'text/xml' } });
}

/** Answers one AssumeRole request as STS would; `record` hears every call that passed the signature check. */
export function answerAssumeRole(req: Request, body: Uint8Array, options: StsOptions, record?: (call: AssumeRoleCall) => void): Response {
  const region = options.region ?? 'us-east-1';
  const rejection = verifyRequest({ method: req.method, url: req.url, headers: req.headers, body }, { credentials: options.callers, region, service: 'sts' });
  if (rejection) return stsError(403, rejection.errorType, rejection.message);
  const form = new URLSearchParams(new TextDecoder().decode(body));
  const call: AssumeRoleCall = { signedBy: /Credential=([^/]+)\//.exec(req.headers.get('authorization') ?? '')?.[1] ?? '', form: Object.fromEntries(form) };
  record?.(call);
  if (form.get('Action') !== 'AssumeRole') return stsError(400, 'InvalidAction', `Could not find operation ${form.get('Action')} for version ${form.get('Version')}`);
  if (form.get('Version') !== '2011-06-15') return stsError(400, 'InvalidParameterValue', 'Version');
  const roleArn = form.get('RoleArn') ?? '';
  const sessionName = form.get('RoleSessionName') ?? '';
  if (!/^[\w+=,.@-]{2,64}$/.test(sessionName)) return stsError(400, 'ValidationError', "Value at 'roleSessionName' failed to satisfy constraint");
  const role = options.roles[roleArn];
  const denied = `User: arn:aws:iam::123456789012:user/${call.signedBy} is not authorized to perform: sts:AssumeRole on resource: ${roleArn}`;
  if (!role) return stsError(403, 'AccessDenied', denied);
  if (role.externalId !== undefined && form.get('ExternalId') !== role.externalId) return stsError(403, 'AccessDenied', denied);
  const lifetime = role.lifetimeSeconds ?? Number(form.get('DurationSeconds') ?? 3600);
  const accessKeyId = `ASIA${random(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`;
  const secret = random(40, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');
  const sessionToken = random(120, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');
  const expiration = new Date(Date.now() + lifetime * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  options.issued[accessKeyId] = { secret, sessionToken };
  call.issued = { accessKeyId, sessionToken, expiration };
  const xml = `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <SourceIdentity></SourceIdentity>
    <AssumedRoleUser>
      <Arn>${roleArn.replace(':iam::', ':sts::').replace(':role/', ':assumed-role/')}/${sessionName}</Arn>
      <AssumedRoleId>AROA3XFRBF535PLBIFPI4:${sessionName}</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>${accessKeyId}</AccessKeyId>
      <SecretAccessKey>${secret}</SecretAccessKey>
      <SessionToken>${sessionToken}</SessionToken>
      <Expiration>${expiration}</Expiration>
    </Credentials>
    <PackedPolicySize>6</PackedPolicySize>
  </AssumeRoleResult>
  <ResponseMetadata>
    <RequestId>${crypto.randomUUID()}</RequestId>
  </ResponseMetadata>
</AssumeRoleResponse>`;
  return new Response(xml, { headers: { 'content-type': 'text/xml' } });
}

export interface StsServer {
  url: string;
  /** Every AssumeRole call that passed the signature check, in order. */
  calls: AssumeRoleCall[];
  /** Answers the next calls with this error instead (until called with undefined). */
  fail(error: { status: number; code: string; message: string } | undefined): void;
  stop(): Promise<void>;
}

/** A local STS on 127.0.0.1 that answers AssumeRole at `POST /`. */
export function startStsServer(options: StsOptions): StsServer {
  const calls: AssumeRoleCall[] = [];
  let failure: { status: number; code: string; message: string } | undefined;
  const server = startMockServer({
    record: () => undefined, // the calls that count are in `calls`
    handle({ request: req, url, bytes: body, text }) {
      if (req.method !== 'POST' || url.pathname !== '/') return stsError(404, 'UnknownOperation', 'Not found');
      if (failure) {
        calls.push({ signedBy: '', form: Object.fromEntries(new URLSearchParams(text)) });
        return stsError(failure.status, failure.code, failure.message);
      }
      return answerAssumeRole(req, body, options, (call) => calls.push(call));
    },
  });
  return {
    url: server.url,
    calls,
    fail(error) {
      failure = error;
    },
    stop: server.stop,
  };
}
