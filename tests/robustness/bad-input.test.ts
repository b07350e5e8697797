// Bad input is answered in the INTERFACE.md error shape, never reaches the provider, and the process stays up.
// The real server runs with MAX_REQUEST_BODY_BYTES=131072 (128 KiB: small enough to test 413 cheaply, large enough
// for a 100 000-level `[` body to reach the JSON parser); the prototype-pollution checks run in-process, where
// `Object.prototype` can be inspected.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type Gateway, readSettings } from '@gateway/server';
import { providerHeaders, startInProcessGateway } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { asciiJson, CHAT_BODY, expectError, isErrorShape, type RobustGateway, startRobustGateway } from './support.ts';

const LIMIT = 131_072;
const PROVIDER_KEY = 'sk-bad-input-provider-key';

let mock: OpenAIMock;
let gw: RobustGateway;

beforeAll(async () => {
  mock = await startOpenAIMock({ apiKey: null, strictParams: false });
  gw = await startRobustGateway({ MAX_REQUEST_BODY_BYTES: String(LIMIT) });
}, 30_000); // a hang guard: a gateway process can take over bun's 5 s default to start on a loaded CI machine
afterAll(async () => {
  await gw?.stop();
  await mock?.stop();
});

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-gateway-api-key': gw.adminKey,
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': mock.url,
    authorization: `Bearer ${PROVIDER_KEY}`,
    ...extra,
  };
}

function post(path: string, body: string | Uint8Array | ReadableStream<Uint8Array> | null, extra: Record<string, string> = {}): Promise<Response> {
  return fetch(gw.url + path, { method: 'POST', headers: headers(extra), body });
}

const chat = (body: string | Uint8Array | ReadableStream<Uint8Array> | null, extra: Record<string, string> = {}) => post('/v1/chat/completions', body, extra);

/** Runs `fn` and asserts that the mock (the provider) received no request meanwhile. */
async function providerNotCalled(fn: () => Promise<void>): Promise<void> {
  const before = mock.requests.length;
  await fn();
  await Bun.sleep(10);
  expect(mock.requests.length).toBe(before);
}

