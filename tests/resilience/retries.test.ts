// Fault injection, part 1: provider errors before any answer (rate limits, 5xx, reset connections, silence) against
// the real gateway process, with the official OpenAI SDK as the client (`maxRetries: 0`: every retry here is the
// gateway's), each case streamed and not. Retries, Retry-After, retry exhaustion, fallback, request_timeout, and
// the 400s that must never be retried.

import { beforeEach, describe, expect, test } from 'bun:test';
import { APIError } from 'openai';
import { type Answer, ask, client, leaf, MODES, useResilienceStack } from './support.ts';

const T = 15_000;
const stack = useResilienceStack();

beforeEach(() => {
  for (const m of stack().mocks) m.reset();
});

const A = () => stack().mocks[0];
const B = () => stack().mocks[1];
const gw = () => stack().gw;

/** A relayed provider error: the status, the provider's own message, `provider` beside `error` (INTERFACE.md). */
function expectRelayed(c: ReturnType<typeof client>, a: Answer, status: number, message: string): void {
  expect(a.status).toBe(status);
  expect(a.error).toBeInstanceOf(APIError);
  expect((a.error as APIError).message).toContain(message);
  const raw = c.last();
  expect(raw.status).toBe(status);
  expect(raw.body).toMatchObject({ error: { message }, provider: 'openai' });
  const e = (raw.body as { error: Record<string, unknown> }).error;
  expect(Object.keys(e).sort()).toEqual(['code', 'message', 'param', 'type']);
}

const expectAnswered = (a: Answer, text: string) => {
  expect(a.error).toBeUndefined();
  expect(a.status).toBe(200);
  expect(a.text).toBe(`You said: ${text}`);
};

describe.each(MODES)('429 and Retry-After (%s)', (_name, stream) => {
  test('Retry-After in seconds is honoured with use_retry_after_headers: one retry after ≥ 1 s, then 200', async () => {
    A().enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '1' } });
    const c = client(gw(), leaf(A(), { retry: { attempts: 2, use_retry_after_headers: true } }));
    const a = await ask(c, stream, 'after the pause');
    expectAnswered(a, 'after the pause');
    expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    expect(A().requests).toHaveLength(2);
    const pause = A().requests[1]!.receivedAt - A().requests[0]!.receivedAt;
    expect(pause).toBeGreaterThanOrEqual(990);
    expect(a.ms).toBeGreaterThanOrEqual(990);
    expect(pause).toBeLessThan(2_500);
  }, T);

  test('Retry-After-ms is honoured (and preferred to Retry-After)', async () => {
    A().enqueue({ kind: 'error', status: 429, headers: { 'retry-after-ms': '700', 'retry-after': '0' } });
    const c = client(gw(), leaf(A(), { retry: { attempts: 1, use_retry_after_headers: true } }));
    const a = await ask(c, stream, 'millis');
    expectAnswered(a, 'millis');
    expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    expect(A().requests).toHaveLength(2);
    expect(A().requests[1]!.receivedAt - A().requests[0]!.receivedAt).toBeGreaterThanOrEqual(690);
    expect(a.ms).toBeGreaterThanOrEqual(690);
  }, T);

  test('without use_retry_after_headers the provider pause is not waited for (backoff only)', async () => {
    A().enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '3' } });
    const c = client(gw(), leaf(A(), { retry: { attempts: 1 } }));
    const a = await ask(c, stream, 'no pause');
    expectAnswered(a, 'no pause');
    expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    expect(A().requests[1]!.receivedAt - A().requests[0]!.receivedAt).toBeLessThan(1_000);
  }, T);

  test('a Retry-After beyond the gateway cap is not slept on: the 429 goes back at once, not retried', async () => {
    A().setBehavior({ kind: 'error', status: 429, message: 'Come back in two minutes.', headers: { 'retry-after': '120' } });
    const c = client(gw(), leaf(A(), { retry: { attempts: 2, use_retry_after_headers: true } }));
    const a = await ask(c, stream, 'too long');
    expectRelayed(c, a, 429, 'Come back in two minutes.');
    expect(A().requests).toHaveLength(1);
    expect(a.ms).toBeLessThan(2_000);
  }, T);

  test('persistent 429: after `attempts` retries the provider 429 is relayed, retry count -1, 1 + attempts calls', async () => {
    const message = 'Rate limit reached for gpt-4o-mini in organization org-test on requests per min (RPM): Limit 3.';
    A().setBehavior({ kind: 'error', status: 429, message });
    const c = client(gw(), leaf(A(), { retry: { attempts: 2 } }));
    const a = await ask(c, stream, 'again and again');
    expectRelayed(c, a, 429, message);
    expect((a.error as APIError).code).toBe('rate_limit_exceeded');
    expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('-1');
    expect(a.headers.get('x-gateway-provider')).toBe('openai');
    expect(A().requests).toHaveLength(3);
  }, T);
});

