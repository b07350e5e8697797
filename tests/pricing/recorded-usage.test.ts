// Cost from recorded usage, per provider family, on SQLite and MariaDB: the providers answer with a usage taken as
// their APIs document it (OpenAI's cached prompt tokens and reasoning tokens in completion_tokens_details; Anthropic's
// cache reads and cache writes beside input_tokens), and the request log row must hold each kind of token and the
// cost the catalogue file's prices give for them. Then the same OpenAI usage through an integration whose
// `pricing_adjustments` multiplies some kinds: every kind at its price times its multiplier.
// Expected costs are computed from the catalogue files and the recorded usage, never written in by hand.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { eq, type ModelPrices, type PricingCatalogue, Services } from '@gateway/sdk';
import { RequestLogServices, requestLogs } from '@gateway/plugin-request-log';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type AnthropicTestServer, startAnthropicServer } from '../providers/anthropic/server.ts';
import { type Stack, uniqueSlug, useStack } from '../stored-access/support.ts';

const catalogue = (pkg: string): PricingCatalogue =>
  JSON.parse(readFileSync(new URL(`../../providers/${pkg}/pricing.json`, import.meta.url), 'utf8'));
/** Cents of `tokens` at `perMillion` US dollars. */
const cents = (perMillion: number, tokens: number) => (perMillion * tokens) / 10_000;