describe('malformed bodies → 400 in the error shape, provider not called', () => {
  test('the happy path works (so that the refusals below mean something)', async () => {
    const res = await chat(JSON.stringify(CHAT_BODY));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { object: string }).object).toBe('chat.completion');
  });

  test('malformed JSON', async () => {
    await providerNotCalled(async () => {
      for (const text of ['{bad', '{"model": "gpt-4o-mini",', '{"a":1}x', "{'single': 1}", '\u0000', 'nul']) {
        await expectError(await chat(text), 400, 'malformed_json');
      }
    });
  });

  test('empty body, and no body at all', async () => {
    await providerNotCalled(async () => {
      await expectError(await chat(''), 400, 'malformed_json');
      await expectError(await chat(null), 400, 'malformed_json');
      await expectError(await chat('   \n  '), 400, 'malformed_json');
    });
  });

  test('a JSON array body, and other non-object JSON values', async () => {
    await providerNotCalled(async () => {
      for (const text of ['[]', JSON.stringify([CHAT_BODY]), '"x"', '42', 'null', 'true']) {
        const body = await expectError(await chat(text), 400);
        expect(body.error.message).toContain('JSON object');
      }
    });
  });

  test('bytes that are not UTF-8', async () => {
    await providerNotCalled(async () => {
      const res = await chat(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]));
      expect(res.status).toBe(400);
      expect(isErrorShape(await res.json())).toBe(true);
    });
  });

  test('100 000 levels of `[` (unterminated), on all four endpoints', async () => {
    await providerNotCalled(async () => {
      for (const path of ['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/v1/moderations']) {
        await expectError(await post(path, '['.repeat(100_000)), 400);
      }
    });
  });

  test('60 000 levels of well-formed nesting as the body → 400', async () => {
    await providerNotCalled(async () => {
      await expectError(await chat(`${'['.repeat(60_000)}${']'.repeat(60_000)}`), 400);
      await expectError(await chat(`${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`), 400);
    });
  });

  test('20 000 levels inside a field no schema looks into: no 5xx, also when the body is re-serialised', async () => {
    const deep = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
    const text = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"x":${deep}}`;
    const leaf = { provider: 'openai', api_key: PROVIDER_KEY, custom_host: mock.url };
    const variants: Record<string, string>[] = [
      {},
      // override_params / drop_params make the gateway build a new body and JSON.stringify it
      { 'x-gateway-config': JSON.stringify({ ...leaf, override_params: { temperature: 0.5 } }) },
      { 'x-gateway-config': JSON.stringify({ ...leaf, drop_params: ['x.a.a.a'] }) },
      {
        'x-gateway-config': JSON.stringify({
          strategy: { mode: 'conditional', conditions: [{ query: { 'params.x.a.a.a.a': { $exists: true } }, then: 'a' }], default: 'a' },
          targets: [{ ...leaf, name: 'a' }],
        }),
      },
    ];
    for (const extra of variants) {
      const res = await chat(text, extra);
      const body = await res.text();
      expect({ variant: extra['x-gateway-config'] ?? 'none', status: res.status < 500 ? 'ok' : `${res.status} ${body.slice(0, 200)}` }).toEqual({
        variant: extra['x-gateway-config'] ?? 'none',
        status: 'ok',
      });
      if (res.status >= 400) expect(isErrorShape(JSON.parse(body))).toBe(true);
    }
  });

  test('deep nesting that the parser accepts (500 levels) in an open field does not break the gateway', async () => {
    const deep = `${'['.repeat(500)}${']'.repeat(500)}`;
    const res = await chat(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"x":${deep}}`);
    expect(res.status).toBeLessThan(500);
    await res.arrayBuffer();
  });

  test('wrong types are named by parameter', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...CHAT_BODY, messages: 'x' }, 'messages'],
      [{ ...CHAT_BODY, temperature: 'hot' }, 'temperature'],
      [{ ...CHAT_BODY, messages: [] }, 'messages'],
      [{ ...CHAT_BODY, messages: [{ role: 'nobody', content: 'x' }] }, 'messages'],
      [{ ...CHAT_BODY, messages: [42] }, 'messages'],
      [{ ...CHAT_BODY, stream: 'yes' }, 'stream'],
      [{ ...CHAT_BODY, n: -1 }, 'n'],
      [{ ...CHAT_BODY, max_tokens: 'many' }, 'max_tokens'],
      [{ model: 'gpt-4o-mini' }, 'messages'],
    ];
    await providerNotCalled(async () => {
      for (const [body, param] of cases) {
        const err = await expectError(await chat(JSON.stringify(body)), 400, 'invalid_request');
        expect(err.error.param ?? '').toStartWith(param);
      }
      await expectError(await post('/v1/embeddings', JSON.stringify({ model: 'text-embedding-3-small', input: { x: 1 } })), 400);
      await expectError(await post('/v1/completions', JSON.stringify({ model: 'davinci-002', prompt: 'x', temperature: [] })), 400);
      await expectError(await post('/v1/moderations', JSON.stringify({ input: 7 })), 400);
    });
  });
});

