/**
 * The bedrock provider through an in-process gateway, against the local Bedrock test server (which verifies every
 * SigV4 signature): the wire format the provider sends, signature failures, answers that are not what the format
 * promises (502), exceptions and damage inside event streams, embeddings, passthrough signing.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import OpenAI from 'openai';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../../helpers/in-process.ts';
import { embeddingFor, expectedText } from '../../conformance/protocol.ts';
import { type BedrockServer, KEY, REGION, startBedrockServer, TEMP_KEY } from './server.ts';

const CLAUDE = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const TITAN = 'amazon.titan-embed-text-v2:0';

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

const config = (extra: Record<string, unknown> = {}) => ({
  provider: 'bedrock',
  svcA_access_key_id: KEY.id,
  svcA_secret_access_key: KEY.secret,
  svcA_region: REGION,
  custom_host: bedrock.url,
  ...extra,
});

function post(path: string, body: unknown, cfg: Record<string, unknown> = config()): Promise<Response> {
  return gateway.handle(
    new Request(`http://gateway.test/v1${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': JSON.stringify(cfg) },
      body: JSON.stringify(body),
    }),
  );
}

const chat = (body: Record<string, unknown>, cfg?: Record<string, unknown>) =>
  post('/chat/completions', { model: CLAUDE, messages: [{ role: 'user', content: 'Hello there' }], ...body }, cfg);

/** The `data:` payloads of an SSE answer. */
async function sse(res: Response): Promise<string[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .map((event) => event.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n'))
    .filter(Boolean);
}

function client(cfg: Record<string, unknown> = config()): OpenAI {
  return new OpenAI({
    baseURL: 'http://gateway.test/v1',
    apiKey: 'unused',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-config': JSON.stringify(cfg) },
    fetch: (url: string | URL | Request, init?: RequestInit) =>
      gateway.handle(url instanceof Request ? new Request(url, init) : new Request(url instanceof URL ? url.href : url, init)),
  });
}

describe('the wire format the provider sends', () => {
  test('Converse: the model id URL-encoded in the path, a Converse body, a SigV4 signature for bedrock', async () => {
    const res = await chat({ temperature: 0.5, max_tokens: 64 });
    expect(res.status).toBe(200);
    const sent = bedrock.requests[0];
    expect(sent?.method).toBe('POST');
    expect(sent?.path).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
    expect(JSON.parse(sent?.body ?? '')).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Hello there' }] }],
      inferenceConfig: { maxTokens: 64, temperature: 0.5 },
    });
    expect(sent?.headers['content-type']).toBe('application/json');
    expect(sent?.headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${KEY.id}/\\d{8}/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=[0-9a-f]{64}$`));
    expect(sent?.headers['x-amz-security-token']).toBeUndefined();
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe(expectedText({ lastUser: 'Hello there' }));
  });

  test('temporary credentials send and sign x-amz-security-token', async () => {
    const cfg = config({ svcA_access_key_id: TEMP_KEY.id, svcA_secret_access_key: TEMP_KEY.secret, svcA_session_token: TEMP_KEY.sessionToken });
    expect((await chat({}, cfg)).status).toBe(200);
    expect(bedrock.requests[0]?.headers['x-amz-security-token']).toBe(TEMP_KEY.sessionToken);
    expect(bedrock.requests[0]?.headers.authorization).toContain('SignedHeaders=host;x-amz-date;x-amz-security-token');
  });

  test('ConverseStream: the converse-stream path, decoded from the event-stream framing into OpenAI SSE', async () => {
    const res = await chat({ stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(bedrock.requests[0]?.path).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream');
    const data = await sse(res);
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { choices: { delta: { content?: string }; finish_reason: string | null }[]; usage?: { prompt_tokens: number } });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(expectedText({ lastUser: 'Hello there' }));
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(true);
    expect(chunks.at(-1)?.usage?.prompt_tokens).toBe(2);
  });

  test('without stream_options.include_usage the stream carries no usage chunk (ctx.body reaches the stream translator)', async () => {
    const data = await sse(await chat({ stream: true }));
    expect(data.at(-1)).toBe('[DONE]');
    expect(data.slice(0, -1).some((d) => 'usage' in (JSON.parse(d) as object))).toBe(false);
  });

  test('streamed JSON mode: the forced JSON tool arrives as content deltas, finish stop', async () => {
    const res = await chat({ messages: [{ role: 'user', content: 'Give JSON' }], response_format: { type: 'json_object' }, stream: true });
    const chunks = (await sse(res)).slice(0, -1).map((d) => JSON.parse(d) as { choices: { delta: { content?: string; tool_calls?: unknown }; finish_reason: string | null }[] });
    expect(JSON.parse(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''))).toEqual({ answer: 'Give JSON' });
    expect(chunks.some((c) => c.choices[0]?.delta.tool_calls)).toBe(false);
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(['stop']);
    expect(JSON.parse(bedrock.requests[0]?.body ?? '').toolConfig.toolChoice).toEqual({ tool: { name: 'gateway_json_response' } });
  });

  test('json_schema goes as outputConfig.textFormat; the JSON comes back as the content', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const res = await chat({ messages: [{ role: 'user', content: 'Give JSON' }], response_format: { type: 'json_schema', json_schema: { name: 'a', schema } } });
    expect(res.status).toBe(200);
    expect(JSON.parse(bedrock.requests[0]?.body ?? '').outputConfig.textFormat.structure.jsonSchema.schema).toBe(JSON.stringify(schema));
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(JSON.parse(body.choices[0]?.message.content ?? '')).toEqual({ answer: 'Give JSON' });
  });

  test('a model without system prompts (Mixtral) gets the system text in its first user turn', async () => {
    const res = await chat({ model: 'mistral.mixtral-8x7b-instruct-v0:1', messages: [{ role: 'system', content: 'Be brief' }, { role: 'user', content: 'Hi' }] });
    expect(res.status).toBe(200);
    expect(JSON.parse(bedrock.requests[0]?.body ?? '').messages[0].content).toEqual([{ text: 'Be brief' }, { text: 'Hi' }]);
  });

  test('passthrough calls (any other path) are signed as well', async () => {
    const res = await post(`/model/${encodeURIComponent(TITAN)}/invoke`, { inputText: 'raw call' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ embedding: embeddingFor('raw call'), inputTextTokenCount: 2 });
    expect(bedrock.requests[0]?.headers.authorization).toContain('/bedrock/aws4_request');
  });
});

describe('signatures the provider refuses: 403 with its own message', () => {
  test('a wrong secret', async () => {
    const res = await chat({}, config({ svcA_secret_access_key: 'wrong-secret' }));
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: { message: string; code: string }; provider: string };
    expect(body.error.message).toContain('The request signature we calculated does not match');
    expect(body.provider).toBe('bedrock');
  });

  test('temporary credentials without, or with a wrong, session token', async () => {
    const temp = config({ svcA_access_key_id: TEMP_KEY.id, svcA_secret_access_key: TEMP_KEY.secret });
    for (const cfg of [temp, { ...temp, svcA_session_token: 'not-the-token' }]) {
      const res = await chat({}, cfg);
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe('The security token included in the request is invalid.');
    }
  });

  test('a signing region other than the endpoint’s', async () => {
    const res = await chat({}, config({ svcA_region: 'eu-west-1' }));
    expect(res.status).toBe(403);
  });

  test('missing credentials or a bad region never reach the provider: 400', async () => {
    const noKeys = await chat({}, { provider: 'bedrock', custom_host: bedrock.url });
    expect(noKeys.status).toBe(400);
    expect(((await noKeys.json()) as { error: { message: string } }).error.message).toContain('svcA_access_key_id');
    const badRegion = await chat({}, config({ svcA_region: 'evil.example.com/x' }));
    expect(badRegion.status).toBe(400);
    expect(bedrock.requests).toHaveLength(0);
  });
});

describe('provider errors keep the provider’s status and message', () => {
  test('a ValidationException (temperature above 1) is relayed as 400', async () => {
    const res = await chat({ temperature: 1.5 });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; type: string; code: string }; provider: string };
    expect(body.error.message).toBe('inferenceConfig.temperature must be between 0 and 1');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.code).toBe('ValidationException');
    expect(body.provider).toBe('bedrock');
  });

  test('tools in a Llama stream: Bedrock refuses before the stream starts; the client gets its 400', async () => {
    const res = await chat({
      model: 'meta.llama3-1-70b-instruct-v1:0',
      stream: true,
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe("This model doesn't support tool use in streaming mode.");
  });
});

describe('answers that are not what the format promises: 502', () => {
  test('a Converse answer without output.message', async () => {
    const res = await chat({ model: 'test.malformed-answer' });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string }; provider: string };
    expect(body.error.code).toBe('upstream_invalid_response');
    expect(body.error.message).toContain('output.message');
    expect(body.provider).toBe('bedrock');
  });

  test('an answer that is not JSON', async () => {
    const res = await chat({ model: 'test.not-json' });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_invalid_response');
  });

  test('an embedding answer without a vector', async () => {
    const res = await post('/embeddings', { model: TITAN, input: 'test.embed-malformed' });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('upstream_invalid_response');
    expect(body.error.message).toContain('embedding is not a vector');
  });
});

describe('streams that break: an error frame and no [DONE]', () => {
  async function brokenStream(model: string) {
    const res = await chat({ model, stream: true });
    expect(res.status).toBe(200);
    const data = await sse(res);
    expect(data).not.toContain('[DONE]');
    const last = JSON.parse(data.at(-1) ?? '{}') as { error?: { message: string; code: string; type: string } };
    expect(last.error).toBeDefined();
    return { data, error: last.error as { message: string; code: string; type: string } };
  }

  test('an exception message (throttlingException): the text before it, then the provider’s message', async () => {
    const { data, error } = await brokenStream('test.stream-exception');
    expect(data.slice(0, -1).map((d) => (JSON.parse(d) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '').join('')).toBe('partial ');
    expect(error.message).toBe('Too many tokens, please wait before trying again.');
    expect(error.code).toBe('ThrottlingException');
    expect(error.type).toBe('rate_limit_error');
  });

  test('a frame with a corrupted CRC', async () => {
    const { error } = await brokenStream('test.stream-bad-crc');
    expect(error.code).toBe('upstream_invalid_response');
    expect(error.message).toContain('CRC mismatch');
  });

  test('an event whose payload is not JSON', async () => {
    const { error } = await brokenStream('test.stream-bad-json');
    expect(error.code).toBe('upstream_invalid_response');
    expect(error.message).toContain('not JSON');
  });

  test('a stream cut in the middle of a message', async () => {
    const { error } = await brokenStream('test.stream-cut');
    expect(error.code).toBe('stream_interrupted');
  });
});

describe('embeddings through InvokeModel', () => {
  test('Titan: one input, floats and base64 (the SDK default) alike; the Titan body on the wire', async () => {
    const sdk = client();
    const floats = await sdk.embeddings.create({ model: TITAN, input: 'a', encoding_format: 'float' });
    expect(floats.data[0]?.embedding).toEqual(embeddingFor('a'));
    expect(floats.usage).toEqual({ prompt_tokens: 1, total_tokens: 1 });
    const b64 = await sdk.embeddings.create({ model: TITAN, input: ['ccc'], dimensions: 256 });
    (b64.data[0]?.embedding as number[]).forEach((v, i) => expect(v).toBeCloseTo(embeddingFor('ccc')[i] as number, 5));
    expect(bedrock.requests.map((r) => r.path)).toEqual([`/model/amazon.titan-embed-text-v2%3A0/invoke`, `/model/amazon.titan-embed-text-v2%3A0/invoke`]);
    expect(JSON.parse(bedrock.requests[1]?.body ?? '')).toEqual({ inputText: 'ccc', dimensions: 256 });
  });

  test('Titan with several inputs: 400, and no call made', async () => {
    const res = await post('/embeddings', { model: TITAN, input: ['a', 'bb'] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('one text per call');
    expect(bedrock.requests).toHaveLength(0);
  });

  test('Cohere: one batched call, input_type passed on', async () => {
    const res = await post('/embeddings', { model: 'cohere.embed-multilingual-v3', input: ['a', 'bb', 'ccc'], input_type: 'clustering', encoding_format: 'float' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { index: number; embedding: number[] }[] };
    expect(body.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(body.data[2]?.embedding).toEqual(embeddingFor('ccc'));
    expect(bedrock.requests).toHaveLength(1);
    expect(JSON.parse(bedrock.requests[0]?.body ?? '')).toEqual({ texts: ['a', 'bb', 'ccc'], input_type: 'clustering' });
  });
});