/** OpenAI's usage of a reasoning answer with a cached prompt prefix, as its API reports it. */
const OPENAI_USAGE = {
  prompt_tokens: 2400,
  completion_tokens: 900,
  total_tokens: 3300,
  prompt_tokens_details: { cached_tokens: 1280, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 640, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};

/** Anthropic's usage of an answer that read one cached block and wrote another. */
const ANTHROPIC_USAGE = { input_tokens: 45, cache_creation_input_tokens: 1500, cache_read_input_tokens: 3000, output_tokens: 120 };

const openaiAnswer = (model: string) => ({
  id: 'chatcmpl-recorded',
  object: 'chat.completion',
  created: 1_760_000_000,
  model,
  choices: [{ index: 0, message: { role: 'assistant', content: 'recorded', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: OPENAI_USAGE,
  system_fingerprint: 'fp_recorded',
});

async function rowOf(s: Stack, traceId: string) {
  await s.gw.service(RequestLogServices.queue).flush();
  const rows = await s.gw.service(Services.database).select(requestLogs, { where: (c) => eq(c.trace_id, traceId) });
  expect(rows.length).toBe(1);
  return rows[0]!;
}

for (const dialect of E2E_DIALECTS) {
  describe(`cost from recorded usage [${dialect}]`, () => {
    const get = useStack(dialect);
    let anthropic: AnthropicTestServer;
    beforeAll(() => {
      anthropic = startAnthropicServer({
        respond: (body) =>
          Response.json({
            id: 'msg_recorded',
            type: 'message',
            role: 'assistant',
            model: body.model,
            content: [{ type: 'text', text: 'recorded' }],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: ANTHROPIC_USAGE,
          }),
      });
    });
    afterAll(() => anthropic.stop());

    const openai = catalogue('openai').models['gpt-4o-mini'] as ModelPrices;
    const claude = catalogue('anthropic').models['claude-sonnet-4-5'] as ModelPrices;

    test('OpenAI: cached prompt tokens at the cache-read price, reasoning tokens priced as output', async () => {
      const s = get();
      s.mock.enqueue({ kind: 'respond', body: openaiAnswer('gpt-4o-mini') });
      const traceId = `recorded-${crypto.randomUUID()}`;
      const res = await s.chat({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': s.mock.url, authorization: 'Bearer sk-test', 'x-gateway-trace-id': traceId });
      expect(res.status).toBe(200);
      const row = await rowOf(s, traceId);
      const { cached_tokens } = OPENAI_USAGE.prompt_tokens_details;
      const { reasoning_tokens } = OPENAI_USAGE.completion_tokens_details;
      expect({ prompt: row.prompt_tokens, completion: row.completion_tokens, cacheRead: row.cache_read_input_tokens, reasoning: row.reasoning_tokens, priced: row.priced }).toEqual({
        prompt: OPENAI_USAGE.prompt_tokens,
        completion: OPENAI_USAGE.completion_tokens,
        cacheRead: cached_tokens,
        reasoning: reasoning_tokens,
        priced: true,
      });
      // The catalogue has no reasoning price for this model: reasoning tokens are output tokens (PRICE_FALLBACK).
      expect(openai.reasoning).toBeUndefined();
      const expected =
        cents(openai.input!, OPENAI_USAGE.prompt_tokens - cached_tokens) + cents(openai.cache_read_input!, cached_tokens) + cents(openai.output!, OPENAI_USAGE.completion_tokens);
      expect(row.cost_cents!).toBeCloseTo(expected, 10);
    });

    test('Anthropic: cache writes at the cache-write price, cache reads at the cache-read price', async () => {
      const s = get();
      const traceId = `recorded-${crypto.randomUUID()}`;
      const res = await s.chat(
        { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': anthropic.baseUrl, authorization: 'Bearer sk-ant-test', 'x-gateway-trace-id': traceId },
        { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'cache me' }] },
      );
      expect(res.status).toBe(200);
      const u = ANTHROPIC_USAGE;
      const row = await rowOf(s, traceId);
      expect({ prompt: row.prompt_tokens, completion: row.completion_tokens, cacheRead: row.cache_read_input_tokens, cacheWrite: row.cache_write_input_tokens, priced: row.priced }).toEqual({
        prompt: u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens,
        completion: u.output_tokens,
        cacheRead: u.cache_read_input_tokens,
        cacheWrite: u.cache_creation_input_tokens,
        priced: true,
      });
      const expected =
        cents(claude.input!, u.input_tokens) +
        cents(claude.cache_write_input!, u.cache_creation_input_tokens) +
        cents(claude.cache_read_input!, u.cache_read_input_tokens) +
        cents(claude.output!, u.output_tokens);
      expect(row.cost_cents!).toBeCloseTo(expected, 10);
    });

    test('an integration’s pricing_adjustments multiply each kind of token on top of the catalogue price', async () => {
      const s = get();
      const slug = uniqueSlug('priced');
      const multiplier = { request_token: 2, response_token: 0.5, cache_read_input_token: 4, reasoning_token: 3 };
      const created = await s.admin('POST', '/integrations', {
        name: 'Priced OpenAI',
        slug,
        ai_provider_id: 'openai',
        key: 'sk-priced-integration-0001',
        configurations: { custom_host: s.mock.url },
        pricing_adjustments: { multiplier },
        workspaces: [{ id: s.defaultWorkspace, enabled: true }],
      });
      expect(created.status).toBe(201);
      s.mock.enqueue({ kind: 'respond', body: openaiAnswer('gpt-4o-mini') });
      const traceId = `recorded-${crypto.randomUUID()}`;
      const res = await s.chat({ 'x-gateway-provider': `@${slug}`, 'x-gateway-trace-id': traceId });
      expect(res.status).toBe(200);
      const row = await rowOf(s, traceId);
      const { cached_tokens } = OPENAI_USAGE.prompt_tokens_details;
      const { reasoning_tokens } = OPENAI_USAGE.completion_tokens_details;
      const expected =
        cents(openai.input!, OPENAI_USAGE.prompt_tokens - cached_tokens) * multiplier.request_token +
        cents(openai.cache_read_input!, cached_tokens) * multiplier.cache_read_input_token +
        cents(openai.output!, OPENAI_USAGE.completion_tokens - reasoning_tokens) * multiplier.response_token +
        cents(openai.output!, reasoning_tokens) * multiplier.reasoning_token;
      expect(row.priced).toBe(true);
      expect(row.cost_cents!).toBeCloseTo(expected, 10);
    });
  });
}
