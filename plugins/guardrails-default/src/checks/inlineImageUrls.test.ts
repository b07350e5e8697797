import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { JsonObject } from '@gateway/sdk';
import type { HttpDeps } from '../http.ts';
import { input, output } from '../testing.ts';
import { createInlineImageUrls, shownUrl, sniffImage } from './inlineImageUrls.ts';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const PNG_DATA_URL = `data:image/png;base64,${PNG.toString('base64')}`;

let server: ReturnType<typeof Bun.serve>;
let base: string;
const hits: Record<string, number> = {};
const deps: HttpDeps = { fetch: (i, init) => fetch(i, init) };
const inline = createInlineImageUrls(deps);

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname;
      hits[path] = (hits[path] ?? 0) + 1;
      switch (path) {
        case '/cat.png':
          return new Response(PNG, { headers: { 'content-type': 'image/png' } });
        case '/octet':
          return new Response(PNG, { headers: { 'content-type': 'application/octet-stream' } });
        case '/big.png':
          return new Response(new Uint8Array(5000), { headers: { 'content-type': 'image/png' } });
        case '/big-stream.png': {
          // No content-length: the size is only known while reading.
          const stream = new ReadableStream({
            async pull(controller) {
              controller.enqueue(new Uint8Array(800));
              if ((hits.chunks = (hits.chunks ?? 0) + 1) % 5 === 0) controller.close();
            },
          });
          return new Response(stream, { headers: { 'content-type': 'image/png' } });
        }
        case '/slow.png':
          await Bun.sleep(500);
          return new Response(PNG, { headers: { 'content-type': 'image/png' } });
        case '/page':
          return new Response('<html></html>', { headers: { 'content-type': 'text/html' } });
        case '/redirect':
          return new Response(null, { status: 302, headers: { location: '/cat.png' } });
        default:
          return new Response('not found', { status: 404 });
      }
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(() => server.stop(true));

const image = (url: string, extra: JsonObject = {}): JsonObject => ({ type: 'image_url', image_url: { url, ...extra } });
const ask = (...parts: JsonObject[]): JsonObject => ({
  model: 'gpt-4o',
  messages: [
    { role: 'system', content: 'describe images' },
    { role: 'user', content: [{ type: 'text', text: 'what is this?' }, ...parts] },
  ],
});
const partsOf = (body: JsonObject | undefined, message = 1) => ((body?.messages as JsonObject[])[message]?.content as JsonObject[]).slice(1);