describe('prototype keys (`__proto__`, `constructor`) over HTTP', () => {
  test('in the body: answered without a 5xx, and the next request is normal', async () => {
    for (const text of [
      '{"__proto__":{"polluted":"yes"},"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}',
      '{"constructor":{"prototype":{"polluted":"yes"}},"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}',
      '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi","__proto__":{"role":"x"}}]}',
      '{"__proto__":[],"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}',
    ]) {
      const res = await chat(text);
      expect(res.status).toBeLessThan(500);
      const body = await res.json();
      if (res.status >= 400) expect(isErrorShape(body)).toBe(true);
    }
    const res = await chat(JSON.stringify(CHAT_BODY));
    expect(res.status).toBe(200);
  });

  test('in x-gateway-config: 400 invalid_config naming the path, provider not called', async () => {
    const base = { provider: 'openai', api_key: PROVIDER_KEY, custom_host: mock.url };
    const configs = [
      '{"__proto__":{"polluted":"yes"},"provider":"openai","api_key":"k","custom_host":"http://127.0.0.1:1/v1"}',
      JSON.stringify({ ...base, constructor: { prototype: { polluted: 'yes' } } }),
      JSON.stringify({ ...base, override_params: { constructor: { prototype: { polluted: 'yes' } } } }),
      `{"provider":"openai","api_key":"k","custom_host":"${mock.url}","default_params":{"__proto__":{"polluted":"yes"}}}`,
      JSON.stringify({ ...base, drop_params: ['__proto__.polluted'] }),
      JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ ...base, prototype: 1 }] }),
    ];
    await providerNotCalled(async () => {
      for (const config of configs) {
        const err = await expectError(await chat(JSON.stringify(CHAT_BODY), { 'x-gateway-config': config }), 400, 'invalid_config');
        expect(err.error.type).toBe('invalid_config');
        expect(err.error.message).toMatch(/__proto__|constructor|prototype/);
      }
    });
  });

  test('in x-gateway-metadata: stored as plain keys, the call goes through', async () => {
    for (const metadata of ['{"__proto__":{"polluted":"yes"}}', '{"constructor":"x","__proto__":"y","prototype":"z"}', '{"toString":"x","hasOwnProperty":"y"}']) {
      const res = await chat(JSON.stringify(CHAT_BODY), { 'x-gateway-metadata': metadata });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
  });

  test('conditional routing on metadata.constructor does not see Object.prototype (with or without metadata)', async () => {
    const leaf = { provider: 'openai', api_key: PROVIDER_KEY, custom_host: mock.url };
    const config = asciiJson({
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.constructor': { $exists: true } }, then: 'a' }], default: 'b' },
      targets: [{ ...leaf, name: 'a' }, { ...leaf, name: 'b' }],
    });
    for (const extra of [{}, { 'x-gateway-metadata': '{}' }, { 'x-gateway-metadata': '{"tier":"x"}' }] as Record<string, string>[]) {
      const res = await chat(JSON.stringify(CHAT_BODY), { 'x-gateway-config': config, ...extra });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      // `metadata.constructor` was not sent, so `$exists: true` must not match: the default target answers.
      expect({ metadata: extra['x-gateway-metadata'] ?? '(none)', index: res.headers.get('x-gateway-last-used-option-index') }).toEqual({
        metadata: extra['x-gateway-metadata'] ?? '(none)',
        index: 'config.targets[1]',
      });
    }
  });

  test('malformed x-gateway-metadata → 400 in the error shape', async () => {
    await providerNotCalled(async () => {
      for (const metadata of ['{bad', '[]', '"x"', '42', 'null']) {
        await expectError(await chat(JSON.stringify(CHAT_BODY), { 'x-gateway-metadata': metadata }), 400);
      }
    });
  });
});

