// LOG_BODY_COMPRESSION (issue #26, item 4): with gzip or zstd, a gateway call's request and response bodies are
// stored compressed (the column holds the marked, shorter form) and GET /logs/:id shows them exactly as they were
// sent and answered, on SQLite and MariaDB; a small body stays as it is.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { RequestLogServices, requestLogs } from '@gateway/plugin-request-log';
import { eq } from '@gateway/sdk';
import { E2E_DIALECTS } from '../helpers/e2e-database.ts';
import { type OpenAIMock, startOpenAIMock } from '../mocks/openai-server.ts';
import { type Json, TEST_ADMIN_KEY, useSettingsGateway } from '../admin/settings-support.ts';

const cases = E2E_DIALECTS.flatMap((dialect) => (['gzip', 'zstd'] as const).map((method) => [dialect, method] as const));

describe.each(cases)('request and response bodies stored compressed (%s, %s)', (dialect, method) => {
  const gw = useSettingsGateway(dialect, { LOG_BODY_COMPRESSION: method });
  let mock: OpenAIMock;
  beforeAll(async () => {
    mock = await startOpenAIMock({ apiKey: null });
  });
  afterAll(() => mock.stop());

  async function call(content: string, answer: string): Promise<{ trace: string; sent: string; received: string }> {
    const trace = `logs-compressed-${crypto.randomUUID()}`;
    const sent = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
    mock.enqueue({
      kind: 'respond',
      body: { id: 'c1', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }] },
    });
    const res = await gw().gateway.handle(
      new Request('http://gateway.test/v1/chat/completions', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': TEST_ADMIN_KEY,
          'x-gateway-provider': 'openai',
          'x-gateway-custom-host': mock.url,
          'x-gateway-trace-id': trace,
          authorization: 'Bearer sk-test',
        },
        body: sent,
      }),
    );
    expect(res.status).toBe(200);
    return { trace, sent, received: await res.text() };
  }

  async function shown(trace: string): Promise<Json> {
    await gw().gateway.service(RequestLogServices.queue).flush();
    const list = await gw().call<{ data: Json[] }>('GET', `/logs?trace_id=${trace}`);
    expect(list.body.data.length).toBe(1);
    const detail = await gw().call<Json>('GET', `/logs/${String(list.body.data[0]!.id)}`);
    expect(detail.status).toBe(200);
    return detail.body;
  }

  const stored = async (trace: string) => {
    const [row] = await gw().database.select(requestLogs, { where: (c) => eq(c.trace_id, trace), fresh: true });
    return row!;
  };

  test('large bodies read back identical through the logs API, stored shorter', async () => {
    const content = `Résumé ☕ "quoted" \\ line\nbreak 😀 ${'the same words again and again '.repeat(200)}`;
    const { trace, sent, received } = await call(content, `Answer: ${'a long repetitive answer '.repeat(150)} ✓`);
    const log = await shown(trace);
    expect(log.request_body).toBe(sent);
    expect(log.response_body).toBe(received);
    const row = await stored(trace);
    expect(row.request_body!.startsWith(`\u0001${method}\u0001`)).toBe(true);
    expect(row.response_body!.startsWith(`\u0001${method}\u0001`)).toBe(true);
    expect(row.request_body!.length).toBeLessThan(sent.length / 4);
    expect(row.response_body!.length).toBeLessThan(received.length / 4);
  });

  test('a small body is stored as it is', async () => {
    const { trace, sent } = await call('hi', 'hello');
    const log = await shown(trace);
    expect(log.request_body).toBe(sent);
    expect((await stored(trace)).request_body).toBe(sent);
  });
});
