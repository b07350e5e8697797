// HTTP fuzz against the real server: 6000 deterministic cases (seeded PRNG) of mutated configs (x-gateway-config and
// the other gateway headers) and mutated bodies for the four first-class endpoints. The provider is the OpenAI mock,
// which answers 200 to anything it accepts. Expected: no 5xx, no hang, every 4xx body in the INTERFACE.md error
// shape, and the process still up afterwards.
//
// Safety: every config node gets a custom_host from a fixed list (the mock, loopback spellings, addresses the guard
// refuses before any lookup, and invalid strings), so no case can send the gateway to a public provider; the
// gateway's HTTP(S)_PROXY points at a local trap besides, which must see nothing.
//
// Reproduce one run: FUZZ_SEED=<n> bun test tests/robustness/fuzz.test.ts (default seed below); FUZZ_DEBUG=1 prints
// the most frequent refusals.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { asciiJson, isErrorShape, prng, type RobustGateway, startRobustGateway } from './support.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20_251_121);
const CASES = 6000;
const CONCURRENCY = 24;
const DEADLINE_MS = 25_000;
const LIMIT = 262_144;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const ENDPOINTS = ['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/v1/moderations'] as const;

interface Case {
  i: number;
  path: string;
  headers: Record<string, string>;
  body: string | Uint8Array;
}

