// The cost of real gateway calls, stored in the request log row beside the tokens of each kind: OpenAI (a whole
// answer, a stream with include_usage, an unknown model counted as unpriced) through the local OpenAI mock, and
// Anthropic's translated answers with cached input tokens through its local server. Expected costs are computed from
// the providers' own catalogue files and the usage the client was given, never written in by hand.
// Also: every provider package ships a valid catalogue and declares it, so a package without one fails here.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq, type ModelPrices, type PricingCatalogue, Services } from '@gateway/sdk';
import { RequestLogServices, requestLogs } from '@gateway/plugin-request-log';
import { loadCatalogue } from '@gateway/plugin-pricing';
import { providerHeaders, startInProcessGateway } from '../helpers/in-process.ts';
import { DEFAULT_MODELS } from '../mocks/openai-fixtures.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { type AnthropicTestServer, startAnthropicServer } from '../providers/anthropic/server.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const catalogueOf = (pkg: string): PricingCatalogue => JSON.parse(readFileSync(join(ROOT, 'providers', pkg, 'pricing.json'), 'utf8'));

/** Cents of `tokens` at `perMillion` US dollars. */
const cents = (perMillion: number, tokens: number) => (perMillion * tokens) / 10_000;
/** A fine-tuned model's id: its own, never in a catalogue. */
const UNPRICED = 'ft:gpt-4o-mini-2024-07-18:acme::unpriced';

describe('the catalogue files', () => {
  const packages = readdirSync(join(ROOT, 'providers')).filter((name) => {
    const manifest = join(ROOT, 'providers', name, 'package.json');
    return existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).gateway !== undefined;
  });

  test('every provider package has a pricing.json that validates, naming its source and date', () => {
    expect(packages.length).toBeGreaterThan(20);
    const missing = packages.filter((name) => !existsSync(join(ROOT, 'providers', name, 'pricing.json')));
    expect(missing).toEqual([]);
    for (const name of packages) {
      const catalogue = loadCatalogue(name, new URL(`../../providers/${name}/pricing.json`, import.meta.url));
      expect(catalogue.source).toStartWith('https://');
      expect(catalogue.as_of).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      // A file without prices says why.
      if (Object.keys(catalogue.models).length === 0) expect(catalogue.note?.length ?? 0).toBeGreaterThan(20);
    }
  });

  test('every package with a public price list lists prices: only the self-hosted servers and SiliconFlow (not in the compilation) list none', () => {
    const unpriced = packages.filter((name) => Object.keys(catalogueOf(name).models).length === 0);
    expect(unpriced.sort()).toEqual(['lm-studio', 'ollama', 'siliconflow', 'vllm']);
    for (const name of ['lm-studio', 'ollama', 'vllm']) expect(catalogueOf(name).note).toContain('no list price');
    expect(catalogueOf('siliconflow').note).toContain("lists none of this provider's models");
  });

  test('every loaded provider adapter declares its package’s file', async () => {
    const gw = await startInProcessGateway();
    try {
      const adapters = gw.service(Services.providerAdapters);
      expect(adapters.size).toBeGreaterThan(20);
      for (const [id, adapter] of adapters) {
        expect({ id, pricing: adapter.pricing instanceof URL }).toEqual({ id, pricing: true });
        expect(existsSync(fileURLToPath(adapter.pricing as URL))).toBe(true);
      }
    } finally {
      await gw.close();
    }
  });
});

