/**
 * Claude's extended thinking on Bedrock (issue #19, item 5): `thinking` in a chat request to a Claude model goes to
 * Converse in `additionalModelRequestFields` (with maxTokens above the budget when the client set none), and the
 * reasoning comes back as the anthropic provider gives it: `reasoning_content`, and `content_blocks` with the signed
 * thinking block, which a later turn hands back as a reasoning block. As for the anthropic provider, only with
 * strict_wire_compliance false. Against the local Bedrock server (SigV4-checked, Converse and the event-stream bytes).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../../helpers/in-process.ts';
import { type BedrockServer, KEY, REGION, startBedrockServer } from './server.ts';

const CLAUDE = 'us.anthropic.claude-3-7-sonnet-20250219-v1:0';
const LLAMA = 'meta.llama3-1-70b-instruct-v1:0';
const THINKING = { type: 'enabled', budget_tokens: 2048 };

let gateway: Gateway;
let bedrock: BedrockServer;
beforeAll(async () => {
  gateway = await startInProcessGateway();
  bedrock = await startBedrockServer();
});
afterAll(async () => {
  await bedrock?.stop();
  await gateway?.close();
});
beforeEach(() => {
  bedrock.requests.length = 0;
});

const config = (strict: boolean) => ({
  provider: 'bedrock',
  svcA_access_key_id: KEY.id,
  svcA_secret_access_key: KEY.secret,
  svcA_region: REGION,
  custom_host: bedrock.url,
  strict_wire_compliance: strict,
});

function chat(body: Record<string, unknown>, strict = false): Promise<Response> {
  return gateway.handle(
    new Request('http://gateway.test/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': JSON.stringify(config(strict)) },
      body: JSON.stringify({ model: CLAUDE, messages: [{ role: 'user', content: 'Hello there' }], ...body }),
    }),
  );
}

const sent = () => JSON.parse(bedrock.requests.at(-1)!.body) as Record<string, unknown>;

describe('thinking to a Claude model through Converse', () => {
  test('sent in additionalModelRequestFields, maxTokens above the budget; the signed reasoning back as the anthropic provider gives it', async () => {
    const res = await chat({ thinking: THINKING });
    expect(res.status).toBe(200);
    expect(sent().additionalModelRequestFields).toEqual({ thinking: THINKING });
    expect((sent().inferenceConfig as { maxTokens: number }).maxTokens).toBe(4096);
    const message = ((await res.json()) as { choices: { message: Record<string, unknown> }[] }).choices[0]!.message;
    const reasoning = 'The user wrote "Hello there". Answer briefly.';
    expect(message.reasoning_content).toBe(reasoning);
    const blocks = message.content_blocks as Record<string, string>[];
    expect(blocks[0]).toEqual({ type: 'thinking', thinking: reasoning, signature: expect.stringMatching(/^sig-/) });
    expect(blocks[1]).toEqual({ type: 'text', text: message.content as string });
  });

  test("the client's max_tokens is kept; a budget at or above the default gets room above it", async () => {
    expect((await chat({ thinking: THINKING, max_tokens: 3000 })).status).toBe(200);
    expect((sent().inferenceConfig as { maxTokens: number }).maxTokens).toBe(3000);
    expect((await chat({ thinking: { type: 'enabled', budget_tokens: 8000 } })).status).toBe(200);
    expect((sent().inferenceConfig as { maxTokens: number }).maxTokens).toBe(12096);
  });

  test('streamed: the reasoning arrives as reasoning_content deltas before the text, decoded from the event-stream bytes', async () => {
    const res = await chat({ thinking: THINKING, stream: true });
    expect(res.status).toBe(200);
    const events = (await res.text())
      .split('\n\n')
      .map((e) => e.replace(/^data: /, ''))
      .filter((e) => e && e !== '[DONE]')
      .map((e) => JSON.parse(e) as { choices: { delta: Record<string, string> }[] });
    const deltas = events.flatMap((e) => e.choices.map((c) => c.delta));
    const reasoning = deltas.map((d) => d.reasoning_content ?? '').join('');
    expect(reasoning).toBe('The user wrote "Hello there". Answer briefly.');
    const firstText = deltas.findIndex((d) => typeof d.content === 'string' && d.content !== '');
    const lastReasoning = deltas.findLastIndex((d) => d.reasoning_content !== undefined);
    expect(lastReasoning).toBeLessThan(firstText);
  });

  test('a thinking block handed back goes as a reasoning block first in its assistant turn', async () => {
    const messages = [
      { role: 'user', content: 'Hello there' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'Greet back.', signature: 'sig-abc' }, { type: 'redacted_thinking', data: 'ZW5jcnlwdGVk' }, { type: 'text', text: 'Hi!' }] },
      { role: 'user', content: 'How are you?' },
    ];
    expect((await chat({ thinking: THINKING, messages })).status).toBe(200);
    expect((sent().messages as { content: unknown[] }[])[1]!.content).toEqual([
      { reasoningContent: { reasoningText: { text: 'Greet back.', signature: 'sig-abc' } } },
      { reasoningContent: { redactedContent: 'ZW5jcnlwdGVk' } },
      { text: 'Hi!' },
    ]);
  });

  test('with strict wire compliance (the default) and for other model families, thinking is not sent, as for the anthropic provider', async () => {
    expect((await chat({ thinking: THINKING }, true)).status).toBe(200);
    expect(sent().additionalModelRequestFields).toBeUndefined();
    const strictAnswer = ((await (await chat({ thinking: THINKING }, true)).json()) as { choices: { message: Record<string, unknown> }[] }).choices[0]!.message;
    expect(strictAnswer.reasoning_content).toBeUndefined();
    expect(strictAnswer.content_blocks).toBeUndefined();
    expect((await chat({ model: LLAMA, thinking: THINKING })).status).toBe(200);
    expect(sent().additionalModelRequestFields).toBeUndefined();
  });

  test("a budget Bedrock refuses comes back as the provider's 400", async () => {
    const res = await chat({ thinking: { type: 'enabled', budget_tokens: 100 } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('budget_tokens');
  });
});
