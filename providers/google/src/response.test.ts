import { describe, expect, test } from 'bun:test';
import type { JsonObject, TranslateContext } from '@gateway/sdk';
import { finishReason, fromGeminiResponse, geminiError, geminiUsage, streamError } from './response.ts';

const ctx: TranslateContext = { endpoint: 'chatComplete', model: 'gemini-2.5-flash', strictWireCompliance: true, now: 1700000000 };
const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 3, cachedContentTokenCount: 4, totalTokenCount: 18 };

describe('fromGeminiResponse', () => {
  test('a text answer', () => {
    const out = fromGeminiResponse(
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Hello ' }, { text: 'there' }] }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: 'gemini-2.5-flash-001', responseId: 'r1' },
      ctx,
    );
    expect(out).toEqual({
      id: 'chatcmpl-r1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'gemini-2.5-flash',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop', logprobs: null }],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 8,
        total_tokens: 18,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 3 },
      },
    });
  });

  test('function calls become tool_calls with stable ids and the thought signature; finish tool_calls', () => {
    const json = {
      responseId: 'r2',
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig' },
              { functionCall: { name: 'get_time', args: { city: 'Rome' } } },
              { functionCall: { id: 'own-id', name: 'noop' } },
            ],
          },
          finishReason: 'STOP',
        },
      ],
    };
    const a = fromGeminiResponse(json, ctx);
    const b = fromGeminiResponse(json, ctx);
    const message = (a.choices as JsonObject[])[0]?.message as JsonObject;
    expect(message.content).toBeNull();
    expect(message.tool_calls).toEqual([
      { id: 'call_r2_0_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'sig' } } },
      { id: 'call_r2_0_1', type: 'function', function: { name: 'get_time', arguments: '{"city":"Rome"}' } },
      { id: 'own-id', type: 'function', function: { name: 'noop', arguments: '{}' } },
    ]);
    expect((a.choices as JsonObject[])[0]?.finish_reason).toBe('tool_calls');
    expect(b).toEqual(a);
    expect(a.usage).toBeUndefined();
  });

  test('several candidates become several choices', () => {
    const out = fromGeminiResponse(
      {
        candidates: [
          { index: 0, content: { parts: [{ text: 'a' }] }, finishReason: 'STOP' },
          { index: 1, content: { parts: [{ text: 'b' }] }, finishReason: 'MAX_TOKENS' },
        ],
      },
      ctx,
    );
    expect((out.choices as JsonObject[]).map((c) => [c.index, (c.message as JsonObject).content, c.finish_reason])).toEqual([
      [0, 'a', 'stop'],
      [1, 'b', 'length'],
    ]);
    expect(String(out.id)).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
  });

  test('thoughts are hidden under strict wire compliance, shown as reasoning_content otherwise', () => {
    const json = { candidates: [{ content: { parts: [{ text: 'hmm', thought: true }, { text: 'Answer' }] }, finishReason: 'STOP' }] };
    expect((fromGeminiResponse(json, ctx).choices as JsonObject[])[0]?.message).toEqual({ role: 'assistant', content: 'Answer' });
    expect((fromGeminiResponse(json, { ...ctx, strictWireCompliance: false }).choices as JsonObject[])[0]?.message).toEqual({
      role: 'assistant',
      content: 'Answer',
      reasoning_content: 'hmm',
      content_blocks: [{ type: 'thinking', thinking: 'hmm' }, { type: 'text', text: 'Answer' }],
    });
  });

  test('a blocked prompt is one empty choice finished by the content filter', () => {
    const out = fromGeminiResponse({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } }, ctx);
    expect(out.choices).toEqual([{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter', logprobs: null }]);
    expect((out.usage as JsonObject).prompt_tokens).toBe(3);
  });

  test('logprobs', () => {
    const out = fromGeminiResponse(
      {
        candidates: [
          {
            content: { parts: [{ text: 'Hi' }] },
            finishReason: 'STOP',
            logprobsResult: {
              chosenCandidates: [{ token: 'Hi', logProbability: -0.1 }],
              topCandidates: [{ candidates: [{ token: 'Hi', logProbability: -0.1 }, { token: 'Hey', logProbability: -2.5 }] }],
            },
          },
        ],
      },
      ctx,
    );
    expect((out.choices as JsonObject[])[0]?.logprobs).toEqual({
      content: [
        {
          token: 'Hi',
          logprob: -0.1,
          bytes: [72, 105],
          top_logprobs: [
            { token: 'Hi', logprob: -0.1, bytes: [72, 105] },
            { token: 'Hey', logprob: -2.5, bytes: [72, 101, 121] },
          ],
        },
      ],
    });
  });

  test('anything that is not a generateContent answer throws (the core answers 502)', () => {
    expect(() => fromGeminiResponse('text', ctx)).toThrow();
    expect(() => fromGeminiResponse([], ctx)).toThrow();
    expect(() => fromGeminiResponse({ hello: 'world' }, ctx)).toThrow();
    expect(() => fromGeminiResponse({ candidates: 'x' }, ctx)).toThrow();
  });
});

test('finish reasons', () => {
  expect(finishReason('STOP', false)).toBe('stop');
  expect(finishReason('STOP', true)).toBe('tool_calls');
  expect(finishReason('MAX_TOKENS', true)).toBe('length');
  for (const r of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII']) expect(finishReason(r, false)).toBe('content_filter');
  expect(finishReason('MALFORMED_FUNCTION_CALL', false)).toBe('stop');
  expect(finishReason('OTHER', false)).toBe('stop');
  expect(finishReason(undefined, false)).toBe('stop');
});

test('usage: thoughts count inside completion tokens, tool-use prompt inside prompt tokens', () => {
  expect(geminiUsage({ promptTokenCount: 7, toolUsePromptTokenCount: 2, candidatesTokenCount: 4 })).toEqual({
    prompt_tokens: 9,
    completion_tokens: 4,
    total_tokens: 13,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  });
  expect(geminiUsage(undefined)).toBeUndefined();
});

test('errors: Google’s body, bare or in an array', () => {
  const body = { error: { code: 400, message: 'API key not valid.', status: 'INVALID_ARGUMENT' } };
  expect(geminiError(body)).toEqual({ message: 'API key not valid.', type: 'invalid_request_error', code: 'INVALID_ARGUMENT', param: null });
  expect(geminiError([body])).toEqual(geminiError(body));
  expect(geminiError({ error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED' } })?.type).toBe('rate_limit_error');
  expect(geminiError({ error: { code: 500, message: 'boom' } })).toEqual({ message: 'boom', type: 'provider_error', code: '500', param: null });
  expect(geminiError({ nothing: true })).toBeUndefined();
  const err = streamError('google', { error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } }) as unknown as { status: number; message: string };
  expect(err.status).toBe(503);
  expect(err.message).toBe('overloaded');
});
