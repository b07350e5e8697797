/**
 * Issue #19, item 1: the gateway's stored responses on SQLite and MariaDB, through the openai SDK. A provider that
 * speaks only chat completions (deepseek, at the local OpenAI-format server) is translated; the same server's
 * /responses is the native path (openai). Each Response is a row of stored_responses in the caller's workspace, kept
 * across a gateway restart, continued by previous_response_id; truncation `disabled` over the context window is a
 * 400, `auto` drops the oldest earlier turns.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Gateway } from '@gateway/server';
import OpenAI from 'openai';
import { createE2EDatabase, E2E_DIALECTS, type E2EDatabase } from '../helpers/e2e-database.ts';
import { startInProcessGateway, TEST_ADMIN_KEY } from '../helpers/in-process.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';

const KEY = 'sk-store-provider';
const CONTEXT_ERROR = { kind: 'error', status: 400, code: 'context_length_exceeded', message: "This model's maximum context length is 16 tokens. However, your messages resulted in 40 tokens." } as const;

async function failure(call: PromiseLike<unknown>): Promise<{ status?: number; code?: string | null; param?: string | null } | 'resolved'> {
  try {
    await call;
    return 'resolved';
  } catch (error) {
    const e = error as { status?: number; code?: string | null; param?: string | null };
    return { status: e.status, code: e.code, param: e.param };
  }
}

describe.each(E2E_DIALECTS.map((d) => [d] as const))('stored responses [%s]', (dialect) => {
  let db: E2EDatabase;
  let gateway: Gateway;
  let mock: OpenAIMock;

  const start = async () => {
    gateway = await startInProcessGateway({ DATABASE_URL: db.url, RESPONSES_RETENTION_DAYS: '7' });
  };
  const sdk = (provider: 'openai' | 'deepseek') =>
    new OpenAI({
      baseURL: 'http://gateway.test/v1',
      apiKey: KEY,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': TEST_ADMIN_KEY, 'x-gateway-provider': provider, 'x-gateway-custom-host': mock.url },
      fetch: (url: string | URL | Request, init?: RequestInit) => gateway.handle(new Request(url instanceof URL ? url.href : (url as string), init)),
    });
  const chatMessages = () => (mock.requests.at(-1)?.json as { messages: { role: string; content: string | null }[] }).messages;

  beforeAll(async () => {
    db = await createE2EDatabase(dialect);
    mock = await startOpenAIMock({ apiKey: KEY });
    await start();
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
    await mock?.stop();
    await db?.drop();
  }, 60_000);

  test('a translated Response is a row in the caller workspace, for the retention set, and survives a restart', async () => {
    const before = Date.now();
    const res = await sdk('deepseek').responses.create({ model: 'gpt-4o-mini', input: 'Keep me' });
    expect(mock.requests.at(-1)?.path).toBe('/v1/chat/completions');
    expect(res.output_text).toBe('You said: Keep me');
    const [row] = await db.query(`SELECT id, workspace_id, provider, translated, created_at, expires_at FROM stored_responses WHERE id = '${res.id}'`);
    expect(row).toMatchObject({ id: res.id, provider: 'deepseek' });
    expect(Number(row?.translated)).toBe(1);
    expect(String(row?.workspace_id)).not.toBe('');
    expect(Number(row?.expires_at) - Number(row?.created_at)).toBe(7 * 86_400_000);
    expect(Number(row?.created_at)).toBeGreaterThanOrEqual(before);

    await gateway.close();
    // Closing flushed the request log: the call is there as a responses call, with the chat answer's usage.
    const logged = await db.query(`SELECT endpoint, provider, status, prompt_tokens, completion_tokens FROM request_logs WHERE endpoint = 'responses'`);
    expect(logged.map((r) => ({ endpoint: r.endpoint, provider: r.provider, status: Number(r.status), prompt_tokens: Number(r.prompt_tokens), completion_tokens: Number(r.completion_tokens) }))).toEqual([
      { endpoint: 'responses', provider: 'deepseek', status: 200, prompt_tokens: res.usage!.input_tokens, completion_tokens: res.usage!.output_tokens },
    ]);
    await start();
    const again = await sdk('deepseek').responses.retrieve(res.id);
    expect(again.output_text).toBe('You said: Keep me');
    const next = await sdk('deepseek').responses.create({ model: 'gpt-4o-mini', previous_response_id: res.id, input: 'And now?' });
    expect(chatMessages().map((m) => `${m.role}:${m.content}`)).toEqual(['user:Keep me', 'assistant:You said: Keep me', 'user:And now?']);
    expect(next.previous_response_id).toBe(res.id);
  }, 60_000);

  test('native and streamed: the provider Response is kept as it sent it', async () => {
    const stream = sdk('openai').responses.stream({ model: 'gpt-4o-mini', input: 'Native stream' });
    const final = await stream.finalResponse();
    expect(mock.requests.at(-1)?.path).toBe('/v1/responses');
    const [row] = await db.query(`SELECT provider, translated FROM stored_responses WHERE id = '${final.id}'`);
    expect(row?.provider).toBe('openai');
    expect(Number(row?.translated)).toBe(0);
    const kept = await sdk('openai').responses.retrieve(final.id);
    expect(kept.output_text).toBe('You said: Native stream');
    expect(kept.usage).toEqual(final.usage);
  });

  test('truncation disabled (the default) and the provider says the input is over the context window: 400', async () => {
    mock.enqueue(CONTEXT_ERROR);
    expect(await failure(sdk('deepseek').responses.create({ model: 'gpt-4o-mini', input: 'Too long' }))).toEqual({
      status: 400,
      code: 'context_length_exceeded',
      param: 'input',
    });
  });

  test('truncation auto: the oldest earlier turns are dropped until the provider takes it', async () => {
    const first = await sdk('deepseek').responses.create({ model: 'gpt-4o-mini', input: 'One' });
    const second = await sdk('deepseek').responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: 'Two' });
    const sentBefore = mock.requests.length;
    mock.enqueue(CONTEXT_ERROR);
    const third = await sdk('deepseek').responses.create({ model: 'gpt-4o-mini', previous_response_id: second.id, input: 'Three', truncation: 'auto' });
    expect(third.output_text).toBe('You said: Three');
    expect(mock.requests.length).toBe(sentBefore + 2);
    const tried = (mock.requests.at(-2)?.json as { messages: unknown[] }).messages.length;
    expect(tried).toBe(5);
    expect(chatMessages().map((m) => `${m.role}:${m.content}`)).toEqual(['user:Two', 'assistant:You said: Two', 'user:Three']);
  });

  test('a previous_response_id the store does not have: 404 naming it, no provider call', async () => {
    const sentBefore = mock.requests.length;
    expect(await failure(sdk('deepseek').responses.create({ model: 'gpt-4o-mini', previous_response_id: 'resp_unknown', input: 'x' }))).toMatchObject({
      status: 404,
      param: 'previous_response_id',
    });
    expect(mock.requests.length).toBe(sentBefore);
  });
});
