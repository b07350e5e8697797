/**
 * `svcA_role_arn`: the target's keys assume the role through STS AssumeRole and the Bedrock call is signed with the
 * role's temporary credentials. A local STS (sts.ts) verifies the SigV4 signature of each AssumeRole call (service
 * sts) and issues credentials; the local Bedrock (server.ts) is handed the record of issued credentials as the only
 * keys it knows, so a call signed with the target's own keys is a 403 there. The gateway reaches STS through
 * AWS_ENDPOINT_URL_STS, pointed at loopback; the signer-level tests inject the endpoint and the clock.
 *
 * Sessions are kept per gateway (per signer) across tests: each test uses its own role, so each starts cold.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import type { ProviderCall, TargetConfig } from '@gateway/sdk';
import type { Gateway } from '@gateway/server';
import { createSigner } from '../../../providers/bedrock/src/auth.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../../helpers/in-process.ts';
import { type BedrockServer, REGION, startBedrockServer } from './server.ts';
import { type Credential, verifyRequest } from './sigv4.ts';
import { startStsServer, type StsServer } from './sts.ts';

const CLAUDE = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const BASE = { id: 'AKIDROLECALLER00001', secret: 'role/caller+secret=key' };
const role = (name: string) => `arn:aws:iam::123456789012:role/${name}`;
const EXTERNAL_ID = 'partner-7f3a';

/** What STS issues; the Bedrock mock accepts exactly these (it is handed this very record). */
const issued: Record<string, Credential> = {};
let sts: StsServer;
let bedrock: BedrockServer;
let gateway: Gateway;
let workspace: string;

beforeAll(async () => {
  sts = startStsServer({
    region: REGION,
    callers: { [BASE.id]: { secret: BASE.secret } },
    roles: {
      [role('first')]: {},
      [role('reused')]: {},
      [role('flaky')]: {},
      [role('partner')]: { externalId: EXTERNAL_ID },
      // Sessions of 4 minutes: inside the 5-minute margin from the start, so never kept.
      [role('short')]: { lifetimeSeconds: 240 },
      [role('signer')]: {},
      [role('concurrent')]: {},
    },
    issued,
  });
  bedrock = await startBedrockServer({ credentials: issued });
  gateway = await startInProcessGateway({ AWS_ENDPOINT_URL_STS: sts.url });
  const workspaces = (await (await admin('GET', '/workspaces')).json()) as { data: { id: string; slug: string }[] };
  workspace = workspaces.data.find((w) => w.slug === 'default')?.id ?? '';
});
afterAll(async () => {
  await gateway?.close();
  await bedrock?.stop();
  await sts?.stop();
});
beforeEach(() => {
  sts.calls.length = 0;
  sts.fail(undefined);
  bedrock.requests.length = 0;
});