test('Retry-After as an HTTP date is honoured too', async () => {
  // HTTP dates have whole seconds: "2 s from now" is between 1 and 2 s away.
  A().enqueue({ kind: 'error', status: 429, headers: { 'retry-after': new Date(Date.now() + 2_000).toUTCString() } });
  const c = client(gw(), leaf(A(), { retry: { attempts: 1, use_retry_after_headers: true } }));
  const a = await ask(c, false, 'dated');
  expectAnswered(a, 'dated');
  expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('1');
  const pause = A().requests[1]!.receivedAt - A().requests[0]!.receivedAt;
  expect(pause).toBeGreaterThanOrEqual(900);
  expect(pause).toBeLessThan(2_500);
}, T);

describe.each(MODES)('5xx (%s)', (_name, stream) => {
  test('500 once, then OK: retried, count 1', async () => {
    A().enqueue({ kind: 'error', status: 500 });
    const c = client(gw(), leaf(A(), { retry: { attempts: 2 } }));
    const a = await ask(c, stream, 'second time lucky');
    expectAnswered(a, 'second time lucky');
    expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    expect(a.headers.get('x-gateway-last-used-option-index')).toBe('config');
    expect(A().requests).toHaveLength(2);
  }, T);

  test('persistent 503: retries exhausted, the 503 relayed with the provider message, count -1', async () => {
    A().setBehavior({ kind: 'error', status: 503, message: 'Resilience test: overloaded.' });
    const c = client(gw(), leaf(A(), { retry: { attempts: 2 } }));
    const a = await ask(c, stream, 'overloaded');
    expectRelayed(c, a, 503, 'Resilience test: overloaded.');
    expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('-1');
    expect(A().requests).toHaveLength(3);
  }, T);

  test('persistent 503 with a fallback target: the fallback answers, index config.targets[1]', async () => {
    A().setBehavior({ kind: 'error', status: 503 });
    const config = { strategy: { mode: 'fallback' }, targets: [leaf(A(), { retry: { attempts: 1 } }), leaf(B())] };
    const c = client(gw(), config);
    const a = await ask(c, stream, 'plan b');
    expectAnswered(a, 'plan b');
    expect(a.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('0');
    expect(A().requests).toHaveLength(2);
    expect(B().requests).toHaveLength(1);
  }, T);
});

describe.each(MODES)('connection reset before headers (%s)', (_name, stream) => {
  test('retried on the default codes and answered by the second call', async () => {
    A().enqueue({ kind: 'reset' });
    const c = client(gw(), leaf(A(), { retry: { attempts: 1 } }));
    const a = await ask(c, stream, 'reconnect');
    expectAnswered(a, 'reconnect');
    expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    expect(A().requests).toHaveLength(2);
  }, T);

  test('without retries: 502 upstream_unreachable in the error shape, provider named', async () => {
    A().enqueue({ kind: 'reset' });
    const c = client(gw(), leaf(A()));
    const a = await ask(c, stream, 'gone');
    expect(a.status).toBe(502);
    expect(c.last().body).toMatchObject({ error: { code: 'upstream_unreachable' }, provider: 'openai' });
    expect(A().requests).toHaveLength(1);
  }, T);
});

describe.each(MODES)('no response at all (%s)', (_name, stream) => {
  test('request_timeout 500 → 408 request_timeout within 0.5–1.5 s, and the provider call is abandoned', async () => {
    A().setBehavior({ kind: 'hang' });
    const c = client(gw(), leaf(A(), { request_timeout: 500 }));
    const a = await ask(c, stream, 'anyone there?');
    expect(a.status).toBe(408);
    expect(a.ms).toBeGreaterThanOrEqual(480);
    expect(a.ms).toBeLessThan(1_500);
    expect((a.error as APIError).code).toBe('request_timeout');
    const body = c.last().body as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ code: 'request_timeout' });
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(A().requests).toHaveLength(1);
    // The gateway hung up on the silent provider rather than leaving the connection open.
    await Bun.sleep(50);
    expect(A().requests[0]!.abortedAt).toBeDefined();
  }, T);

  test('with a fallback target the fallback answers after the timeout', async () => {
    A().setBehavior({ kind: 'hang' });
    const config = { strategy: { mode: 'fallback' }, targets: [leaf(A(), { request_timeout: 500 }), leaf(B())] };
    const c = client(gw(), config);
    const a = await ask(c, stream, 'someone else then');
    expectAnswered(a, 'someone else then');
    expect(a.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    expect(a.ms).toBeGreaterThanOrEqual(480);
    expect(a.ms).toBeLessThan(2_000);
    expect(A().requests).toHaveLength(1);
    expect(B().requests).toHaveLength(1);
  }, T);
});

