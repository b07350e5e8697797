// Every streamed answer's usage is known at completion, whether or not the client asked for
// `stream_options.include_usage`: the request log row holds its tokens and cost, and a tokens rate-limit policy counts
// it, while the client's bytes stay what they were. OpenAI (an OpenAI-format provider that honours the option: the
// gateway asks for usage and hides it) through the local OpenAI mock, Anthropic (a translated stream: its native
// events carry usage) through its local server. Expected numbers come from the same call made with include_usage,
// and from the providers' catalogue files, never written in by hand.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { eq, type ModelPrices, type PricingCatalogue, Services } from '@gateway/sdk';
import { RequestLogServices, requestLogs } from '@gateway/plugin-request-log';
import { providerHeaders, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type AnthropicTestServer, startAnthropicServer } from '../providers/anthropic/server.ts';
import { setClock, type Stack, startStack } from '../rate-limits/support.ts';

const catalogue = (pkg: string): PricingCatalogue =>
  JSON.parse(readFileSync(new URL(`../../providers/${pkg}/pricing.json`, import.meta.url), 'utf8'));
/** Cents of `tokens` at `perMillion` US dollars. */
const cents = (perMillion: number, tokens: number) => (perMillion * tokens) / 10_000;

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

let s: Stack;
let anthropic: AnthropicTestServer;
beforeAll(async () => {
  s = await startStack();
  anthropic = startAnthropicServer();
});
afterAll(async () => {
  await s.close();
  anthropic.stop();
});

async function rowOf(traceId: string) {
  await s.gateway.service(RequestLogServices.queue).flush();
  const rows = await s.gateway.service(Services.database).select(requestLogs, { where: (c) => eq(c.trace_id, traceId) });
  expect(rows.length).toBe(1);
  return rows[0]!;
}

const post = (headers: Record<string, string>, body: unknown) =>
  s.gateway.handle(new Request('http://gateway.test/v1/chat/completions', { method: 'POST', headers, body: JSON.stringify(body) }));

/** The JSON events of an SSE text (not `[DONE]`). */
const events = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);

const usageChunk = (text: string) => events(text).find((e) => e.usage && typeof e.usage === 'object')?.usage as Usage | undefined;

