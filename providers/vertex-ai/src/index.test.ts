import { expect, test } from 'bun:test';
import type { JsonObject, ProviderCall, TargetConfig, TranslateContext } from '@gateway/sdk';
import { vertexAi, vertexBaseUrl } from './index.ts';

const target: TargetConfig = { provider: 'vertex-ai', svcC_project_id: 'proj', svcC_region: 'us-east5' };
const ctx = (model: string, over: Partial<TranslateContext> = {}): TranslateContext => ({ endpoint: 'chatComplete', model, strictWireCompliance: true, now: 5, ...over });
const chat = vertexAi.endpoints.chatComplete!;

test('base URL from the region; global has no prefix', () => {
  expect(vertexBaseUrl(target)).toBe('https://us-east5-aiplatform.googleapis.com');
  expect(vertexBaseUrl({ svcC_region: 'global' })).toBe('https://aiplatform.googleapis.com');
  expect(vertexBaseUrl({})).toBe('https://us-central1-aiplatform.googleapis.com');
  expect(() => vertexBaseUrl({ svcC_region: 'evil.com/x?' })).toThrow();
});

test('Gemini paths: generateContent, streamGenerateContent with alt=sse, predict for embeddings', () => {
  const base = '/v1/projects/proj/locations/us-east5/publishers/google/models/gemini-2.5-flash';
  expect(chat.path(target, { model: 'gemini-2.5-flash' }, ctx('gemini-2.5-flash'))).toBe(`${base}:generateContent`);
  expect(chat.path(target, { model: 'gemini-2.5-flash', stream: true }, ctx('gemini-2.5-flash'))).toBe(`${base}:streamGenerateContent?alt=sse`);
  expect(vertexAi.endpoints.embed!.path(target, { model: 'text-embedding-005' }, ctx('text-embedding-005'))).toBe(
    '/v1/projects/proj/locations/us-east5/publishers/google/models/text-embedding-005:predict',
  );
  expect(() => vertexAi.endpoints.embed!.path(target, { model: 'anthropic.claude' }, ctx('x'))).toThrow('embeddings');
});

test('Anthropic paths: rawPredict and streamRawPredict, with the Vertex body', () => {
  const model = 'anthropic.claude-sonnet-4-5@20250929';
  const base = '/v1/projects/proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929';
  expect(chat.path(target, { model }, ctx(model))).toBe(`${base}:rawPredict`);
  expect(chat.path(target, { model, stream: true }, ctx(model))).toBe(`${base}:streamRawPredict`);
  const wire = chat.request!({ model, messages: [{ role: 'user', content: 'Hi' }] }, target, ctx(model));
  expect(wire.anthropic_version).toBe('vertex-2023-10-16');
  expect(wire.model).toBeUndefined();
  expect(wire.messages).toEqual([{ role: 'user', content: 'Hi' }]);
});

test('a Gemini body for Gemini models; other publishers are refused', () => {
  const wire = chat.request!({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }] }, target, ctx('gemini-2.5-flash'));
  expect(wire).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
  expect(() => chat.path(target, { model: 'publishers/meta/models/llama-4' }, ctx('x'))).toThrow('not supported');
});

test('the answer side picks the translator from the model the client asked for', () => {
  const gemini = chat.response!({ candidates: [{ content: { parts: [{ text: 'G' }] }, finishReason: 'STOP' }] }, ctx('gemini-2.5-flash'));
  expect(((gemini.choices as JsonObject[])[0]?.message as JsonObject).content).toBe('G');
  const claude = chat.response!(
    { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [{ type: 'text', text: 'A' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } },
    ctx('anthropic.claude-sonnet-4-5'),
  );
  expect(((claude.choices as JsonObject[])[0]?.message as JsonObject).content).toBe('A');
  expect(() => chat.response!({ candidates: [] , nonsense: 1 }, ctx('anthropic.claude'))).toThrow();
});

test('errors: Google’s body and Anthropic’s', () => {
  expect(vertexAi.error!({ error: { code: 403, message: 'Permission denied', status: 'PERMISSION_DENIED' } }, 403)?.message).toBe('Permission denied');
  expect(vertexAi.error!([{ error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } }], 429)?.type).toBe('rate_limit_error');
  expect(vertexAi.error!({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 529)).toMatchObject({ message: 'Overloaded', type: 'overloaded_error' });
});

test('without a service account, a given key is the bearer token', async () => {
  const call: ProviderCall = { url: 'https://x', method: 'POST', headers: {} };
  expect((await vertexAi.authorize(call, { api_key: 'ya29.given' })).headers.authorization).toBe('Bearer ya29.given');
  expect(await vertexAi.authorize(call, {})).toBe(call);
  const bad = await Promise.resolve(vertexAi.authorize(call, { svcC_service_account_json: { client_email: 'x' } })).catch((e: unknown) => e);
  expect((bad as { status: number }).status).toBe(400);
});