describe('providers, configs, keys', () => {
  test('unknown provider → 400 unknown_provider (names that exist on Object.prototype too)', async () => {
    await providerNotCalled(async () => {
      for (const provider of ['no-such-provider', '__proto__', 'constructor', 'toString', 'hasOwnProperty', '@nope']) {
        const err = await expectError(await chat(JSON.stringify(CHAT_BODY), { 'x-gateway-provider': provider }), 400);
        expect(err.error.code).toMatch(/unknown_provider|invalid_request/);
      }
      const err = await expectError(
        await chat(JSON.stringify(CHAT_BODY), { 'x-gateway-config': JSON.stringify({ provider: 'nope', api_key: 'k', custom_host: mock.url }) }),
        400,
        'unknown_provider',
      );
      expect(err.error.message).toContain('nope');
    });
  });

  test('no provider at all → 400', async () => {
    await providerNotCalled(async () => {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': gw.adminKey },
        body: JSON.stringify(CHAT_BODY),
      });
      await expectError(res, 400);
    });
  });

  test('invalid config → 400 invalid_config listing every violation by path', async () => {
    const config = {
      provider: 'openai',
      api_key: 5,
      retry: { attempts: -1, on_status_codes: [99] },
      strategy: { mode: 'bogus' },
      weight: 'heavy',
      cache: { mode: 'x' },
      request_timeout: 0,
      unknown_key: 1,
      forward_headers: ['bad header'],
      drop_params: ['a..b'],
      targets: [
        { provider: 'openai', api_key: 'k', custom_host: mock.url },
        { provider: 'openai', api_key: 'k', custom_host: mock.url, retry: { attempts: 'x' }, cb_config: { failure_threshold: 0, cooldown_interval: 1 } },
      ],
    };
    const expected = [
      'api_key',
      'retry.attempts',
      'retry.on_status_codes[0]',
      'strategy.mode',
      'weight',
      'cache.mode',
      'request_timeout',
      'unknown_key',
      'forward_headers[0]',
      'drop_params[0]',
      'targets[1].retry.attempts',
      'targets[1].cb_config.failure_threshold',
      'targets[1].cb_config.cooldown_interval',
    ];
    await providerNotCalled(async () => {
      const err = await expectError(await chat(JSON.stringify(CHAT_BODY), { 'x-gateway-config': JSON.stringify(config) }), 400, 'invalid_config');
      expect(err.error.type).toBe('invalid_config');
      const violations = err.error.message.replace(/^Invalid config: /, '').split('; ');
      const paths = violations.map((v) => v.slice(0, v.indexOf(': ')));
      for (const path of expected) expect({ path, listed: paths.includes(path) }).toEqual({ path, listed: true });
      for (const v of violations) expect(v).toMatch(/^[^:]+: .+/); // every entry is `path: reason`
    });
  });

  test('other invalid configs: not JSON, too deep, too big, wrong root type', async () => {
    const configs = [
      '{"provider":',
      'not-a-saved-config-id',
      '[1,2,3]',
      `${'{"a":'.repeat(300)}1${'}'.repeat(300)}`,
      `{"provider":"openai","api_key":"k","override_params":${'['.repeat(3000)}${']'.repeat(3000)}}`,
      `{"x":${'['.repeat(5000)}`,
      '{}',
      '{"strategy":{"mode":"fallback"},"targets":[]}',
      JSON.stringify({ strategy: { mode: 'conditional' }, targets: [{ provider: 'openai', api_key: 'k' }] }),
      JSON.stringify({ provider: 'openai', api_key: 'k', custom_host: 'ftp://x' }),
    ];
    await providerNotCalled(async () => {
      for (const config of configs) {
        const err = await expectError(await chat(JSON.stringify(CHAT_BODY), { 'x-gateway-config': config }), 400, 'invalid_config');
        expect(err.error.type).toBe('invalid_config');
      }
    });
  });

  test('x-gateway-forward-headers naming an invalid header → 400 in the error shape, not 500', async () => {
    // The config's forward_headers are checked against the RFC 9110 token syntax; the header form must be too.
    await providerNotCalled(async () => {
      const got: Record<string, string> = {};
      for (const names of ['bad header', 'a:b', 'x\u00e9', 'x-foo,(bad)']) {
        const res = await chat(JSON.stringify(CHAT_BODY), { 'x-gateway-forward-headers': names });
        const text = await res.text();
        got[names] = `${res.status} ${isErrorShape(JSON.parse(text)) ? 'shaped' : text.slice(0, 80)}`;
      }
      expect(got).toEqual({ 'bad header': '400 shaped', 'a:b': '400 shaped', 'x\u00e9': '400 shaped', 'x-foo,(bad)': '400 shaped' });
    });
  });

  test('a config api_key that cannot be a header value (NUL, CR LF) → 400, not a 502 "provider unreachable"', async () => {
    await providerNotCalled(async () => {
      // JSON escapes inside the (ASCII) header: the parsed api_key holds NUL, CR LF, or a character above U+00FF
      const keys = [String.raw`sk-\u0000`, String.raw`sk-a\r\nx-injected: 1`, String.raw`sk-\u0100`];
      const got: Record<string, number> = {};
      for (const key of keys) {
        const config = `{"provider":"openai","api_key":"${key}","custom_host":"${mock.url}"}`;
        const res = await chat(JSON.stringify(CHAT_BODY), { 'x-gateway-config': config });
        expect(isErrorShape(await res.json())).toBe(true);
        got[key] = res.status;
      }
      expect(got).toEqual(Object.fromEntries(keys.map((k) => [k, 400])));
    });
  });

  test('missing, empty or unknown x-gateway-api-key → 401, on every endpoint', async () => {
    await providerNotCalled(async () => {
      for (const path of ['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/v1/moderations', '/v1/models']) {
        const base = headers();
        delete base['x-gateway-api-key'];
        const method = path === '/v1/models' ? 'GET' : 'POST';
        const body = method === 'GET' ? undefined : JSON.stringify(CHAT_BODY);
        await expectError(await fetch(gw.url + path, { method, headers: base, body }), 401, 'unauthorized');
        await expectError(await fetch(gw.url + path, { method, headers: { ...base, 'x-gateway-api-key': '' }, body }), 401, 'unauthorized');
        await expectError(await fetch(gw.url + path, { method, headers: { ...base, 'x-gateway-api-key': 'gw-no-such-key' }, body }), 401, 'unauthorized');
        await expectError(await fetch(gw.url + path, { method, headers: { ...base, 'x-gateway-api-key': `${gw.adminKey}x` }, body }), 401, 'unauthorized');
      }
    });
  });

  test('no such route → 404 in the error shape', async () => {
    await expectError(await fetch(`${gw.url}/nope`), 404);
    await expectError(await fetch(`${gw.url}/v2/chat/completions`, { method: 'POST', headers: headers(), body: '{}' }), 404);
  });
});

