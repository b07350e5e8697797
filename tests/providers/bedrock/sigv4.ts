/**
 * Server-side verification of AWS Signature Version 4 (header form), as the Bedrock test server does it: the
 * signature is recomputed from the request received, with the secret the server knows for the access key, and
 * compared. Written from the SigV4 specification with node:crypto, independently of the signer under test
 * (aws4fetch), so an encoding or canonicalisation mistake on either side shows up as a 403.
 *
 * Canonical request: METHOD \n canonical URI \n canonical query \n canonical headers \n signed headers \n payload
 * hash. For every service but S3 the canonical URI is the path as sent, URI-encoded once more per segment (so a
 * model id's `:` sent as `%3A` is signed as `%253A`). The string to sign is `AWS4-HMAC-SHA256 \n <x-amz-date> \n
 * <date>/<region>/<service>/aws4_request \n hex(sha256(canonical request))`; the key is HMAC-chained from
 * `AWS4<secret>` over the date, region, service and `aws4_request`.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface Credential {
  secret: string;
  /** For temporary credentials: the token the request must carry (and sign) as x-amz-security-token. */
  sessionToken?: string;
}

export interface SignatureInput {
  method: string;
  /** The path exactly as it was sent (still percent-encoded). */
  rawPath: string;
  /** The query string as sent, without `?`. */
  rawQuery: string;
  /** Header values by lower-case name. */
  headers: Record<string, string>;
  signedHeaders: string[];
  payloadHash: string;
  amzDate: string;
  region: string;
  service: string;
  secret: string;
}

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ as %XX (upper-case hex), byte by byte. */
export function uriEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

export function canonicalUri(rawPath: string): string {
  if (!rawPath) return '/';
  return rawPath
    .split('/')
    .map((segment) => uriEncode(segment))
    .join('/');
}

export function canonicalQuery(rawQuery: string): string {
  if (!rawQuery) return '';
  return rawQuery
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf('=');
      const key = eq < 0 ? pair : pair.slice(0, eq);
      const value = eq < 0 ? '' : pair.slice(eq + 1);
      return [uriEncode(safeDecode(key)), uriEncode(safeDecode(value))] as const;
    })
    .sort(([k1, v1], [k2, v2]) => (k1 < k2 ? -1 : k1 > k2 ? 1 : v1 < v2 ? -1 : v1 > v2 ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

export function canonicalRequest(input: SignatureInput): string {
  const headers = input.signedHeaders.map((name) => `${name}:${(input.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  return [
    input.method.toUpperCase(),
    canonicalUri(input.rawPath),
    canonicalQuery(input.rawQuery),
    headers,
    input.signedHeaders.join(';'),
    input.payloadHash,
  ].join('\n');
}

export function computeSignature(input: SignatureInput): string {
  const date = input.amzDate.slice(0, 8);
  const scope = `${date}/${input.region}/${input.service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', input.amzDate, scope, sha256(canonicalRequest(input))].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${input.secret}`, date), input.region), input.service), 'aws4_request');
  return createHmac('sha256', key).update(toSign).digest('hex');
}

export interface Rejection {
  status: number;
  errorType: string;
  message: string;
}

const AUTH = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9\-;]+),\s*Signature=([0-9a-f]{64})$/;
/** AWS refuses requests whose x-amz-date is more than 15 minutes away from its clock. */
const MAX_SKEW_MS = 15 * 60 * 1000;

const mismatch: Rejection = {
  status: 403,
  errorType: 'InvalidSignatureException',
  message:
    'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
};

/**
 * Checks a received request. Returns undefined when the signature is right, else the rejection Bedrock would send.
 */
export function verifyRequest(
  req: { method: string; url: string; headers: Headers; body: Uint8Array },
  opts: { credentials: Record<string, Credential>; region: string; service: string; now?: number },
): Rejection | undefined {
  const authorization = req.headers.get('authorization');
  if (!authorization) return { status: 403, errorType: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const match = AUTH.exec(authorization);
  if (!match) return { status: 403, errorType: 'IncompleteSignatureException', message: 'Authorization header is not a SigV4 header' };
  const [, keyId, date, region, service, signedList, signature] = match as unknown as string[];
  const credential = opts.credentials[keyId as string];
  if (!credential) return { status: 403, errorType: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (region !== opts.region || service !== opts.service) {
    return { status: 403, errorType: 'InvalidSignatureException', message: `Credential should be scoped to a valid region and service (${opts.region}/${opts.service}).` };
  }
  const signedHeaders = (signedList as string).split(';');
  if (!signedHeaders.includes('host') || !signedHeaders.includes('x-amz-date')) {
    return { status: 403, errorType: 'IncompleteSignatureException', message: 'host and x-amz-date must be signed' };
  }
  const amzDate = req.headers.get('x-amz-date') ?? '';
  if (!/^\d{8}T\d{6}Z$/.test(amzDate) || amzDate.slice(0, 8) !== date) {
    return { status: 403, errorType: 'IncompleteSignatureException', message: 'x-amz-date does not match the credential scope date' };
  }
  const when = Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11), +amzDate.slice(11, 13), +amzDate.slice(13, 15));
  if (Math.abs((opts.now ?? Date.now()) - when) > MAX_SKEW_MS) {
    return { status: 403, errorType: 'InvalidSignatureException', message: 'Signature expired: the request time is too far from the server time.' };
  }
  const token = req.headers.get('x-amz-security-token');
  if (credential.sessionToken !== undefined) {
    if (token !== credential.sessionToken || !signedHeaders.includes('x-amz-security-token')) {
      return { status: 403, errorType: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
    }
  } else if (token !== null) {
    return { status: 403, errorType: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  }

  const url = new URL(req.url);
  const rawPath = req.url.replace(/^[a-z]+:\/\/[^/]+/i, '').split('?')[0] as string;
  const headers: Record<string, string> = {};
  req.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  headers.host ??= url.host;
  const payloadHash = req.headers.get('x-amz-content-sha256') ?? sha256(req.body);
  if (payloadHash !== sha256(req.body)) return mismatch;
  const expected = computeSignature({
    method: req.method,
    rawPath,
    rawQuery: url.search.slice(1),
    headers,
    signedHeaders,
    payloadHash,
    amzDate,
    region: region as string,
    service: service as string,
    secret: credential.secret,
  });
  const ok = timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(signature as string, 'hex'));
  return ok ? undefined : mismatch;
}