describe('OpenAI: the gateway asks for usage the client did not ask for, and hides it', () => {
  const prices = catalogue('openai').models['gpt-4o-mini'] as ModelPrices;
  const body = (includeUsage: boolean) => ({
    model: 'gpt-4o-mini',
    stream: true,
    ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
    messages: [{ role: 'user', content: 'count my streamed tokens please' }],
  });
  /** The stream with its completion id and time made neutral (each call gets its own). */
  const neutral = (text: string) => text.replaceAll(/chatcmpl-[A-Za-z0-9]+/g, 'chatcmpl-X').replaceAll(/"created":\d+/g, '"created":0');

  test('without include_usage: the client bytes are those of the provider without the option; the row has tokens and cost', async () => {
    // What the provider sends for this request without the option, straight from it.
    const direct = await fetch(`${s.mock.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify(body(false)),
    });
    const expected = await direct.text();
    expect(expected).not.toContain('"usage"');

    const traceId = `su-${crypto.randomUUID()}`;
    const res = await post(providerHeaders(s.mock.url, { 'x-gateway-trace-id': traceId }), body(false));
    expect(res.status).toBe(200);
    const text = await res.text();
    // The provider was asked for usage; the client sees none of it.
    const sent = s.mock.requests.at(-1)!.json as Record<string, unknown>;
    expect(sent.stream_options).toEqual({ include_usage: true });
    expect(text).not.toContain('"usage"');
    expect(neutral(text)).toBe(neutral(expected));

    // The same call with the option says what the usage is.
    const asked = await post(providerHeaders(s.mock.url), body(true));
    const usage = usageChunk(await asked.text())!;
    expect(usage.total_tokens).toBeGreaterThan(0);

    const row = await rowOf(traceId);
    expect(row.prompt_tokens).toBe(usage.prompt_tokens);
    expect(row.completion_tokens).toBe(usage.completion_tokens);
    expect(row.total_tokens).toBe(usage.total_tokens);
    expect(row.priced).toBe(true);
    expect(row.cost_cents!).toBeCloseTo(cents(prices.input!, usage.prompt_tokens) + cents(prices.output!, usage.completion_tokens), 10);
  });

  test('with include_usage: unchanged, the client gets the usage chunk and `"usage": null` on the others', async () => {
    const traceId = `su-${crypto.randomUUID()}`;
    const res = await post(providerHeaders(s.mock.url, { 'x-gateway-trace-id': traceId }), body(true));
    const text = await res.text();
    const all = events(text);
    expect(all.slice(0, -1).every((e) => e.usage === null)).toBe(true);
    expect(all.at(-1)!.choices).toEqual([]);
    const usage = usageChunk(text)!;
    const row = await rowOf(traceId);
    expect(row.total_tokens).toBe(usage.total_tokens);
    expect(row.cost_cents!).toBeCloseTo(cents(prices.input!, usage.prompt_tokens) + cents(prices.output!, usage.completion_tokens), 10);
  });

  test('a client that said include_usage: false gets no usage either; the provider is asked for it', async () => {
    const res = await post(providerHeaders(s.mock.url), { ...body(false), stream_options: { include_usage: false } });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).not.toContain('"usage"');
    expect((s.mock.requests.at(-1)!.json as Record<string, unknown>).stream_options).toEqual({ include_usage: true });
  });
});

describe('Anthropic: a translated stream records its native usage', () => {
  const prices = catalogue('anthropic').models['claude-sonnet-4-5'] as ModelPrices;
  const headers = (traceId?: string) => ({
    'content-type': 'application/json',
    'x-gateway-api-key': TEST_ADMIN_KEY,
    'x-gateway-provider': 'anthropic',
    'x-gateway-custom-host': anthropic.baseUrl,
    authorization: 'Bearer sk-ant-test',
    ...(traceId ? { 'x-gateway-trace-id': traceId } : {}),
  });
  const body = (includeUsage: boolean) => ({
    model: 'claude-sonnet-4-5',
    max_tokens: 64,
    stream: true,
    ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
    messages: [{ role: 'user', content: 'stream without asking for usage' }],
  });

  test('without include_usage: no usage chunk for the client (as before), tokens and cost in the row', async () => {
    const asked = await post(headers(), body(true));
    const usage = usageChunk(await asked.text())!;
    expect(usage.total_tokens).toBeGreaterThan(0);
    const cached = usage.prompt_tokens_details!.cached_tokens;

    const traceId = `su-${crypto.randomUUID()}`;
    const res = await post(headers(traceId), body(false));
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain('"usage"');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);

    const row = await rowOf(traceId);
    expect(row.prompt_tokens).toBe(usage.prompt_tokens);
    expect(row.completion_tokens).toBe(usage.completion_tokens);
    expect(row.cache_read_input_tokens).toBe(cached);
    expect(row.priced).toBe(true);
    const expected = cents(prices.input!, usage.prompt_tokens - cached) + cents(prices.cache_read_input!, cached) + cents(prices.output!, usage.completion_tokens);
    expect(row.cost_cents!).toBeCloseTo(expected, 10);
  });
});

describe('a tokens rate-limit policy counts streams whose client did not ask for usage', () => {
  test('OpenAI streams without include_usage reach the policy’s value, then the next call is refused', async () => {
    setClock(Date.parse('2032-05-01T00:00:00.000Z'));
    const created = await s.admin('POST', '/policies/rate-limits', {
      name: 'stream-tokens',
      type: 'tokens',
      unit: 'rph',
      value: 30,
      conditions: [{ key: 'metadata.case', value: 'stream-tokens' }],
    });
    expect(created.status).toBe(201);
    const extra = { 'x-gateway-metadata': JSON.stringify({ case: 'stream-tokens' }) };
    const request = { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'one two three four five' }] };

    const statuses: number[] = [];
    for (let i = 0; i < 12 && statuses.at(-1) !== 429; i++) {
      const traceId = `su-rl-${crypto.randomUUID()}`;
      const res = await post(providerHeaders(s.mock.url, { ...extra, 'x-gateway-trace-id': traceId }), request);
      statuses.push(res.status);
      const text = await res.text();
      if (res.status !== 200) break;
      expect(text).not.toContain('"usage"');
      // The tokens are added in the finally stages, which have run once the call's log row is written.
      expect((await rowOf(traceId)).total_tokens).toBeGreaterThan(0);
    }
    // Each stream costs more than 3 tokens (prompt words and the answer), so a handful reach 30.
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.filter((x) => x === 200).length).toBeGreaterThan(0);
    expect(statuses.length).toBeLessThan(12);
    setClock(Date.now());
  });
});
