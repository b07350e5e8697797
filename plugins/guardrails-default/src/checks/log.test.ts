import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { JsonObject } from '@gateway/sdk';
import { input, output } from '../testing.ts';
import { createLog } from './log.ts';

let server: ReturnType<typeof Bun.serve>;
let base: string;
const received: { headers: Headers; body: JsonObject }[] = [];
const log = createLog({ fetch: (i, init) => fetch(i, init) });

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === '/slow') {
        await Bun.sleep(400);
        return new Response('late');
      }
      received.push({ headers: req.headers, body: (await req.json()) as JsonObject });
      if (path === '/down') return new Response('unavailable', { status: 503 });
      return new Response('x'.repeat(200_000)); // a chatty collector: its body is never read
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(() => server.stop(true));

describe('default.log', () => {
  test('posts the context and passes', async () => {
    const r = await log.run(output('the answer'), { logURL: `${base}/collect`, headers: '{"x-token": "t"}' });
    expect(r).toEqual({ verdict: true, data: { logged: true, status: 200, explanation: `Log collector 127.0.0.1:${server.port} answered 200.` } });
    const sent = received.at(-1)!;
    expect(sent.headers.get('x-token')).toBe('t');
    expect(sent.body).toMatchObject({ eventType: 'afterRequestHook', response: { text: 'the answer' }, request: { text: 'hello' } });
  });

  test('a failing collector still passes, saying so', async () => {
    expect((await log.run(input('q'), { logURL: `${base}/down` })).data).toMatchObject({ logged: false, status: 503 });
    const slow = await log.run(input('q'), { logURL: `${base}/slow`, timeout: 100 });
    expect(slow.verdict).toBe(true);
    expect(slow.data).toMatchObject({ logged: false, error: { kind: 'timeout', message: `log collector 127.0.0.1:${server.port} timed out after 100 ms` } });
    expect((await log.run(input('q'), { logURL: 'http://127.0.0.1:1/' })).verdict).toBe(true);
  });

  test('bad parameters', () => {
    expect(log.validate({})).toEqual(['logURL: is required']);
    expect(log.validate({ logURL: 'javascript:alert(1)' })).toEqual(['logURL: must be an http or https URL']);
    expect(log.validate({ logURL: `${base}/collect`, headers: 'nope' })[0]).toStartWith('headers:');
  });
});