describe('bodies over MAX_REQUEST_BODY_BYTES → 413 without reading them whole', () => {
  test('content-length just over the limit → 413 in the error shape', async () => {
    await providerNotCalled(async () => {
      const res = await chat(new Uint8Array(LIMIT + 1).fill(0x20));
      await expectError(res, 413, 'payload_too_large');
    });
  });

  test('a declared content-length far over the limit (100 MB, 10 bytes sent) → 413 in the error shape, at once', async () => {
    // Raw socket: the client announces 100 MB and sends almost nothing; the answer must come without the body.
    const started = Date.now();
    const raw = await new Promise<string>((resolve, reject) => {
      let got = '';
      const timer = setTimeout(() => reject(new Error(`no answer within 5 s; got ${JSON.stringify(got)}`)), 5_000);
      const done = () => {
        clearTimeout(timer);
        resolve(got);
      };
      void Bun.connect({
        hostname: '127.0.0.1',
        port: gw.port,
        socket: {
          open(socket) {
            socket.write(
              `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\ncontent-type: application/json\r\n` +
                `x-gateway-api-key: ${gw.adminKey}\r\nx-gateway-provider: openai\r\nx-gateway-custom-host: ${mock.url}\r\n` +
                `content-length: 100000000\r\n\r\n{"model":"`,
            );
          },
          data(socket, data) {
            got += data.toString();
            const head = got.indexOf('\r\n\r\n');
            if (head < 0) return;
            const length = /content-length: (\d+)/i.exec(got.slice(0, head));
            if (!length || got.length - head - 4 >= Number(length[1])) {
              socket.end();
              done();
            }
          },
          close: done,
          error: done,
        },
      });
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    const [head, body = ''] = raw.split('\r\n\r\n');
    expect(head).toStartWith('HTTP/1.1 413');
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = body;
    }
    // INTERFACE.md: every error the gateway produces has the error body.
    expect({ head: head?.split('\r\n')[0], body: parsed, shaped: isErrorShape(parsed) }).toMatchObject({ shaped: true });
  });

  test('a declared 2 MB body sent in full by fetch → 413 in the error shape', async () => {
    const res = await chat(new Uint8Array(2_000_000).fill(0x20));
    expect(res.status).toBe(413);
    const text = await res.text();
    expect({ contentType: res.headers.get('content-type'), text: text.slice(0, 200), shaped: text !== '' && isErrorShape(JSON.parse(text)) }).toMatchObject({
      shaped: true,
    });
  });

  test('a chunked body that never ends → 413 while the client is still sending', async () => {
    let sent = 0;
    let stopped = false;
    const chunk = new Uint8Array(16_384).fill(0x20);
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        // Keeps producing until the test ends (bounded at 256 MiB so that a broken gateway cannot run us out of RAM).
        if (stopped || sent > 256 * 1024 * 1024) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
        await Bun.sleep(0);
      },
    });
    const controller = new AbortController();
    const started = Date.now();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: headers(),
      body,
      signal: controller.signal,
      duplex: 'half',
    } as RequestInit);
    const elapsed = Date.now() - started;
    const atAnswer = sent;
    const err = await expectError(res, 413, 'payload_too_large');
    stopped = true;
    controller.abort();
    expect(err.error.message).toContain(String(LIMIT));
    expect(elapsed).toBeLessThan(5_000);
    // the gateway stopped reading soon after the limit: far less than "whole" was sent when the 413 arrived
    expect(atAnswer).toBeLessThan(LIMIT + 16 * 1024 * 1024);
  });

  test('the same on the proxy route (`/v1/*` passthrough)', async () => {
    await providerNotCalled(async () => {
      await expectError(await post('/v1/files', new Uint8Array(LIMIT + 100).fill(0x20)), 413, 'payload_too_large');
    });
  });
});