describe('default.inlineImageUrls', () => {
  test('inlines external images as data URLs, fetching each URL once', async () => {
    const before = hits['/cat.png'] ?? 0;
    const body = ask(image(`${base}/cat.png`, { detail: 'low' }), { type: 'image_url', image_url: `${base}/cat.png` }, image('data:image/png;base64,AAAA'), image(`${base}/octet`));
    const ctx = input(body);
    const r = await inline.run(ctx, {});
    expect(r.verdict).toBe(true);
    expect(r.data).toMatchObject({ inlined: 2, failed: [] });
    expect(partsOf(r.transformed)).toEqual([
      image(PNG_DATA_URL, { detail: 'low' }),
      { type: 'image_url', image_url: { url: PNG_DATA_URL } },
      image('data:image/png;base64,AAAA'),
      image(PNG_DATA_URL), // sniffed from its bytes
    ]);
    expect((hits['/cat.png'] ?? 0) - before).toBe(1);
    expect(partsOf(ctx.request.body)[0]).toEqual(image(`${base}/cat.png`, { detail: 'low' })); // input untouched
    expect((r.transformed?.messages as JsonObject[])[0]).toBe((body.messages as JsonObject[])[0] as JsonObject);
  });

  test('follows redirects, re-checking each hop with the host guard', async () => {
    expect(partsOf((await inline.run(input(ask(image(`${base}/redirect`))), {})).transformed)).toEqual([image(PNG_DATA_URL)]);
    const seen: string[] = [];
    const guarded = createInlineImageUrls({
      ...deps,
      guardUrl: (url) => {
        seen.push(new URL(url).pathname);
        if (url.endsWith('/cat.png')) throw new Error('private address');
      },
    });
    const r = await guarded.run(input(ask(image(`${base}/redirect`))), {});
    expect(seen).toEqual(['/redirect', '/cat.png']);
    expect(r.transformed).toBeUndefined();
    expect((r.data as { failed: { error: { kind: string; message: string } }[] }).failed[0]?.error).toMatchObject({
      kind: 'forbidden',
      message: expect.stringContaining('private address'),
    });
  });

  test('too large (declared or while reading): left as is, or a failed verdict with failOnError', async () => {
    for (const path of ['/big.png', '/big-stream.png']) {
      const ctx = input(ask(image(`${base}${path}`), image(`${base}/cat.png`)));
      const lenient = await inline.run(ctx, { maxSizeBytes: 1000 });
      expect(lenient.verdict).toBe(true);
      expect(partsOf(lenient.transformed)).toEqual([image(`${base}${path}`), image(PNG_DATA_URL)]);
      expect((lenient.data as { failed: { error: { kind: string; message: string } }[] }).failed[0]?.error).toMatchObject({
        kind: 'unreadable',
        message: expect.stringContaining('1000'),
      });
      const strict = await inline.run(ctx, { maxSizeBytes: 1000, failOnError: true });
      expect(strict.verdict).toBe(false);
      expect(partsOf(strict.transformed)).toEqual([image(`${base}${path}`), image(PNG_DATA_URL)]);
    }
  });

  test('failures (404, timeout, not an image, unreachable) with and without failOnError', async () => {
    const ctx = input(ask(image(`${base}/missing.png`), image(`${base}/slow.png`), image(`${base}/page`), image('http://127.0.0.1:1/x.png')));
    const lenient = await inline.run(ctx, { timeoutMs: 150 });
    expect(lenient.verdict).toBe(true);
    expect(lenient.transformed).toBeUndefined();
    const failed = (lenient.data as { failed: { url: string; error: { kind: string; message: string; status?: number } }[] }).failed;
    const byPath = Object.fromEntries(failed.map((f) => [new URL(f.url).pathname, f.error]));
    expect(failed).toHaveLength(4);
    expect(byPath['/missing.png']).toMatchObject({ kind: 'http_status', status: 404 });
    expect(byPath['/slow.png']).toMatchObject({ kind: 'timeout', message: expect.stringContaining('timed out after 150 ms') });
    expect(byPath['/page']).toMatchObject({ kind: 'unreadable', message: expect.stringContaining('is not an image') });
    expect(byPath['/x.png']).toMatchObject({ kind: 'network' });
    expect((await inline.run(ctx, { timeoutMs: 150, failOnError: true })).verdict).toBe(false);
  });

  test('providers: only requests that can go to a listed provider', async () => {
    const body = ask(image(`${base}/cat.png`));
    const toOpenAI = await inline.run(input(body, { config: { provider: 'openai' } }), { providers: ['bedrock'] });
    expect(toOpenAI).toMatchObject({ verdict: true, data: { skipped: true } });
    expect(toOpenAI.transformed).toBeUndefined();
    const fallback = { strategy: { mode: 'fallback' as const }, targets: [{ provider: 'openai' }, { provider: 'bedrock' }] };
    expect((await inline.run(input(body, { config: fallback }), { providers: ['bedrock'] })).transformed).toBeDefined();
    const header = input(body, { headers: new Headers({ 'x-gateway-provider': 'vertex-ai' }) });
    expect((await inline.run(header, { providers: ['vertex-ai'] })).transformed).toBeDefined();
  });

  test('nothing to do: outputs, other messages, non-chat bodies', async () => {
    expect(await inline.run(output('hi'), {})).toMatchObject({ verdict: true, data: { inlined: 0 } });
    const assistantImage = { messages: [{ role: 'assistant', content: [image(`${base}/cat.png`)] }] };
    expect((await inline.run(input(assistantImage), {})).transformed).toBeUndefined();
    expect((await inline.run(input({ input: 'x' }), {})).verdict).toBe(true);
  });

  test('reported URLs drop their query', () => {
    expect(shownUrl('https://bucket.example/a.png?X-Amz-Signature=abc')).toBe('https://bucket.example/a.png?…');
  });

  test('sniffing', () => {
    expect(sniffImage(PNG)).toBe('image/png');
    expect(sniffImage(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(sniffImage(new TextEncoder().encode('GIF89a'))).toBe('image/gif');
    expect(sniffImage(new TextEncoder().encode('RIFF\0\0\0\0WEBPVP8 '))).toBe('image/webp');
    expect(sniffImage(new TextEncoder().encode('<html>'))).toBeUndefined();
  });

  test('bad parameters', () => {
    expect(inline.validate({})).toEqual([]);
    expect(inline.validate({ maxSizeBytes: 0 })).toEqual(['maxSizeBytes: must be >= 1']);
    expect(inline.validate({ timeoutMs: 'fast' })).toEqual(['timeoutMs: must be an integer']);
    expect(inline.validate({ providers: [] })).toEqual(['providers: must not be empty']);
    expect(inline.validate({ failOnError: 'no' })).toEqual(['failOnError: must be true or false']);
  });
});
