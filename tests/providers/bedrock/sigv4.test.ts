/**
 * SigV4 both ways: the test server's verifier against AWS's published signature test vectors, and the provider's
 * authorize step (aws4fetch's signer) against that verifier, including every way a signature must fail.
 */
import { describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import type { ProviderCall, TargetConfig } from '@gateway/sdk';
import { regionOf, runtimeBaseUrl, signCall } from '../../../providers/bedrock/src/auth.ts';
import { canonicalUri, computeSignature, type Credential, verifyRequest } from './sigv4.ts';

const EMPTY = createHash('sha256').update('').digest('hex');
/** The credentials and clock of the AWS SigV4 test suite. */
const SUITE = { secret: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', amzDate: '20150830T123600Z', region: 'us-east-1', service: 'service' };

describe('the verifier reproduces the AWS SigV4 test suite', () => {
  const base = { method: 'GET', headers: { host: 'example.amazonaws.com', 'x-amz-date': SUITE.amzDate }, signedHeaders: ['host', 'x-amz-date'], payloadHash: EMPTY, ...SUITE };

  test('get-vanilla', () => {
    expect(computeSignature({ ...base, rawPath: '/', rawQuery: '' })).toBe('5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31');
  });

  test('get-vanilla-query-order-key-case: query parameters are sorted', () => {
    expect(computeSignature({ ...base, rawPath: '/', rawQuery: 'Param2=value2&Param1=value1' })).toBe(
      'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
    );
  });

  test('get-utf8: path characters are URI-encoded; an already encoded path (all but S3) is encoded once more', () => {
    // The suite's request line carries the raw character; its canonical path is /%E1%88%B4.
    expect(computeSignature({ ...base, rawPath: '/\u1234', rawQuery: '' })).toBe('8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85');
    expect(canonicalUri('/%E1%88%B4')).toBe('/%25E1%2588%25B4');
    expect(canonicalUri('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse')).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%253A0/converse');
  });
});

const KEY = { id: 'AKIDSIGNTEST', secret: 'sign/test+secret' };
const TEMP = { id: 'ASIASIGNTEST', secret: 'temp/secret', sessionToken: 'session//token==' };
const CREDENTIALS: Record<string, Credential> = {
  [KEY.id]: { secret: KEY.secret },
  [TEMP.id]: { secret: TEMP.secret, sessionToken: TEMP.sessionToken },
};
const target = (extra: Partial<TargetConfig> = {}): TargetConfig => ({
  provider: 'bedrock',
  svcA_access_key_id: KEY.id,
  svcA_secret_access_key: KEY.secret,
  svcA_region: 'us-east-1',
  ...extra,
});
const call = (): ProviderCall => ({
  url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse',
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-team': 'blue' },
  body: '{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}',
});

function verify(signed: ProviderCall, opts: { body?: string; now?: number; region?: string; headers?: (h: Headers) => void } = {}) {
  const headers = new Headers(signed.headers);
  headers.set('host', new URL(signed.url).host);
  opts.headers?.(headers);
  const body = new TextEncoder().encode(opts.body ?? (signed.body as string));
  return verifyRequest({ method: signed.method, url: signed.url, headers, body }, { credentials: CREDENTIALS, region: opts.region ?? 'us-east-1', service: 'bedrock', now: opts.now });
}

describe('authorize: SigV4 over the final call', () => {
  test('a signed call passes the verifier; the signature covers host and x-amz-date, service bedrock', async () => {
    const signed = await signCall(call(), target());
    expect(verify(signed)).toBeUndefined();
    expect(signed.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDSIGNTEST\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=host;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
    expect(signed.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    // Other headers travel unsigned and unchanged.
    expect(signed.headers['content-type']).toBe('application/json');
    expect(signed.headers['x-team']).toBe('blue');
  });

  test('temporary credentials: the session token is sent and signed', async () => {
    const signed = await signCall(call(), target({ svcA_access_key_id: TEMP.id, svcA_secret_access_key: TEMP.secret, svcA_session_token: TEMP.sessionToken }));
    expect(signed.headers['x-amz-security-token']).toBe(TEMP.sessionToken);
    expect(signed.headers.authorization).toContain('SignedHeaders=host;x-amz-date;x-amz-security-token');
    expect(verify(signed)).toBeUndefined();
  });

  test('a changed body, path, token, secret, region or clock fails verification with 403', async () => {
    const signed = await signCall(call(), target());
    expect(verify(signed, { body: '{"messages":[]}' })?.errorType).toBe('InvalidSignatureException');
    expect(verify({ ...signed, url: signed.url.replace('converse', 'converse-stream') })?.status).toBe(403);
    expect(verify(signed, { region: 'eu-west-1' })?.status).toBe(403);
    expect(verify(signed, { now: Date.now() + 20 * 60 * 1000 })?.message).toContain('expired');
    const wrongSecret = await signCall(call(), target({ svcA_secret_access_key: 'not-the-secret' }));
    expect(verify(wrongSecret)?.errorType).toBe('InvalidSignatureException');
    const unknownKey = await signCall(call(), target({ svcA_access_key_id: 'AKIDUNKNOWN' }));
    expect(verify(unknownKey)?.errorType).toBe('UnrecognizedClientException');

    const temp = target({ svcA_access_key_id: TEMP.id, svcA_secret_access_key: TEMP.secret });
    expect(verify(await signCall(call(), temp))?.errorType).toBe('UnrecognizedClientException'); // token missing
    const wrongToken = await signCall(call(), { ...temp, svcA_session_token: 'another-token' });
    expect(verify(wrongToken)?.errorType).toBe('UnrecognizedClientException');
    const good = await signCall(call(), { ...temp, svcA_session_token: TEMP.sessionToken });
    expect(verify(good, { headers: (h) => h.set('x-amz-security-token', 'swapped') })?.status).toBe(403);
  });

  test('x-amz-* headers a client forwards are signed; stale credentials it forwards are replaced', async () => {
    const c = call();
    c.headers = { ...c.headers, 'x-amz-target': 'x', authorization: 'Bearer sk-client', 'x-amz-date': '19990101T000000Z', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' };
    const signed = await signCall(c, target());
    expect(signed.headers.authorization).toContain('SignedHeaders=host;x-amz-date;x-amz-target');
    expect(signed.headers['x-amz-date']).not.toBe('19990101T000000Z');
    expect(signed.headers['x-amz-content-sha256']).toBeUndefined();
    expect(verify(signed)).toBeUndefined();
  });

  test('byte bodies (passthrough calls) are signed too; the input call is never mutated', async () => {
    const c: ProviderCall = { ...call(), body: new TextEncoder().encode('{"inputText":"x"}') };
    const before = structuredClone(c);
    const signed = await signCall(c, target());
    expect(c).toEqual(before);
    expect(signed).not.toBe(c);
    expect(verify(signed, { body: '{"inputText":"x"}' })).toBeUndefined();
  });

  test('missing credentials are a 400 naming the config fields', async () => {
    await expect(signCall(call(), { provider: 'bedrock', custom_host: 'http://x' })).rejects.toMatchObject({ status: 400, param: 'svcA_access_key_id' });
  });
});

describe('region and base URL', () => {
  test('us-east-1 by default; the region names the runtime host', () => {
    expect(runtimeBaseUrl({ provider: 'bedrock' })).toBe('https://bedrock-runtime.us-east-1.amazonaws.com');
    expect(runtimeBaseUrl({ provider: 'bedrock', svcA_region: 'eu-central-1' })).toBe('https://bedrock-runtime.eu-central-1.amazonaws.com');
    expect(runtimeBaseUrl({ provider: 'bedrock', svcA_region: 'us-gov-west-1' })).toBe('https://bedrock-runtime.us-gov-west-1.amazonaws.com');
    expect(runtimeBaseUrl({ provider: 'bedrock', svcA_region: 'cn-north-1' })).toBe('https://bedrock-runtime.cn-north-1.amazonaws.com.cn');
  });

  test('a region that is not a region name cannot steer the host', () => {
    for (const region of ['evil.example.com/', 'us-east-1.attacker', 'US-EAST-1', '', 'us-east-1#']) {
      expect(() => regionOf({ provider: 'bedrock', svcA_region: region })).toThrow('svcA_region');
    }
  });
});