describe.each(MODES)('400s that no retry can fix (%s)', (_name, stream) => {
  const retry = { attempts: 3, on_status_codes: [400, 429, 500, 502, 503, 504] };

  test.each([
    ['context_length_exceeded', "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages."],
    ['content_policy_violation', 'Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.'],
  ])('%s is not retried even with 400 in on_status_codes, and is relayed as 400 with its message', async (code, message) => {
    A().setBehavior({ kind: 'error', status: 400, code, message, type: 'invalid_request_error', param: 'messages' });
    const c = client(gw(), leaf(A(), { retry }));
    const a = await ask(c, stream, 'too much');
    expectRelayed(c, a, 400, message);
    expect((a.error as APIError).code).toBe(code);
    expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('0');
    await Bun.sleep(150); // a retry, had there been one, would have reached the mock by now
    expect(A().requests).toHaveLength(1);
  }, T);

  test('control: an ordinary 400 with 400 in on_status_codes is retried (1 + 3 calls)', async () => {
    A().setBehavior({ kind: 'error', status: 400, message: 'Bad request, but maybe transient.' });
    const c = client(gw(), leaf(A(), { retry }));
    const a = await ask(c, stream, 'retry me');
    expectRelayed(c, a, 400, 'Bad request, but maybe transient.');
    expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('-1');
    expect(A().requests).toHaveLength(4);
  }, T);
});

test('a client that leaves during a Retry-After pause: the retry is never sent', async () => {
  A().enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '1' } });
  const ctrl = new AbortController();
  const pending = fetch(`${gw().url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': gw().adminKey,
      'x-gateway-config': JSON.stringify(leaf(A(), { retry: { attempts: 2, use_retry_after_headers: true } })),
    },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'bye' }] }),
    signal: ctrl.signal,
  }).catch((e: unknown) => e);
  await A().waitForRequests(1, 3_000);
  await Bun.sleep(200);
  ctrl.abort();
  expect(await pending).toBeInstanceOf(Error);
  await Bun.sleep(1_200); // past the pause
  expect(A().requests).toHaveLength(1);
}, T);

describe('a non-streamed answer that breaks inside its body', () => {
  test('body cut after a few bytes: retried (default codes), the second call answers', async () => {
    A().enqueue({ kind: 'respond', status: 200, body: { id: 'chatcmpl-cut', object: 'chat.completion', choices: [] }, cutAfterBytes: 12 });
    const c = client(gw(), leaf(A(), { retry: { attempts: 1 } }));
    const a = await ask(c, false, 'whole body please');
    expectAnswered(a, 'whole body please');
    expect(a.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    expect(A().requests).toHaveLength(2);
  }, T);

  test('body cut, no retry: 502 in the error shape, the half body not relayed as a 200', async () => {
    A().enqueue({ kind: 'respond', status: 200, body: { id: 'chatcmpl-cut', object: 'chat.completion', choices: [] }, cutAfterBytes: 12 });
    const c = client(gw(), leaf(A()));
    const a = await ask(c, false, 'x');
    expect(a.status).toBe(502);
    expect(c.last().body).toMatchObject({ error: { code: 'upstream_unreachable' }, provider: 'openai' });
  }, T);

  test('headers, part of the body, then silence: request_timeout still applies (408)', async () => {
    A().enqueue({ kind: 'stream', frames: [{ raw: '{"id": "chatcmpl-slow", ' }], end: 'hang', headers: { 'content-type': 'application/json' } });
    const c = client(gw(), leaf(A(), { request_timeout: 500 }));
    const a = await ask(c, false, 'x');
    expect(a.status).toBe(408);
    expect(a.ms).toBeLessThan(1_500);
    expect((c.last().body as { error: { code: string } }).error.code).toBe('request_timeout');
  }, T);

  test('a 200 whose body is not JSON: 502 upstream_invalid_response, not relayed as a 200', async () => {
    A().enqueue({ kind: 'respond', status: 200, body: '<html>502 Bad Gateway</html>', headers: { 'content-type': 'text/html' } });
    const c = client(gw(), leaf(A()));
    const a = await ask(c, false, 'x');
    expect(a.status).toBe(502);
    expect(c.last().body).toMatchObject({ error: { code: 'upstream_invalid_response' }, provider: 'openai' });
  }, T);
});
