import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { JsonObject } from '@gateway/sdk';
import type { HttpDeps } from '../http.ts';
import { input, output } from '../testing.ts';
import { createWebhook } from './webhook.ts';

let server: ReturnType<typeof Bun.serve>;
let base: string;
const received: { path: string; headers: Headers; body: JsonObject }[] = [];
const deps: HttpDeps = { fetch: (i, init) => fetch(i, init) };
const webhook = createWebhook(deps);

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const body = (await req.json()) as JsonObject;
      received.push({ path, headers: req.headers, body });
      switch (path) {
        case '/pass':
          return Response.json({ verdict: true, data: { score: 0.1 } });
        case '/fail':
          return Response.json({ verdict: false, data: { reason: 'toxic' } });
        case '/transform': {
          const side = body.eventType === 'beforeRequestHook' ? 'request' : 'response';
          const json = { ...((body[side] as JsonObject).json as JsonObject), transformed_by: 'webhook' };
          return Response.json({ verdict: true, transformedData: { [side]: { json } } });
        }
        case '/slow':
          await Bun.sleep(5_000);
          return Response.json({ verdict: true });
        case '/error':
          return new Response('internal trouble', { status: 500 });
        case '/redirect':
          return new Response(null, { status: 302, headers: { location: '/pass' } });
        case '/no-verdict':
          return Response.json({ ok: true });
        case '/not-json':
          return new Response('<html>', { headers: { 'content-type': 'text/html' } });
        default:
          return new Response('not found', { status: 404 });
      }
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(() => server.stop(true));

describe('default.webhook', () => {
  test('verdict true, with the context posted and headers added', async () => {
    const ctx = input('hello there', { metadata: { team: 'a' }, headers: new Headers({ authorization: 'Bearer gateway-secret' }) });
    const r = await webhook.run(ctx, { webhookURL: `${base}/pass`, headers: { 'x-api-key': 'k' } });
    expect(r.verdict).toBe(true);
    expect(r.data).toMatchObject({ status: 200, webhookData: { score: 0.1 }, transformed: false });
    const sent = received.at(-1)!;
    expect(sent.headers.get('x-api-key')).toBe('k');
    expect(sent.body).toMatchObject({
      eventType: 'beforeRequestHook',
      requestType: 'chatComplete',
      request: { text: 'hello there', isStreamingRequest: false, path: '/chat/completions' },
      response: { json: null },
      metadata: { team: 'a' },
    });
    expect((sent.body.request as JsonObject).json).toEqual(ctx.request.body as JsonObject);
    expect(JSON.stringify(sent.body)).not.toContain('gateway-secret');
  });

  test('verdict false', async () => {
    const r = await webhook.run(output('answer'), { webhookURL: `${base}/fail` });
    expect(r.verdict).toBe(false);
    expect(r.data).toMatchObject({ webhookData: { reason: 'toxic' } });
    expect(received.at(-1)!.body).toMatchObject({ eventType: 'afterRequestHook', response: { text: 'answer' } });
  });

  test('transformed data becomes the transformed body, per phase', async () => {
    const ri = await webhook.run(input('q'), { webhookURL: `${base}/transform` });
    expect(ri.transformed).toMatchObject({ model: 'gpt-4o', transformed_by: 'webhook' });
    const ro = await webhook.run(output('a'), { webhookURL: `${base}/transform` });
    expect(ro.transformed).toMatchObject({ object: 'chat.completion', transformed_by: 'webhook' });
  });

  const failure = async (parameters: Record<string, unknown>) => {
    const r = await webhook.run(input('q'), parameters as never);
    expect(r.verdict).toBe(false);
    return (r.data as { error: { kind: string; message: string; status?: number } }).error;
  };

  test('a timeout is a failed verdict with the error', async () => {
    const started = performance.now();
    const error = await failure({ webhookURL: `${base}/slow`, timeout: 100 });
    expect(error).toEqual({ kind: 'timeout', message: `webhook 127.0.0.1:${server.port} timed out after 100 ms` });
    expect(performance.now() - started).toBeLessThan(2_500); // not the 5 s the webhook takes
  });

  test('non-2xx, redirects, bad answers, unreachable hosts are failed verdicts with the error', async () => {
    // The status only: the body of an error answer is not echoed to the caller.
    expect(await failure({ webhookURL: `${base}/error` })).toEqual({ kind: 'http_status', status: 500, message: `webhook 127.0.0.1:${server.port} answered 500` });
    expect(await failure({ webhookURL: `${base}/redirect` })).toMatchObject({ kind: 'http_status', status: 302 });
    expect(await failure({ webhookURL: `${base}/no-verdict` })).toMatchObject({ kind: 'unreadable', message: expect.stringContaining('without a boolean "verdict"') });
    expect(await failure({ webhookURL: `${base}/not-json` })).toMatchObject({ kind: 'unreadable', message: expect.stringContaining('other than JSON') });
    expect(await failure({ webhookURL: 'http://127.0.0.1:1/x' })).toMatchObject({ kind: 'network' });
    // Messages name the host, never the path or query (they may carry tokens).
    expect((await failure({ webhookURL: `${base}/error?token=s3cret` })).message).not.toContain('s3cret');
  });

  test('the host guard is asked first', async () => {
    const seen: string[] = [];
    const guarded = createWebhook({ ...deps, guardUrl: (url) => { seen.push(url); throw new Error('resolves to a private address'); } });
    const r = await guarded.run(input('q'), { webhookURL: `${base}/pass` });
    expect(r.verdict).toBe(false);
    expect(r.data).toMatchObject({ error: { kind: 'forbidden', message: expect.stringContaining('private address') } });
    expect(seen).toEqual([`${base}/pass`]);
  });

  test('bad parameters', () => {
    expect(webhook.validate({})).toEqual(['webhookURL: is required']);
    expect(webhook.validate({ webhookURL: 'ftp://example.com/hook' })).toEqual(['webhookURL: must be an http or https URL']);
    expect(webhook.validate({ webhookURL: 'not a url' })).toEqual(['webhookURL: must be an http or https URL']);
    expect(webhook.validate({ webhookURL: 'https://user:pw@example.com/hook' })).toEqual(['webhookURL: must not contain credentials (send them in headers)']);
    expect(webhook.validate({ webhookURL: `${base}/pass`, timeout: 0 })).toEqual(['timeout: must be >= 1']);
    expect(webhook.validate({ webhookURL: `${base}/pass`, headers: '{"a": 1}' })).toEqual(['headers: headers must be a JSON object of strings']);
    expect(webhook.validate({ webhookURL: `${base}/pass`, headers: '{"x-a": "1"}' })).toEqual([]);
    expect(webhook.validate({ webhookURL: `${base}/pass`, headers: { 'bad header': 'x' } })).toEqual(['headers.bad header: is not a valid header']);
  });
});