describe('conditional-routing $regex cannot stall the gateway', () => {
  // The gateway evaluates client-supplied patterns (x-gateway-config) on client-supplied text (x-gateway-metadata)
  // on its one event loop: a pattern that backtracks for seconds stalls every other request too.
  async function timed(pattern: string, text: string) {
    const leaf = { provider: 'openai', api_key: PROVIDER_KEY, custom_host: mock.url };
    const config = JSON.stringify({
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tier': { $regex: pattern } }, then: 'a' }], default: 'b' },
      targets: [{ ...leaf, name: 'a' }, { ...leaf, name: 'b' }],
    });
    const started = performance.now();
    const call = chat(JSON.stringify(CHAT_BODY), { 'x-gateway-config': config, 'x-gateway-metadata': JSON.stringify({ tier: text }) }).then(
      async (res) => ({ status: res.status, ms: performance.now() - started, body: await res.text() }),
    );
    await Bun.sleep(30);
    const healthStarted = performance.now();
    const health = await fetch(`${gw.url}/health`);
    const healthMs = performance.now() - healthStarted;
    const result = await call;
    expect(health.status).toBe(200);
    expect(result.status).toBeLessThan(500);
    return { requestUnder1s: result.ms < 1000, healthUnder500ms: healthMs < 500, requestMs: Math.round(result.ms), healthMs: Math.round(healthMs) };
  }

  test('nested quantifier / overlapping alternation: `(a|a)*$`', async () => {
    expect(await timed('(a|a)*$', `${'a'.repeat(40)}!`)).toMatchObject({ requestUnder1s: true, healthUnder500ms: true });
  }, 30_000);

  test('polynomial backtracking without nesting: `a*a*a*a*a*a*a*b` on 56 characters', async () => {
    // JSC: ~0.7 s on 50 characters, > 20 s on 100 (O(n^7)); a client can stall the gateway for hours.
    expect(await timed('a*a*a*a*a*a*a*b', 'a'.repeat(56))).toMatchObject({ requestUnder1s: true, healthUnder500ms: true });
  }, 60_000);
});