function generator(seed: number, mockUrl: string, mockPort: number) {
  const rnd = prng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const chance = (p: number) => rnd() < p;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)] as T;

  const SAFE_HOSTS = [mockUrl, mockUrl, mockUrl, mockUrl, mockUrl, `http://localhost:${mockPort}/v1`, `http://127.0.0.1:${mockPort}/v1/`, 'http://10.0.0.1/v1', 'http://[fd00::1]/', 'http://metadata.google.internal/', 'ftp://x', 'not a url', ''];
  const STRINGS = ['', 'x', 'openai', 'groq', 'ollama', '@openai', '@nope', 'nope', 'gpt-4o-mini', 'fallback', 'loadbalance', 'conditional', 'single', 'simple', 'semantic', '__proto__', 'constructor', 'prototype', 'toString', 'a.b', 'messages[0].name', 'tools[*].function.strict', '["a.b"]', 'x-foo', 'bad header', '日本語🙂', '\u0000', '\\', '"', '$regex', 'metadata.tier', 'params.model', 'url.pathname', 'a'.repeat(300)];
  const NUMBERS = [0, 1, -1, 2, 0.5, -0.5, 100, 599, 600, 99, 30_000, 1e9, -1e9, 2 ** 53, 1e308, -1e308, 5e-324, 200, 429, 500];
  const CONFIG_KEYS = ['strategy', 'targets', 'name', 'provider', 'api_key', 'virtual_key', 'prompt_id', 'strict_wire_compliance', 'override_params', 'default_params', 'drop_params', 'request_timeout', 'cache', 'retry', 'cb_config', 'weight', 'on_status_codes', 'custom_host', 'passthrough', 'forward_headers', 'mode', 'conditions', 'default', 'attempts', 'query', 'then', 'Authorization', 'svcA_access_key_id', 'deployments', 'before_request_hooks', 'after_request_hooks', 'input_guardrails', 'output_guardrails', '__proto__', 'constructor', 'prototype', 'unknown', ''];
  const BODY_KEYS = ['model', 'messages', 'prompt', 'input', 'stream', 'stream_options', 'temperature', 'top_p', 'n', 'max_tokens', 'max_completion_tokens', 'stop', 'tools', 'tool_choice', 'response_format', 'user', 'logprobs', 'top_logprobs', 'seed', 'logit_bias', 'dimensions', 'encoding_format', 'role', 'content', 'functions', 'function_call', '__proto__', 'constructor', 'x'];

  function scalar(): Json {
    switch (int(0, 5)) {
      case 0:
        return null;
      case 1:
        return chance(0.5);
      case 2:
      case 3:
        return pick(NUMBERS);
      default:
        return pick(STRINGS);
    }
  }
  function value(depth: number, keys: readonly string[]): Json {
    if (depth <= 0 || chance(0.55)) return scalar();
    if (chance(0.5)) return Array.from({ length: int(0, 3) }, () => value(depth - 1, keys));
    const out: Obj = {};
    for (let k = int(0, 3); k > 0; k--) out[pick(keys)] = value(depth - 1, keys);
    return out;
  }
  /** One random change somewhere in the tree. */
  function mutate(v: Json, keys: readonly string[], depth = 0): Json {
    const here = depth > 6 || chance(0.3);
    if (Array.isArray(v)) {
      if (here || v.length === 0) {
        const copy = v.slice();
        const op = int(0, 3);
        if (op === 0 && copy.length) copy.splice(int(0, copy.length - 1), 1);
        else if (op === 1 && copy.length) copy.push(structuredClone(copy[int(0, copy.length - 1)] as Json));
        else if (op === 2) copy.push(value(2, keys));
        else return value(2, keys);
        return copy;
      }
      const copy = v.slice();
      const i = int(0, copy.length - 1);
      copy[i] = mutate(copy[i] as Json, keys, depth + 1);
      return copy;
    }
    if (isObj(v)) {
      const names = Object.keys(v);
      if (here || names.length === 0) {
        const copy: Obj = { ...v };
        const op = int(0, 3);
        if (op === 0 && names.length) delete copy[pick(names)];
        else if (op === 1) copy[pick(keys)] = value(2, keys);
        else if (op === 2 && names.length) copy[pick(names)] = scalar();
        else return value(2, keys);
        return copy;
      }
      const name = pick(names);
      return { ...v, [name]: mutate(v[name] as Json, keys, depth + 1) };
    }
    return chance(0.5) ? scalar() : value(2, keys);
  }

  const leaf = (extra: Obj = {}): Obj => ({ provider: 'openai', api_key: 'sk-fuzz', custom_host: mockUrl, ...extra });
  const baseConfigs = (): Obj[] => [
    leaf(),
    leaf({ retry: { attempts: 1, on_status_codes: [429, 500] }, request_timeout: 5000 }),
    leaf({ override_params: { temperature: 0.5 }, default_params: { user: 'u' }, drop_params: ['user', 'messages[0].name', 'tools[*].function.strict'] }),
    leaf({ forward_headers: ['x-foo'], strict_wire_compliance: false, cache: { mode: 'simple', max_age: 60 } }),
    leaf({ cb_config: { failure_threshold: 3, cooldown_interval: 30_000 } }),
    { strategy: { mode: 'fallback', on_status_codes: [500] }, targets: [leaf({ custom_host: 'http://10.0.0.1/v1' }), leaf()] },
    { strategy: { mode: 'loadbalance' }, targets: [leaf({ weight: 1 }), leaf({ weight: 3, provider: 'groq' })] },
    { strategy: { mode: 'single' }, targets: [leaf()] },
    {
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tier': { $eq: 'pro' } }, then: 'a' }, { query: { $or: [{ 'params.model': { $regex: '^gpt' } }, { 'url.pathname': '/v1/embeddings' }] }, then: 'b' }], default: 'b' },
      targets: [leaf({ name: 'a' }), leaf({ name: 'b' })],
    },
    { strategy: { mode: 'fallback' }, targets: [{ strategy: { mode: 'loadbalance' }, targets: [leaf(), leaf()] }, leaf()] },
    { provider: 'openai', custom_host: mockUrl, passthrough: true },
    leaf({ input_guardrails: [{ 'default.regexMatch': { rule: 'x' }, deny: true }], output_guardrails: ['gr-unknown'] }),
    leaf({ before_request_hooks: [{ id: 'h', checks: [{ id: 'default.contains', parameters: { words: ['fuzz'], operator: 'none' } }] }] }),
    { virtual_key: 'vk-nope' },
    { provider: '@nope' },
  ];

  /** Every config node (the root and every target, at any depth) gets a safe custom host and a small retry count. */
  function sanitize(node: Json): Json {
    if (!isObj(node)) return node;
    const out: Obj = { ...node };
    if (out.custom_host === undefined || (typeof out.custom_host === 'string' && !SAFE_HOSTS.includes(out.custom_host))) out.custom_host = pick(SAFE_HOSTS);
    if (isObj(out.retry) && typeof out.retry.attempts === 'number' && out.retry.attempts > 2) out.retry = { ...out.retry, attempts: 2 };
    if (Array.isArray(out.targets)) out.targets = out.targets.map(sanitize);
    if (typeof out.request_timeout === 'number' && out.request_timeout > 10_000) out.request_timeout = 10_000;
    return out;
  }

  const baseBodies: Record<string, () => Obj> = {
    '/v1/chat/completions': () => ({
      model: pick(['gpt-4o-mini', 'gpt-4o', 'gpt-3.5-turbo']),
      messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: pick(['hi', 'hello there', '']) }],
      ...(chance(0.3) ? { stream: true } : {}),
      ...(chance(0.2) ? { temperature: 0.7, max_tokens: 20, n: 2, stop: ['x'] } : {}),
      ...(chance(0.1) ? { tools: [{ type: 'function', function: { name: 'f', parameters: {} } }], tool_choice: 'auto' } : {}),
      ...(chance(0.1) ? { response_format: { type: 'json_object' }, user: 'u', logprobs: true, top_logprobs: 2 } : {}),
    }),
    '/v1/completions': () => ({ model: pick(['gpt-3.5-turbo-instruct', 'davinci-002']), prompt: pick(['hi', ['a', 'b']]), ...(chance(0.3) ? { stream: true } : {}) }),
    '/v1/embeddings': () => ({ model: pick(['text-embedding-3-small', 'text-embedding-ada-002']), input: pick(['hi', ['a', 'b'], [1, 2, 3]]) }),
    '/v1/moderations': () => ({ input: pick(['hi', ['a', 'b']]), ...(chance(0.5) ? { model: 'omni-moderation-latest' } : {}) }),
  };

  const printable = (n: number) => Array.from({ length: n }, () => String.fromCharCode(int(0x20, 0x7e))).join('');

  function configHeader(): string | undefined {
    const r = rnd();
    if (r < 0.12) return undefined;
    if (r < 0.16) return printable(int(0, 40)); // not JSON: a saved-config id
    if (r < 0.2) return asciiJson(pick(baseConfigs())).slice(0, int(1, 60)); // truncated
    if (r < 0.22) return `${'['.repeat(int(10, 3000))}`;
    let config: Json = pick(baseConfigs());
    if (chance(0.4)) return asciiJson(sanitize(config)); // as written: exercises routing, retries, params
    for (let m = int(1, 4); m > 0; m--) config = mutate(config, CONFIG_KEYS);
    if (chance(0.05)) config = value(3, CONFIG_KEYS);
    return asciiJson(sanitize(config));
  }

  function body(path: string): string | Uint8Array {
    const r = rnd();
    if (r < 0.03) return '';
    if (r < 0.06) return asciiJson(baseBodies[path]?.()).slice(0, int(0, 40));
    if (r < 0.08) return new Uint8Array(Array.from({ length: int(1, 64) }, () => int(0, 255)));
    if (r < 0.09) return '['.repeat(int(1, 100_000));
    if (r < 0.1) return `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"${'x'.repeat(int(LIMIT - 1000, LIMIT + 1000))}"}]}`;
    if (r < 0.12) return JSON.stringify(value(4, BODY_KEYS));
    let b: Json = baseBodies[path]?.() as Obj;
    if (chance(0.5)) return JSON.stringify(b);
    for (let m = int(1, 3); m > 0; m--) b = mutate(b, BODY_KEYS);
    return JSON.stringify(b);
  }

  function headers(apiKey: string): Record<string, string> {
    const h: Record<string, string> = { 'content-type': chance(0.95) ? 'application/json' : pick(['text/plain', 'multipart/form-data', '']) };
    if (chance(0.97)) h['x-gateway-api-key'] = chance(0.97) ? apiKey : pick(['', 'nope', `${apiKey}x`]);
    const config = configHeader();
    if (config !== undefined) h['x-gateway-config'] = config;
    else {
      if (chance(0.9)) h['x-gateway-provider'] = chance(0.85) ? 'openai' : pick(['groq', 'nope', '@x', '__proto__', '']);
      h['x-gateway-custom-host'] = pick(SAFE_HOSTS) || mockUrl;
      if (chance(0.8)) h.authorization = pick(['Bearer sk-fuzz', 'bearer sk-fuzz', 'sk-fuzz', 'Bearer ', 'Basic x']);
    }
    if (chance(0.25)) {
      const r = rnd();
      h['x-gateway-metadata'] =
        r < 0.6 ? asciiJson({ tier: pick(['pro', 'free', '', '__proto__']), [pick(['a', '__proto__', 'constructor', 'toString'])]: pick(STRINGS) })
        : r < 0.85 ? asciiJson(value(2, ['tier', 'a', '__proto__', 'constructor']))
        : printable(int(0, 30));
    }
    if (chance(0.05)) h['x-gateway-request-timeout'] = pick(['0', '-1', 'abc', '1', '5000', '1e3', '']);
    if (chance(0.05)) h['x-gateway-forward-headers'] = pick(['x-foo', 'bad header,,', '', 'authorization,x-gateway-api-key']);
    if (chance(0.05)) h['x-gateway-strict-wire-compliance'] = pick(['true', 'false', 'maybe', '']);
    if (chance(0.03)) h['x-gateway-cache-force-refresh'] = 'true';
    if (chance(0.03)) h['x-gateway-trace-id'] = printable(int(0, 80));
    return h;
  }

  return (i: number, apiKey: string): Case => {
    const path = pick(ENDPOINTS);
    return { i, path, headers: headers(apiKey), body: body(path) };
  };
}

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