function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return gateway.handle(
    new Request(`http://gateway.test/v1${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
}

let counter = 0;
/** A stored bedrock integration (the role fields are stored credentials) at the local Bedrock; returns its slug. */
async function integration(configurations: Record<string, string>): Promise<string> {
  const slug = `bedrock-role-${++counter}`;
  const res = await admin('POST', '/integrations', {
    name: slug,
    slug,
    ai_provider_id: 'bedrock',
    configurations: { svcA_access_key_id: BASE.id, svcA_secret_access_key: BASE.secret, svcA_region: REGION, custom_host: bedrock.url, ...configurations },
    workspaces: [{ id: workspace, enabled: true }],
  });
  expect(res.status).toBe(201);
  return slug;
}

interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

async function chat(slug: string): Promise<{ status: number; body: Partial<ErrorBody> & { choices?: { message: { content: string } }[] } }> {
  const res = await gateway.handle(
    new Request('http://gateway.test/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-provider': `@${slug}` },
      body: JSON.stringify({ model: CLAUDE, messages: [{ role: 'user', content: 'Hello there' }] }),
    }),
  );
  return { status: res.status, body: (await res.json()) as Partial<ErrorBody> };
}

/** The access key id a request was signed with. */
const signedWith = (headers: Record<string, string>) => /Credential=([^/]+)\//.exec(headers.authorization ?? '')?.[1];

describe('svcA_role_arn through the gateway', () => {
  test('the keys assume the role (a signed AssumeRole) and Bedrock is called with the role’s temporary credentials', async () => {
    const slug = await integration({ svcA_role_arn: role('first') });
    const res = await chat(slug);
    expect(res.status).toBe(200);
    expect(res.body.choices?.[0]?.message.content).toBeString();

    expect(sts.calls).toHaveLength(1);
    const call = sts.calls[0];
    expect(call?.signedBy).toBe(BASE.id);
    expect(call?.form).toEqual({ Action: 'AssumeRole', Version: '2011-06-15', RoleArn: role('first'), RoleSessionName: 'gateway-bedrock', DurationSeconds: '3600' });
    expect(bedrock.requests).toHaveLength(1);
    const sent = bedrock.requests[0]?.headers ?? {};
    expect(signedWith(sent)).toBe(call?.issued?.accessKeyId as string);
    expect(sent['x-amz-security-token']).toBe(call?.issued?.sessionToken as string);
    expect(sent.authorization).toContain('/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token,');
  });

  test('without a role the same keys sign the call themselves (and this Bedrock, knowing only issued keys, refuses them)', async () => {
    const res = await chat(await integration({}));
    expect(res.status).toBe(403);
    expect(sts.calls).toHaveLength(0);
    expect(signedWith(bedrock.requests[0]?.headers ?? {})).toBe(BASE.id);
  });

  test('the role’s credentials are reused by later calls while they are fresh', async () => {
    const slug = await integration({ svcA_role_arn: role('reused') });
    for (let i = 0; i < 3; i++) expect((await chat(slug)).status).toBe(200);
    expect(sts.calls).toHaveLength(1);
    expect(bedrock.requests.map((r) => signedWith(r.headers))).toEqual(Array(3).fill(sts.calls[0]?.issued?.accessKeyId));
  });

  test('credentials that expire within 5 minutes are not kept: the next call assumes the role again', async () => {
    const slug = await integration({ svcA_role_arn: role('short') });
    for (let i = 0; i < 2; i++) expect((await chat(slug)).status).toBe(200);
    expect(sts.calls).toHaveLength(2);
    const keys = bedrock.requests.map((r) => signedWith(r.headers));
    expect(keys).toEqual(sts.calls.map((c) => c.issued?.accessKeyId));
    expect(keys[0]).not.toBe(keys[1]);
  });

  test('svcA_external_id is sent as ExternalId; a wrong one is the target’s auth failure, and nothing reaches Bedrock', async () => {
    expect((await chat(await integration({ svcA_role_arn: role('partner'), svcA_external_id: EXTERNAL_ID }))).status).toBe(200);
    expect(sts.calls[0]?.form.ExternalId).toBe(EXTERNAL_ID);

    bedrock.requests.length = 0;
    const refused = await chat(await integration({ svcA_role_arn: role('partner'), svcA_external_id: 'not-the-external-id' }));
    expect(sts.calls[1]?.form.ExternalId).toBe('not-the-external-id');
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ type: 'authentication_error', code: 'provider_authentication_failed' });
    expect(refused.body.error?.message).toStartWith('bedrock: AWS STS refused AssumeRole for svcA_role_arn (403 AccessDenied): User: arn:aws:iam::123456789012:user/');
    // STS's words, not its body.
    expect(JSON.stringify(refused.body)).not.toContain('ErrorResponse');
    expect(JSON.stringify(refused.body)).not.toContain('RequestId');
    expect(bedrock.requests).toHaveLength(0);
  });

  test('keys STS does not know are an auth failure (STS’s signature check), with no Bedrock call', async () => {
    const refused = await chat(await integration({ svcA_role_arn: role('first'), svcA_secret_access_key: 'not-the-secret' }));
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ type: 'authentication_error', code: 'provider_authentication_failed' });
    expect(refused.body.error?.message).toContain('(403 InvalidSignatureException)');
    expect(bedrock.requests).toHaveLength(0);
  });

  test('a failed AssumeRole is not kept: STS failing is a 502 with no Bedrock call, and the next call assumes the role', async () => {
    const slug = await integration({ svcA_role_arn: role('flaky') });
    sts.fail({ status: 503, code: 'ServiceUnavailable', message: 'Service is unable to handle request.' });
    const down = await chat(slug);
    expect(down.status).toBe(502);
    expect(down.body.error).toMatchObject({ code: 'provider_authentication_failed' });
    expect(down.body.error?.message).toContain('(503 ServiceUnavailable): Service is unable to handle request.');
    expect(bedrock.requests).toHaveLength(0);

    sts.fail(undefined);
    expect((await chat(slug)).status).toBe(200);
    // The refused call, then the one that issued credentials.
    expect(sts.calls.map((c) => Boolean(c.issued))).toEqual([false, true]);
    expect(signedWith(bedrock.requests[0]?.headers ?? {})).toBe(sts.calls[1]?.issued?.accessKeyId as string);
  });
});

describe('the signer: role sessions over time', () => {
  const target = (extra: Record<string, string> = {}): TargetConfig =>
    ({ provider: 'bedrock', svcA_access_key_id: BASE.id, svcA_secret_access_key: BASE.secret, svcA_region: REGION, svcA_role_arn: role('signer'), ...extra }) as TargetConfig;
  const call = (): ProviderCall => ({
    method: 'POST',
    url: `https://bedrock-runtime.${REGION}.amazonaws.com/model/x/converse`,
    headers: { 'content-type': 'application/json' },
    body: '{"messages":[]}',
  });
  const verify = (signed: ProviderCall) =>
    verifyRequest(
      { method: signed.method, url: signed.url, headers: new Headers(signed.headers), body: new TextEncoder().encode(signed.body as string) },
      { credentials: issued, region: REGION, service: 'bedrock' },
    );

  test('kept until 5 minutes before they expire, then renewed (the clock moves, the session stays an hour long)', async () => {
    let offset = 0;
    const sign = createSigner({ stsEndpoint: sts.url, now: () => Date.now() + offset });
    const first = await sign(call(), target());
    expect(verify(first)).toBeUndefined();
    expect(sts.calls).toHaveLength(1);

    offset = 54 * 60_000; // 6 minutes left: still used
    const later = await sign(call(), target());
    expect(signedWith(later.headers)).toBe(signedWith(first.headers));
    expect(sts.calls).toHaveLength(1);

    offset = 56 * 60_000; // 4 minutes left: renewed
    const renewed = await sign(call(), target());
    expect(sts.calls).toHaveLength(2);
    expect(signedWith(renewed.headers)).toBe(sts.calls[1]?.issued?.accessKeyId as string);
    expect(signedWith(renewed.headers)).not.toBe(signedWith(first.headers));
    expect(verify(renewed)).toBeUndefined();
  });

  test('concurrent calls on a cold session share one AssumeRole', async () => {
    let sent = 0;
    const sign = createSigner({ stsEndpoint: sts.url, send: (url, init) => (sent++, fetch(url, init)) });
    const signed = await Promise.all([1, 2, 3, 4].map(() => sign(call(), target({ svcA_role_arn: role('concurrent') }))));
    expect(sent).toBe(1);
    expect(sts.calls).toHaveLength(1);
    expect(signed.map((c) => signedWith(c.headers))).toEqual(Array(4).fill(sts.calls[0]?.issued?.accessKeyId));
    for (const c of signed) expect(verify(c)).toBeUndefined();
  });

  test('keys that share only the access key id never share a session', async () => {
    const sign = createSigner({ stsEndpoint: sts.url });
    expect(verify(await sign(call(), target()))).toBeUndefined();
    // Same access key id and role, another secret: STS is asked (and refuses), the kept session is not handed out.
    await expect(sign(call(), target({ svcA_secret_access_key: 'guessed' }))).rejects.toMatchObject({ status: 401, code: 'provider_authentication_failed' });
    expect(sts.calls).toHaveLength(1);
  });

  test('a region that is not a region name is refused before STS is called', async () => {
    const sign = createSigner({ stsEndpoint: sts.url });
    await expect(sign(call(), target({ svcA_region: 'evil.example.com/x' }))).rejects.toMatchObject({ status: 400, param: 'svcA_region' });
    expect(sts.calls).toHaveLength(0);
  });
});