describe('cost in the request log', () => {
  let gw: Awaited<ReturnType<typeof startInProcessGateway>>;
  let mock: OpenAIMock;
  let anthropic: AnthropicTestServer;
  const openai = catalogueOf('openai');
  const claude = catalogueOf('anthropic');

  beforeAll(async () => {
    // A dated snapshot beside the defaults: priced as its base id. And a fine-tuned model, which no catalogue lists.
    mock = await startOpenAIMock({
      apiKey: null,
      models: [
        ...DEFAULT_MODELS,
        { id: 'gpt-4o-2024-08-06', created: 1722814719, owned_by: 'system', kind: 'chat' },
        { id: UNPRICED, created: 1722814719, owned_by: 'acme', kind: 'chat' },
      ],
    });
    anthropic = startAnthropicServer();
    gw = await startInProcessGateway();
  });
  afterAll(async () => {
    await gw.close();
    await mock.stop();
    anthropic.stop();
  });

  async function rowOf(traceId: string) {
    await gw.service(RequestLogServices.queue).flush();
    const rows = await gw.service(Services.database).select(requestLogs, { where: (c) => eq(c.trace_id, traceId) });
    expect(rows.length).toBe(1);
    return rows[0]!;
  }

  const post = (headers: Record<string, string>, body: unknown) =>
    gw.handle(new Request('http://gateway.test/v1/chat/completions', { method: 'POST', headers, body: JSON.stringify(body) }));

  test('a whole OpenAI answer: cost from the catalogue and the usage, beside the tokens', async () => {
    const traceId = `cost-${crypto.randomUUID()}`;
    const res = await post(providerHeaders(mock.url, { 'x-gateway-trace-id': traceId }), { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'price me please' }] });
    expect(res.status).toBe(200);
    const { usage } = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    const prices = openai.models['gpt-4o-mini'] as ModelPrices;
    const row = await rowOf(traceId);
    expect(row.priced).toBe(true);
    expect(row.prompt_tokens).toBe(usage.prompt_tokens);
    expect(row.cost_cents!).toBeCloseTo(cents(prices.input!, usage.prompt_tokens) + cents(prices.output!, usage.completion_tokens), 10);
  });

  test('a streamed answer is priced from its last usage chunk', async () => {
    const traceId = `cost-${crypto.randomUUID()}`;
    const res = await post(providerHeaders(mock.url, { 'x-gateway-trace-id': traceId }), {
      model: 'gpt-4o-2024-08-06',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'stream and price' }],
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const last = text
      .split('\n')
      .filter((l) => l.startsWith('data: {') && l.includes('"usage":{'))
      .pop();
    const usage = JSON.parse(last!.slice(6)).usage as { prompt_tokens: number; completion_tokens: number };
    const prices = openai.models['gpt-4o'] as ModelPrices; // the dated snapshot matches its base id
    const row = await rowOf(traceId);
    expect(row.priced).toBe(true);
    expect(row.completion_tokens).toBe(usage.completion_tokens);
    expect(row.cost_cents!).toBeCloseTo(cents(prices.input!, usage.prompt_tokens) + cents(prices.output!, usage.completion_tokens), 10);
  });

  test('an unknown model: tokens stored, cost null (not 0), counted as unpriced', async () => {
    const traceId = `cost-${crypto.randomUUID()}`;
    const res = await post(providerHeaders(mock.url, { 'x-gateway-trace-id': traceId }), { model: UNPRICED, messages: [{ role: 'user', content: 'no price' }] });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(openai.models[UNPRICED]).toBeUndefined();
    const row = await rowOf(traceId);
    expect(row.prompt_tokens).toBeGreaterThan(0);
    expect(row.cost_cents).toBeNull();
    expect(row.priced).toBe(false);
  });

  test('Anthropic: cached input tokens at the cache-read price, whole and streamed', async () => {
    const prices = claude.models['claude-sonnet-4-5'] as ModelPrices;
    const headers = (traceId: string) => ({
      'content-type': 'application/json',
      'x-gateway-api-key': providerHeaders('')['x-gateway-api-key']!,
      'x-gateway-provider': 'anthropic',
      'x-gateway-custom-host': anthropic.baseUrl,
      authorization: 'Bearer sk-ant-test',
      'x-gateway-trace-id': traceId,
    });
    for (const stream of [false, true]) {
      const traceId = `cost-${crypto.randomUUID()}`;
      const body = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'cache me' }], ...(stream ? { stream, stream_options: { include_usage: true } } : {}) };
      const res = await post(headers(traceId), body);
      expect(res.status).toBe(200);
      const text = await res.text();
      const usage = (
        stream
          ? JSON.parse(
              text
                .split('\n')
                .filter((l) => l.startsWith('data: {') && l.includes('"usage":{'))
                .pop()!
                .slice(6),
            ).usage
          : JSON.parse(text).usage
      ) as { prompt_tokens: number; completion_tokens: number; prompt_tokens_details: { cached_tokens: number } };
      const cached = usage.prompt_tokens_details.cached_tokens;
      expect(cached).toBeGreaterThan(0);
      const row = await rowOf(traceId);
      expect(row.cache_read_input_tokens).toBe(cached);
      expect(row.priced).toBe(true);
      const expected = cents(prices.input!, usage.prompt_tokens - cached) + cents(prices.cache_read_input!, cached) + cents(prices.output!, usage.completion_tokens);
      expect(row.cost_cents!).toBeCloseTo(expected, 10);
    }
  });
});
