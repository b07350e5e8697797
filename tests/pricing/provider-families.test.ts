// Cost per provider family from recorded usage, on SQLite and MariaDB, in exact cents from the catalogue's figures:
// each local server answers with a usage as the provider's API documents it (OpenAI's cached prompt and reasoning
// tokens; Anthropic's cache reads and writes with the 1-hour part in cache_creation, whole and streamed, translated
// to chat completions and through the native Messages API; Gemini's usageMetadata with cached content and thoughts;
// Bedrock Converse's cache read/write counts; Groq's OpenAI-shaped usage), and the request log row must hold the
// tokens and the cost worked out below by hand. The catalogue entry each test relies on is pinned first, so a refresh
// that changes a price fails here and names the model (update the figures and the arithmetic together). Then
// pricing_adjustments multipliers on an Anthropic and a Groq integration.

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { eq, type PricingCatalogue, Services } from '@gateway/sdk';
import { RequestLogServices, requestLogs } from '@gateway/plugin-request-log';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type MockServer, startMockServer } from '../mocks/harness.ts';
import { type Stack, TEST_ADMIN_KEY, uniqueSlug, useStack } from '../stored-access/support.ts';

const pricesOf = (pkg: string, model: string) =>
  (JSON.parse(readFileSync(new URL(`../../providers/${pkg}/pricing.json`, import.meta.url), 'utf8')) as PricingCatalogue).models[model];

async function rowOf(s: Stack, traceId: string) {
  await s.gw.service(RequestLogServices.queue).flush();
  const rows = await s.gw.service(Services.database).select(requestLogs, { where: (c) => eq(c.trace_id, traceId) });
  expect(rows.length).toBe(1);
  return rows[0]!;
}

const trace = () => `family-${crypto.randomUUID()}`;

// ---- recorded answers ------------------------------------------------------------------------------------------

