// The shared pieces of the external guardrail checks (@gateway/guardrail-kit): parameter compilation, the one HTTP
// call and its failure values, and the text a check judges.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { compileParameters, guardHostsWith, httpUrl, postJson, redact, textOf } from '@gateway/guardrail-kit';
import { Type } from '@sinclair/typebox';
import { chatAnswer, checkContext } from './support.ts';

let server: ReturnType<typeof Bun.serve>;
let base: string;
const SECRET = 'sk-live-0123456789abcdef';

beforeAll(() => {
  // The kit keeps the guard of the last gateway set up in this process: these calls go to loopback without one.
  guardHostsWith({ optional: () => undefined });
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 30,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === '/ok') return Response.json({ echo: await req.json(), auth: req.headers.get('authorization') });
      if (path === '/slow') {
        await Bun.sleep(2_000);
        return Response.json({ late: true });
      }
      if (path === '/slow-body') {
        // Headers at once, the body never finishes in time.
        const stream = new ReadableStream({
          async start(controller) {
            controller.enqueue(new TextEncoder().encode('{"partial":'));
            await Bun.sleep(2_000);
            controller.close();
          },
        });
        return new Response(stream, { headers: { 'content-type': 'application/json' } });
      }
      if (path === '/500') return Response.json({ error: { message: `upstream exploded while using ${SECRET}` } }, { status: 500 });
      if (path === '/503-text') return new Response('Service Unavailable', { status: 503 });
      if (path === '/html') return new Response('<html>hello</html>', { headers: { 'content-type': 'text/html' } });
      if (path === '/huge') return new Response(`"${'x'.repeat(2 * 1024 * 1024)}"`);
      if (path === '/redirect') return new Response(null, { status: 302, headers: { location: 'http://127.0.0.1:9/elsewhere' } });
      return new Response('no', { status: 404 });
    },
  });
  base = server.url.origin;
});

afterAll(() => server?.stop(true));

const call = (path: string, extra: Partial<Parameters<typeof postJson>[0]> = {}) =>
  postJson({ service: 'test service', url: new URL(base + path), body: { a: 1 }, timeoutMs: 1_000, secrets: [SECRET], ...extra });

