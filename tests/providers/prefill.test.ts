// Which adapters continue a broken stream with a prefill (issue #15, docs/streaming.md, "Which providers take a
// prefill"), and the wire form each one's request translator gives the partial answer.
import { describe, expect, test } from 'bun:test';
import { anthropic } from '../../providers/anthropic/src/index.ts';
import { bedrock } from '../../providers/bedrock/src/index.ts';
import { provider as mistral } from '../../providers/mistral-ai/src/index.ts';
import { openai } from '../../providers/openai/src/index.ts';
import { vertexAi } from '../../providers/vertex-ai/src/index.ts';
import { provider as vllm } from '../../providers/vllm/src/index.ts';
import type { JsonObject, ProviderAdapter, TargetConfig, TranslateContext } from '@gateway/sdk';

const body = (model: string): JsonObject => ({ model, messages: [{ role: 'user', content: 'Tell me a story' }], stream: true });
const ctx = (model: string): TranslateContext => ({ endpoint: 'chatComplete', model, strictWireCompliance: true, now: 0 });
const target: TargetConfig = { svcC_project_id: 'p', svcC_region: 'us-east5' } as TargetConfig;

/** The adapter's prefill for `model` and `text`, and its request translation (or the body, for OpenAI wire). */
function prefilled(adapter: ProviderAdapter, model: string, text: string) {
  const chat = adapter.endpoints.chatComplete!;
  const p = chat.prefill?.(body(model), text, target);
  if (!p) return undefined;
  return { prefilled: p.prefilled, wire: chat.request ? chat.request(p.body, target, ctx(model)) : p.body };
}
const last = (wire: JsonObject) => (wire.messages as JsonObject[]).at(-1);

describe('prefill declarations', () => {
  test('anthropic: a trailing assistant message without its trailing whitespace', () => {
    const p = prefilled(anthropic, 'claude-sonnet-4-5', 'Once upon a ')!;
    expect(p.prefilled).toBe('Once upon a');
    expect(last(p.wire)).toEqual({ role: 'assistant', content: 'Once upon a' });
  });

  test('vertex-ai: Claude models as on Anthropic; Gemini models regenerate', () => {
    const p = prefilled(vertexAi, 'anthropic.claude-sonnet-4-5', 'Once upon a ')!;
    expect(p.prefilled).toBe('Once upon a');
    expect(last(p.wire)).toEqual({ role: 'assistant', content: 'Once upon a' });
    expect(prefilled(vertexAi, 'gemini-2.0-flash', 'Once')).toBeUndefined();
  });

  test('bedrock: Claude models a trailing assistant turn through Converse; other families regenerate', () => {
    const p = prefilled(bedrock, 'us.anthropic.claude-3-5-sonnet-20240620-v1:0', 'Once upon a ')!;
    expect(p.prefilled).toBe('Once upon a');
    expect(last(p.wire)).toEqual({ role: 'assistant', content: [{ text: 'Once upon a' }] });
    expect(prefilled(bedrock, 'meta.llama3-70b-instruct-v1:0', 'Once')).toBeUndefined();
  });

  test('mistral-ai: an assistant message marked prefix: true, whitespace kept', () => {
    const p = prefilled(mistral, 'mistral-large-latest', 'Once upon a ')!;
    expect(p.prefilled).toBe('Once upon a ');
    expect(last(p.wire)).toEqual({ role: 'assistant', content: 'Once upon a ', prefix: true });
  });

  test('vllm: continue_final_message and no new generation prompt', () => {
    const p = prefilled(vllm, 'meta-llama/Llama-3.1-8B-Instruct', 'Once upon a ')!;
    expect(last(p.wire)).toEqual({ role: 'assistant', content: 'Once upon a ' });
    expect(p.wire.continue_final_message).toBe(true);
    expect(p.wire.add_generation_prompt).toBe(false);
  });

  test('openai declares none (a trailing assistant message is not continued there): regenerate', () => {
    expect(openai.endpoints.chatComplete?.prefill).toBeUndefined();
  });

  test('an empty partial answer is no prefill', () => {
    expect(prefilled(anthropic, 'claude-sonnet-4-5', '   ')).toBeUndefined();
    expect(prefilled(mistral, 'mistral-large-latest', '')).toBeUndefined();
  });
});