/** OpenAI (o4-mini): 2400 prompt tokens of which 1280 cached, 900 completion tokens of which 640 reasoning. */
const OPENAI_USAGE = {
  prompt_tokens: 2400,
  completion_tokens: 900,
  total_tokens: 3300,
  prompt_tokens_details: { cached_tokens: 1280, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 640, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};

/** Groq (openai/gpt-oss-120b): 5000 prompt tokens of which 4096 cached, 1200 completion tokens of which 800 reasoning. */
const GROQ_USAGE = {
  prompt_tokens: 5000,
  completion_tokens: 1200,
  total_tokens: 6200,
  prompt_tokens_details: { cached_tokens: 4096 },
  completion_tokens_details: { reasoning_tokens: 800 },
};

const openaiAnswer = (model: string, usage: object) => ({
  id: 'chatcmpl-recorded',
  object: 'chat.completion',
  created: 1_760_000_000,
  model,
  choices: [{ index: 0, message: { role: 'assistant', content: 'recorded', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage,
});

/** Anthropic (claude-sonnet-4-5): 45 plain input, 3000 read from the cache, 1500 written (500 for 5 minutes, 1000 for an hour). */
const ANTHROPIC_USAGE = {
  input_tokens: 45,
  cache_read_input_tokens: 3000,
  cache_creation_input_tokens: 1500,
  cache_creation: { ephemeral_5m_input_tokens: 500, ephemeral_1h_input_tokens: 1000 },
  output_tokens: 120,
};

function anthropicAnswer(body: Record<string, unknown>): Response {
  const message = { id: 'msg_recorded', type: 'message', role: 'assistant', model: body.model, stop_reason: null, stop_sequence: null };
  if (body.stream !== true)
    return Response.json({ ...message, content: [{ type: 'text', text: 'recorded' }], stop_reason: 'end_turn', usage: ANTHROPIC_USAGE });
  // As Anthropic streams it: the input counts at message_start, the output count in message_delta.
  const events: [string, object][] = [
    ['message_start', { type: 'message_start', message: { ...message, content: [], usage: { ...ANTHROPIC_USAGE, output_tokens: 1 } } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'recorded' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: ANTHROPIC_USAGE.output_tokens } }],
    ['message_stop', { type: 'message_stop' }],
  ];
  return new Response(events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(''), {
    headers: { 'content-type': 'text/event-stream; charset=utf-8' },
  });
}

/** Gemini (gemini-2.5-flash): 2000 prompt tokens of which 1500 cached content, 300 candidate tokens and 700 of thoughts. */
const GEMINI_USAGE = { promptTokenCount: 2000, cachedContentTokenCount: 1500, candidatesTokenCount: 300, thoughtsTokenCount: 700, totalTokenCount: 3000 };
const geminiAnswer = () =>
  Response.json({
    candidates: [{ content: { role: 'model', parts: [{ text: 'recorded' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: GEMINI_USAGE,
    modelVersion: 'gemini-2.5-flash',
    responseId: 'recorded',
  });

/** Bedrock Converse (Claude Sonnet 4.5 through the US inference profile): inputTokens excludes the cache counts. */
const BEDROCK_USAGE = { inputTokens: 45, outputTokens: 120, totalTokens: 4665, cacheReadInputTokens: 3000, cacheWriteInputTokens: 1500 };
const BEDROCK_MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const bedrockAnswer = () =>
  Response.json({ output: { message: { role: 'assistant', content: [{ text: 'recorded' }] } }, stopReason: 'end_turn', usage: BEDROCK_USAGE, metrics: { latencyMs: 10 } });

// ---- the catalogue figures the expected cents are worked out from (USD per 1M tokens) ---------------------------

const FIGURES = {
  openai: ['openai', 'o4-mini', { input: 1.1, cache_read_input: 0.275, output: 4.4 }],
  anthropic: ['anthropic', 'claude-sonnet-4-5', { input: 3, cache_read_input: 0.3, cache_write_input: 3.75, cache_write_input_1h: 6, output: 15 }],
  google: ['google', 'gemini-2.5-flash', { input: 0.3, cache_read_input: 0.03, audio_input: 1, output: 2.5, reasoning: 2.5 }],
  bedrock: ['bedrock', BEDROCK_MODEL, { input: 3.3, cache_read_input: 0.33, cache_write_input: 4.125, cache_write_input_1h: 6.6, output: 16.5 }],
  groq: ['groq', 'openai/gpt-oss-120b', { input: 0.15, cache_read_input: 0.075, output: 0.6 }],
} as const;

test('the catalogue figures these tests are worked out from', () => {
  for (const [pkg, model, figures] of Object.values(FIGURES)) expect({ pkg, model, prices: pricesOf(pkg, model) }).toEqual({ pkg, model, prices: figures });
});

for (const dialect of E2E_DIALECTS) {
  describe(`cost per provider family from recorded usage [${dialect}]`, () => {
    const get = useStack(dialect);
    let anthropic: MockServer;
    let gemini: MockServer;
    let bedrock: MockServer;
    let groq: MockServer;
    beforeAll(() => {
      anthropic = startMockServer({ handle: ({ text }) => anthropicAnswer(JSON.parse(text)) });
      gemini = startMockServer({ handle: () => geminiAnswer() });
      bedrock = startMockServer({ handle: () => bedrockAnswer() });
      groq = startMockServer({ handle: ({ text }) => Response.json(openaiAnswer(JSON.parse(text).model, GROQ_USAGE)) });
    });
    afterAll(() => {
      for (const server of [anthropic, gemini, bedrock, groq]) server.stop();
    });

    const anthropicHeaders = (traceId: string) => ({
      'x-gateway-provider': 'anthropic',
      'x-gateway-custom-host': anthropic.url,
      authorization: 'Bearer sk-ant-test',
      'x-gateway-trace-id': traceId,
    });
    const claudeBody = (stream: boolean) => ({ model: 'claude-sonnet-4-5', max_tokens: 64, stream, messages: [{ role: 'user', content: 'cache me for an hour' }] });

    test('OpenAI: cached prompt tokens at the cache-read price, reasoning tokens at the output price', async () => {
      const s = get();
      s.mock.enqueue({ kind: 'respond', body: openaiAnswer('o4-mini', OPENAI_USAGE) });
      const traceId = trace();
      const res = await s.chat({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': s.mock.url, authorization: 'Bearer sk-test', 'x-gateway-trace-id': traceId }, {
        model: 'o4-mini',
        messages: [{ role: 'user', content: 'think' }],
      });
      expect(res.status).toBe(200);
      const row = await rowOf(s, traceId);
      expect([row.prompt_tokens, row.cache_read_input_tokens, row.completion_tokens, row.reasoning_tokens, row.priced]).toEqual([2400, 1280, 900, 640, true]);
      // (1120 × 1.1 + 1280 × 0.275 + 900 × 4.4) / 10,000 = (1232 + 352 + 3960) / 10,000
      expect(row.cost_cents!).toBeCloseTo(0.5544, 10);
    });

    test('Anthropic: cache reads, 5-minute and 1-hour cache writes each at their price, whole and streamed', async () => {
      const s = get();
      for (const stream of [false, true]) {
        const traceId = trace();
        // Not through s.chat, which reads the answer as JSON: a stream is read to its end as text.
        const res = await s.gw.handle(
          new Request('http://gateway/v1/chat/completions', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, ...anthropicHeaders(traceId) },
            body: JSON.stringify(claudeBody(stream)),
          }),
        );
        expect(res.status).toBe(200);
        expect(await res.text()).toContain(stream ? 'data: [DONE]' : '"recorded"');
        const row = await rowOf(s, traceId);
        expect({ stream, tokens: [row.prompt_tokens, row.cache_read_input_tokens, row.cache_write_input_tokens, row.completion_tokens], priced: row.priced }).toEqual({
          stream,
          tokens: [4545, 3000, 1500, 120],
          priced: true,
        });
        // (45 × 3 + 3000 × 0.3 + 500 × 3.75 + 1000 × 6 + 120 × 15) / 10,000 = (135 + 900 + 1875 + 6000 + 1800) / 10,000
        expect(row.cost_cents!).toBeCloseTo(1.071, 10);
      }
    });

    test("Anthropic's Messages API natively (passthrough): the prompt is input + cache reads + writes, priced as above, whole and streamed", async () => {
      const s = get();
      for (const stream of [false, true]) {
        const traceId = trace();
        const res = await s.gw.handle(
          new Request('http://gateway/v1/messages', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'anthropic-version': '2023-06-01', ...anthropicHeaders(traceId) },
            body: JSON.stringify(claudeBody(stream)),
          }),
        );
        expect(res.status).toBe(200);
        // The provider's own bytes: Anthropic's usage as it sent it (input_tokens without the cache counts).
        expect(await res.text()).toContain(stream ? 'event: message_stop' : '"input_tokens":45');
        const row = await rowOf(s, traceId);
        expect({ stream, endpoint: row.endpoint, tokens: [row.prompt_tokens, row.cache_read_input_tokens, row.cache_write_input_tokens, row.completion_tokens], priced: row.priced }).toEqual({
          stream,
          endpoint: 'messages',
          tokens: [4545, 3000, 1500, 120],
          priced: true,
        });
        // (45 × 3 + 3000 × 0.3 + 500 × 3.75 + 1000 × 6 + 120 × 15) / 10,000 = (135 + 900 + 1875 + 6000 + 1800) / 10,000.
        // Before, the prompt was taken as 45, so the input priced was 45 − 3000 − 1500 → 0: 0.9 cents less than the bill.
        expect(row.cost_cents!).toBeCloseTo(1.071, 10);
      }
    });

    test('Google Gemini: cached content at the cache-read price, thoughts at the reasoning price', async () => {
      const s = get();
      const traceId = trace();
      const res = await s.chat(
        { 'x-gateway-provider': 'google', 'x-gateway-custom-host': gemini.url, authorization: 'Bearer gemini-test-key', 'x-gateway-trace-id': traceId },
        { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'think' }] },
      );
      expect(res.status).toBe(200);
      const row = await rowOf(s, traceId);
      expect([row.prompt_tokens, row.cache_read_input_tokens, row.completion_tokens, row.reasoning_tokens, row.priced]).toEqual([2000, 1500, 1000, 700, true]);
      // (500 × 0.3 + 1500 × 0.03 + 300 × 2.5 + 700 × 2.5) / 10,000 = (150 + 45 + 750 + 1750) / 10,000
      expect(row.cost_cents!).toBeCloseTo(0.2695, 10);
    });

    test('Bedrock: an inference profile id priced with its cache reads and writes', async () => {
      const s = get();
      const traceId = trace();
      const config = { provider: 'bedrock', svcA_access_key_id: 'AKIDFAMILYTEST00001', svcA_secret_access_key: 'family/test+secret', svcA_region: 'us-east-1', custom_host: bedrock.url };
      const res = await s.chat({ 'x-gateway-config': JSON.stringify(config), 'x-gateway-trace-id': traceId }, { model: BEDROCK_MODEL, messages: [{ role: 'user', content: 'cache me' }] });
      expect(res.status).toBe(200);
      const row = await rowOf(s, traceId);
      expect([row.provider, row.prompt_tokens, row.cache_read_input_tokens, row.cache_write_input_tokens, row.completion_tokens, row.priced]).toEqual(['bedrock', 4545, 3000, 1500, 120, true]);
      // (45 × 3.3 + 3000 × 0.33 + 1500 × 4.125 + 120 × 16.5) / 10,000 = (148.5 + 990 + 6187.5 + 1980) / 10,000
      expect(row.cost_cents!).toBeCloseTo(0.9306, 10);
    });

    test('Groq (OpenAI-compatible): cached prompt tokens and reasoning tokens', async () => {
      const s = get();
      const traceId = trace();
      const res = await s.chat(
        { 'x-gateway-provider': 'groq', 'x-gateway-custom-host': groq.url, authorization: 'Bearer gsk-test', 'x-gateway-trace-id': traceId },
        { model: 'openai/gpt-oss-120b', messages: [{ role: 'user', content: 'think' }] },
      );
      expect(res.status).toBe(200);
      const row = await rowOf(s, traceId);
      expect([row.provider, row.prompt_tokens, row.cache_read_input_tokens, row.completion_tokens, row.reasoning_tokens, row.priced]).toEqual(['groq', 5000, 4096, 1200, 800, true]);
      // (904 × 0.15 + 4096 × 0.075 + 1200 × 0.6) / 10,000 = (135.6 + 307.2 + 720) / 10,000
      expect(row.cost_cents!).toBeCloseTo(0.11628, 10);
    });

    async function integration(s: Stack, provider: string, customHost: string, key: string, multiplier: Record<string, number>): Promise<string> {
      const slug = uniqueSlug(`family-${provider}`);
      const created = await s.admin('POST', '/integrations', {
        name: `Priced ${provider}`,
        slug,
        ai_provider_id: provider,
        key,
        configurations: { custom_host: customHost },
        pricing_adjustments: { multiplier },
        workspaces: [{ id: s.defaultWorkspace, enabled: true }],
      });
      expect(created.status).toBe(201);
      return slug;
    }

    test('pricing_adjustments on an Anthropic integration: the cache-write multiplier scales 5-minute and 1-hour writes', async () => {
      const s = get();
      const slug = await integration(s, 'anthropic', anthropic.url, 'sk-ant-integration-0001', { request_token: 1.5, cache_write_input_token: 2 });
      const traceId = trace();
      const res = await s.chat({ 'x-gateway-provider': `@${slug}`, 'x-gateway-trace-id': traceId }, claudeBody(false));
      expect(res.status).toBe(200);
      const row = await rowOf(s, traceId);
      expect(row.priced).toBe(true);
      // (45 × 3 × 1.5 + 3000 × 0.3 + (500 × 3.75 + 1000 × 6) × 2 + 120 × 15) / 10,000 = (202.5 + 900 + 15750 + 1800) / 10,000
      expect(row.cost_cents!).toBeCloseTo(1.86525, 10);
    });

    test('pricing_adjustments on a Groq integration: input, cache read, output and reasoning each scaled', async () => {
      const s = get();
      const slug = await integration(s, 'groq', groq.url, 'gsk-integration-0001', { request_token: 2, cache_read_input_token: 0.5, response_token: 3, reasoning_token: 4 });
      const traceId = trace();
      const res = await s.chat({ 'x-gateway-provider': `@${slug}`, 'x-gateway-trace-id': traceId }, { model: 'openai/gpt-oss-120b', messages: [{ role: 'user', content: 'think' }] });
      expect(res.status).toBe(200);
      const row = await rowOf(s, traceId);
      // (904 × 0.15 × 2 + 4096 × 0.075 × 0.5 + 400 × 0.6 × 3 + 800 × 0.6 × 4) / 10,000 = (271.2 + 153.6 + 720 + 1920) / 10,000
      expect(row.cost_cents!).toBeCloseTo(0.30648, 10);
    });
  });
}