describe('postJson', () => {
  test('a 2xx JSON answer comes back parsed; headers are sent', async () => {
    const result = await call('/ok', { headers: { authorization: `Bearer ${SECRET}` } });
    expect(result).toEqual({ ok: true, status: 200, json: { echo: { a: 1 }, auth: `Bearer ${SECRET}` } });
  });

  test('no answer within timeoutMs is a timeout (AbortSignal.timeout), also while reading the body', async () => {
    const started = performance.now();
    expect(await call('/slow', { timeoutMs: 100 })).toEqual({
      ok: false,
      error: { kind: 'timeout', message: `test service at ${new URL(base).host} did not answer within 100 ms` },
    });
    expect((await call('/slow-body', { timeoutMs: 150 })) as unknown).toMatchObject({ ok: false, error: { kind: 'timeout' } });
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  test('a non-2xx answer is http_status with the status and the service message (never the raw body), secrets redacted', async () => {
    const result = await call('/500');
    expect(result).toEqual({
      ok: false,
      error: { kind: 'http_status', status: 500, message: `test service at ${new URL(base).host} answered 500: upstream exploded while using [redacted]` },
    });
    expect(JSON.stringify(result)).not.toContain(SECRET);
    expect(await call('/503-text')).toEqual({ ok: false, error: { kind: 'http_status', status: 503, message: `test service at ${new URL(base).host} answered 503` } });
  });

  test('a redirect is not followed: it is a non-2xx answer', async () => {
    expect(await call('/redirect')).toMatchObject({ ok: false, error: { kind: 'http_status', status: 302 } });
  });

  test('an answer that is not JSON, or larger than the cap, is unreadable', async () => {
    expect(await call('/html')).toMatchObject({ ok: false, error: { kind: 'unreadable', message: expect.stringContaining('not JSON') } });
    expect(await call('/huge')).toMatchObject({ ok: false, error: { kind: 'unreadable', message: expect.stringContaining('larger than 1048576 bytes') } });
  });

  test('a refused connection is a network error', async () => {
    // Port 9 (discard) on loopback: nothing listens there.
    const result = await postJson({ service: 'test service', url: new URL('http://127.0.0.1:9/x'), body: {}, timeoutMs: 2_000 });
    expect(result).toMatchObject({ ok: false, error: { kind: 'network', message: expect.stringContaining('test service at 127.0.0.1:9 unreachable') } });
  });

  test('the client going away aborts the call (aborted, not timeout)', async () => {
    const client = new AbortController();
    setTimeout(() => client.abort(), 50);
    expect(await call('/slow', { timeoutMs: 5_000, signal: client.signal })).toMatchObject({ ok: false, error: { kind: 'aborted' } });
  });

  test('redact replaces every occurrence of every secret', () => {
    expect(redact('a KEY b KEY c other', ['KEY', undefined, 'other'])).toBe('a [redacted] b [redacted] c [redacted]');
  });
});

describe('compileParameters', () => {
  const schema = Type.Object(
    { name: Type.String({ minLength: 1 }), timeout: Type.Integer({ minimum: 1, default: 10_000 }), url: Type.Optional(Type.String()) },
    { additionalProperties: false },
  );
  const params = compileParameters(schema, (p) => {
    if (p.url === undefined) return [];
    const url = httpUrl('url', p.url);
    return typeof url === 'string' ? [url] : [];
  });

  test('applies defaults on a copy and reports violations by parameter name, never by value', () => {
    const input = { name: 'x' };
    expect(params.parse(input)).toEqual({ ok: true, value: { name: 'x', timeout: 10_000 } });
    expect(input).toEqual({ name: 'x' }); // the config object is not changed
    expect(params.validate({ name: 'x' })).toEqual([]);
    const errors = params.validate({ timeout: 0, extra: 'sk-secret-value' });
    expect(errors.some((e) => e.startsWith('name:'))).toBe(true);
    expect(errors.some((e) => e.startsWith('timeout:'))).toBe(true);
    expect(errors.join(' ')).not.toContain('sk-secret-value');
    expect(params.validate('nope')).toEqual(['parameters: must be an object']);
    expect(params.validate(null)).toEqual(['parameters: must be an object']);
  });

  test('only http and https URLs, without credentials', () => {
    expect(params.validate({ name: 'x', url: 'https://guard.example/v1' })).toEqual([]);
    expect(params.validate({ name: 'x', url: 'http://127.0.0.1:8080' })).toEqual([]);
    expect(params.validate({ name: 'x', url: 'file:///etc/passwd' })).toEqual(['url: only http and https URLs are allowed']);
    expect(params.validate({ name: 'x', url: 'ftp://host/x' })).toEqual(['url: only http and https URLs are allowed']);
    expect(params.validate({ name: 'x', url: 'not a url' })).toEqual(['url: must be an absolute http or https URL']);
    expect(params.validate({ name: 'x', url: 'https://user:pw@host.example' })).toEqual(['url: must not carry credentials (use apiKey)']);
  });
});

describe('textOf', () => {
  test('input: every chat message text, text parts of multi-part content; prompt; input', () => {
    const ctx = checkContext({
      body: {
        model: 'm',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'Look at this' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
          { role: 'user', content: 'and this' },
        ],
      },
    });
    expect(textOf(ctx)).toBe('Be brief.\n\nLook at this\n\nand this');
    expect(textOf(checkContext({ body: { model: 'm', prompt: ['one', 'two'] } }))).toBe('one\n\ntwo');
    expect(textOf(checkContext({ body: { model: 'm', input: 'embed me' } }))).toBe('embed me');
    expect(textOf(checkContext({ body: { model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] } }))).toBe('');
  });

  test('output: the answer choices (chat message content or completion text)', () => {
    expect(textOf(checkContext({ phase: 'output', responseBody: chatAnswer('Hi!') }))).toBe('Hi!');
    expect(textOf(checkContext({ phase: 'output', responseBody: { choices: [{ text: 'a' }, { text: 'b' }] } }))).toBe('a\n\nb');
    expect(textOf(checkContext({ phase: 'output' }))).toBe('');
  });
});

describe('the gateway host guard', () => {
  test('a service URL the guard refuses is never called: refused before any connection', async () => {
    let hits = 0;
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => (hits++, Response.json({ ok: true })) });
    const { guardHostsWith: guard, postJson: post } = await import('@gateway/guardrail-kit');
    const { Errors } = await import('@gateway/sdk');
    guard({ optional: <T,>() => ({ check: () => undefined, fetch: () => Promise.reject(Errors.forbiddenHost('127.0.0.1')) }) as T });
    try {
      const result = await post({ service: 'policy', url: new URL(`http://127.0.0.1:${server.port}/x`), timeoutMs: 1000, body: {} });
      expect(result.ok).toBe(false);
      expect(!result.ok && result.error.kind).toBe('refused');
      expect(hits).toBe(0);
    } finally {
      guard({ optional: () => undefined });
      server.stop(true);
    }
  });
});