describe('the process is still up', () => {
  test('/health answers 200 and a normal call still works; nothing tried to leave the machine', async () => {
    const health = await fetch(`${gw.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const res = await chat(JSON.stringify(CHAT_BODY));
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(gw.proc.exitCode).toBeNull();
    expect(gw.trap.seen).toEqual([]);
    expect(gw.output()).not.toContain('unhandled server error');
  });
});

describe('settings from odd environment values', () => {
  test('PORT=0 asks for an ephemeral port (tests/helpers/gateway-process.ts relies on it), not the default 8787', () => {
    expect(readSettings({ PORT: '0' }).port).toBe(0);
  });

  test('nonsense values fall back to the defaults instead of breaking the server', () => {
    const s = readSettings({ PORT: 'abc', MAX_REQUEST_BODY_BYTES: '-5', LOG_LEVEL: '', TRUSTED_CUSTOM_HOSTS: ' , ,' });
    expect(s.port).toBe(8787);
    expect(s.maxRequestBodyBytes).toBe(33_554_432);
    expect(s.logLevel).toBe('info');
    expect(s.trustedCustomHosts).toEqual([]);
  });
});

describe('Object.prototype is not polluted (in-process gateway)', () => {
  let gateway: Gateway;
  let local: OpenAIMock;
  const protoKeys = () => Object.getOwnPropertyNames(Object.prototype).sort();
  let keysBefore: string[];

  beforeAll(async () => {
    keysBefore = protoKeys();
    local = await startOpenAIMock({ apiKey: null, strictParams: false });
    gateway = await startInProcessGateway();
  });
  afterAll(async () => {
    await gateway?.close();
    await local?.stop();
  });

  const call = (body: string, extra: Record<string, string> = {}, path = '/v1/chat/completions') =>
    gateway.handle(new Request(`http://gateway.test${path}`, { method: 'POST', headers: providerHeaders(local.url, extra), body }));

  test('bodies, configs and metadata with __proto__ / constructor / prototype keys', async () => {
    const leaf = `"provider":"openai","api_key":"k","custom_host":"${local.url}"`;
    const bodies = [
      '{"__proto__":{"polluted":"yes"},"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}',
      '{"constructor":{"prototype":{"polluted":"yes"}},"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}',
      '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi","__proto__":{"polluted":"yes"}}],"__proto__":{"polluted":"yes"}}',
    ];
    const configs = [
      `{${leaf},"__proto__":{"polluted":"yes"}}`,
      `{${leaf},"constructor":{"prototype":{"polluted":"yes"}}}`,
      `{${leaf},"override_params":{"__proto__":{"polluted":"yes"}}}`,
      `{${leaf},"default_params":{"constructor":{"prototype":{"polluted":"yes"}}}}`,
      `{${leaf},"drop_params":["__proto__.polluted","constructor.prototype.polluted"]}`,
      `{"strategy":{"mode":"fallback"},"targets":[{${leaf},"__proto__":{"polluted":"yes"}}]}`,
      `{"strategy":{"mode":"conditional","conditions":[{"query":{"metadata.__proto__":{"$exists":true}},"then":"a"}],"default":"a"},"targets":[{${leaf},"name":"a"}]}`,
    ];
    const metadata = ['{"__proto__":{"polluted":"yes"}}', '{"constructor":{"prototype":{"polluted":"yes"}}}', '{"__proto__":"yes"}'];
    const statuses: number[] = [];
    for (const path of ['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/v1/moderations']) {
      for (const body of bodies) {
        const res = await call(body, {}, path);
        statuses.push(res.status);
        await res.arrayBuffer();
      }
    }
    for (const config of configs) {
      const res = await call(bodies[0] as string, { 'x-gateway-config': config });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    for (const m of metadata) {
      const res = await call(bodies[0] as string, { 'x-gateway-metadata': m });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses.every((s) => s < 500)).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    expect(protoKeys()).toEqual(keysBefore);
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
    expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
  });
});