describe('HTTP fuzz', () => {
  test(`${CASES} mutated configs and bodies: no 5xx, no hang, every 4xx in the error shape`, async () => {
    const make = generator(SEED, mock.url, mock.port);
    const cases = Array.from({ length: CASES }, (_, i) => make(i, gw.adminKey));
    // The same seed gives the same cases.
    const again = generator(SEED, mock.url, mock.port);
    expect(asciiJson(again(0, gw.adminKey).headers)).toBe(asciiJson(cases[0]?.headers));

    const failures: string[] = [];
    const statuses = new Map<number, number>();
    const reasons = new Map<string, number>();
    let next = 0;
    let done = 0;
    const started = Date.now();
    const describeCase = (c: Case) =>
      `#${c.i} ${c.path} headers=${JSON.stringify(c.headers).slice(0, 1200)} body=${typeof c.body === 'string' ? JSON.stringify(c.body.slice(0, 300)) : `<${c.body.byteLength} bytes>`}`;

    async function worker() {
      while (next < cases.length && Date.now() - started < DEADLINE_MS) {
        const c = cases[next++] as Case;
        let status = 0;
        let text = '';
        try {
          const res = await fetch(gw.url + c.path, { method: 'POST', headers: c.headers, body: c.body, signal: AbortSignal.timeout(15_000) });
          status = res.status;
          text = await res.text();
        } catch (error) {
          failures.push(`${describeCase(c)} → no answer: ${String(error)}`);
          continue;
        }
        done++;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (process.env.FUZZ_DEBUG && status >= 400 && status < 500) {
          const key = `${status} ${(JSON.parse(text)?.error?.message ?? '').replace(/[0-9]+/g, 'N').slice(0, 70)}`;
          reasons.set(key, (reasons.get(key) ?? 0) + 1);
        }
        if (status >= 500 || status < 200 || (status >= 300 && status < 400)) {
          failures.push(`${describeCase(c)} → ${status} ${text.slice(0, 300)}`);
        } else if (status >= 400) {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          if (!isErrorShape(parsed)) failures.push(`${describeCase(c)} → ${status} not in the error shape: ${text.slice(0, 300)}`);
        }
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    // FUZZ_DEBUG=1 prints the most frequent refusals, to keep the mix balanced when the generator changes
    if (process.env.FUZZ_DEBUG) console.log([...reasons].sort((a, b) => b[1] - a[1]).slice(0, 30));
    const summary = { done, elapsedMs: Date.now() - started, statuses: Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])) };
    expect({ summary, failures: failures.slice(0, 8), failureCount: failures.length }).toEqual({ summary, failures: [], failureCount: 0 });
    // bounded in time, but it must have done most of the work (a slow machine still does well over 1000)
    expect(done).toBeGreaterThanOrEqual(1000);
    // the mix reached the provider often, and was refused often: both sides were exercised
    expect(statuses.get(200) ?? 0).toBeGreaterThan(CASES / 10);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(CASES / 10);
  }, 60_000);

  test('afterwards: /health is 200, the process is alive, nothing tried to leave the machine', async () => {
    const res = await fetch(`${gw.url}/health`);
    expect(res.status).toBe(200);
    expect(gw.proc.exitCode).toBeNull();
    expect(gw.trap.seen).toEqual([]);
    if (process.env.FUZZ_DEBUG) console.log(gw.output().split('\n').filter((l) => l.includes('"level":50')).slice(0, 5).join('\n'));
  });
});
