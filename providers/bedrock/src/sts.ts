/**
 * AWS STS AssumeRole, the one client the gateway has (the bedrock provider's `svcA_role_arn` and the AWS Secrets
 * Manager client of secret references both use it, importing `@gateway/provider-bedrock/sts`).
 *
 * Wire format (STS API reference, Query protocol): `POST /` with the form body `Action=AssumeRole&Version=2011-06-15
 * &RoleArn=…&RoleSessionName=…&DurationSeconds=…[&ExternalId=…]`, SigV4-signed for service `sts` with the caller's
 * keys. The answer is XML: `AssumeRoleResponse/AssumeRoleResult/Credentials/{AccessKeyId, SecretAccessKey,
 * SessionToken, Expiration}`; an error is `ErrorResponse/Error/{Type, Code, Message}` with a 4xx or 5xx status.
 *
 * The HTTP call itself is the caller's (`send`): the bedrock provider's STS URL is AWS's own, the secret references'
 * may be an admin's and goes through the gateway's outbound guard. What STS answers never travels further than its
 * status, its error code and its short message.
 */
import { AwsV4Signer } from 'aws4fetch';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** A role's temporary credentials. */
export interface RoleCredentials extends AwsCredentials {
  sessionToken: string;
  /** When STS says they expire (ms since the epoch). */
  expiration: number;
}

export interface AssumeRoleInput {
  /** The STS endpoint (`stsEndpoint(region)` unless configured otherwise). */
  url: string;
  /** The signing region. */
  region: string;
  /** The keys that assume the role (long-term, or temporary with their session token). */
  credentials: AwsCredentials;
  roleArn: string;
  externalId?: string;
  /** Shows in the role's CloudTrail entries: who assumed it. */
  sessionName: string;
  /** 900 to the role's maximum; STS's default is 3600. */
  durationSeconds?: number;
}

/** One HTTP call (a guarded fetch, or a plain one for AWS's own endpoint). Rejects on network errors. */
export type Send = (url: string, init: RequestInit) => Promise<Response>;

/** STS answered with an error: its status and error code, and its message cut short. */
export class StsRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string | undefined,
  ) {
    super(`AWS STS refused AssumeRole: ${status} ${code}${detail ? `: ${detail}` : ''}`);
    this.name = 'StsRefusal';
  }
}

/** STS answered 200 without usable credentials. */
export class StsInvalidAnswer extends Error {
  constructor() {
    super('AWS STS answered AssumeRole without credentials');
    this.name = 'StsInvalidAnswer';
  }
}

/** The regional endpoint: `https://sts.<region>.amazonaws.com` (`.amazonaws.com.cn` in the China regions). */
export function stsEndpoint(region: string): string {
  return `https://sts.${region}.${region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com'}`;
}

const ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&quot;': '"', '&apos;': "'", '&amp;': '&' };

/** The text of the first `<tag>` in `xml` (STS's answers hold no attributes or nesting inside these elements). */
function xmlText(xml: string, tag: string): string | undefined {
  const match = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml);
  return match?.[1]?.replace(/&(?:lt|gt|quot|apos|amp);/g, (entity) => ENTITIES[entity] ?? entity);
}

/** An error code as AWS spells them (`AccessDenied`, `InvalidClientTokenId`), or undefined. */
const errorCode = (value: string | undefined) => (value && /^[\w.-]{1,64}$/.test(value) ? value : undefined);

/** A message on one line, cut short: enough to diagnose, never a body. */
const shortText = (value: string | undefined) => value?.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim().slice(0, 200) || undefined;

/** Calls AssumeRole. Rejects with StsRefusal, StsInvalidAnswer, or whatever `send` rejects with. */
export async function assumeRole(input: AssumeRoleInput, send: Send): Promise<RoleCredentials> {
  const url = new URL(input.url).href;
  const form = new URLSearchParams({
    Action: 'AssumeRole',
    Version: '2011-06-15',
    RoleArn: input.roleArn,
    RoleSessionName: input.sessionName,
    DurationSeconds: String(input.durationSeconds ?? 3600),
  });
  if (input.externalId) form.set('ExternalId', input.externalId);
  const body = form.toString();
  const signed = await new AwsV4Signer({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body,
    accessKeyId: input.credentials.accessKeyId,
    secretAccessKey: input.credentials.secretAccessKey,
    sessionToken: input.credentials.sessionToken || undefined,
    service: 'sts',
    region: input.region,
  }).sign();
  const response = await send(url, { method: 'POST', headers: signed.headers, body });
  const xml = await response.text().catch(() => '');
  if (!response.ok) throw new StsRefusal(response.status, errorCode(xmlText(xml, 'Code')) ?? 'UnknownError', shortText(xmlText(xml, 'Message')));
  const at = xml.indexOf('<Credentials>');
  const credentials = at < 0 ? '' : xml.slice(at);
  const accessKeyId = xmlText(credentials, 'AccessKeyId');
  const secretAccessKey = xmlText(credentials, 'SecretAccessKey');
  const sessionToken = xmlText(credentials, 'SessionToken');
  const expiration = Date.parse(xmlText(credentials, 'Expiration') ?? '');
  if (!accessKeyId || !secretAccessKey || !sessionToken || Number.isNaN(expiration)) throw new StsInvalidAnswer();
  return { accessKeyId, secretAccessKey, sessionToken, expiration };
}

export interface RoleSessionsOptions {
  /** Credentials are used until this long before they expire (default 5 minutes). */
  marginMs?: number;
  /** Sessions kept at most (the oldest goes first). */
  maxEntries?: number;
  /** The clock (tests). */
  now?: () => number;
}

/**
 * Assumed-role credentials by key, kept until `marginMs` before they expire; concurrent misses of one key share one
 * AssumeRole call, and a failed call is not kept. Credentials that arrive already inside the margin serve the calls
 * that waited for them and are not kept.
 */
export class RoleSessions {
  private readonly sessions = new Map<string, RoleCredentials>();
  private readonly pending = new Map<string, Promise<RoleCredentials>>();
  private readonly marginMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: RoleSessionsOptions = {}) {
    this.marginMs = options.marginMs ?? 5 * 60_000;
    this.maxEntries = options.maxEntries ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  get(key: string, load: () => Promise<RoleCredentials>): Promise<RoleCredentials> {
    const cached = this.sessions.get(key);
    if (cached && this.fresh(cached)) return Promise.resolve(cached);
    const waiting = this.pending.get(key);
    if (waiting) return waiting;
    const started = load()
      .then((credentials) => {
        this.sessions.delete(key);
        if (this.fresh(credentials)) this.keep(key, credentials);
        return credentials;
      })
      .finally(() => this.pending.delete(key));
    this.pending.set(key, started);
    return started;
  }

  clear(): void {
    this.sessions.clear();
  }

  private fresh(credentials: RoleCredentials): boolean {
    return credentials.expiration - this.marginMs > this.now();
  }

  private keep(key: string, credentials: RoleCredentials): void {
    if (this.sessions.size >= this.maxEntries) {
      for (const [k, c] of this.sessions) if (!this.fresh(c)) this.sessions.delete(k);
      for (const k of this.sessions.keys()) {
        if (this.sessions.size < this.maxEntries) break;
        this.sessions.delete(k);
      }
    }
    this.sessions.set(key, credentials);
  }
}
