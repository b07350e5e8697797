/**
 * Rate limits and guardrails on A2A agent calls, through the tool-call phase (docs/plugins.md, "Tool calls"), with
 * the official @a2a-js/sdk client through the gateway: a `tool_calls` policy refuses the third message (429, never
 * forwarded); the config the call names (`x-gateway-config`) judges the message with its input guardrails and the
 * answer (whole, or a stream event by event) with its output guardrails; the log rows say why.
 */
import { describe, expect, test } from 'bun:test';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { RequestLogServices } from '@gateway/plugin-request-log';
import { a2aPath, UPSTREAM_TOKEN, uniqueSlug, useAgentStack, userMessage } from './support.ts';

type View = Record<string, unknown>;

const send = (text: string) => ({ tenant: '', message: userMessage(text), configuration: undefined, metadata: undefined });

describe('the tool-call phase on agent calls [sqlite]', () => {
  const get = useAgentStack('sqlite');

  async function agent(): Promise<{ id: string; slug: string }> {
    const s = get();
    const integration = await s.admin<View>('POST', '/agent-integrations', {
      name: 'Echo',
      slug: uniqueSlug('phase'),
      url: s.upstream.url,
      workspace_id: s.defaultWorkspace,
      auth: { type: 'header', header_name: 'Authorization', header_value: `Bearer ${UPSTREAM_TOKEN}` },
    });
    expect(integration.status).toBe(201);
    const slug = uniqueSlug('phase');
    const server = await s.admin<View>('POST', '/agent-servers', { name: 'Echo', slug, agent_integration_id: integration.body.id });
    expect(server.status).toBe(201);
    return { id: String(server.body.id), slug };
  }

  /** The v0.3 client with the gateway key and these headers on every request. */
  function client(id: string, headers: Record<string, string> = {}) {
    const s = get();
    const base = s.fetchWith(s.keys.service);
    const fetchImpl = Object.assign(
      (input: string | URL | Request, init?: RequestInit) => {
        const merged = new Headers(init?.headers);
        for (const [name, value] of Object.entries(headers)) merged.set(name, value);
        return base(input, { ...init, headers: merged });
      },
      { preconnect: () => undefined },
    );
    return new LegacyJsonRpcTransport({ endpoint: a2aPath(id), fetchImpl });
  }

  async function logRows(id: string) {
    const s = get();
    await s.gw.service(RequestLogServices.queue).flush();
    const rows = await s.db.query(`SELECT status, endpoint, error_code, error_message, metadata FROM request_logs WHERE path = '/agent-servers/${id}/a2a' ORDER BY created_at, id`);
    return rows.map((r) => {
      const metadata = (typeof r.metadata === 'string' ? JSON.parse(r.metadata) : r.metadata) as Record<string, string>;
      return { status: Number(r.status), endpoint: r.endpoint, code: r.error_code, message: r.error_message as string | null, outcome: metadata.a2a_outcome, by: metadata.a2a_refused_by };
    });
  }

  test('a tool_calls policy of 2 per minute on the agent refuses the third message with 429, not forwarded, logged', async () => {
    const s = get();
    const { id, slug } = await agent();
    const policy = await s.admin<View>('POST', '/policies/rate-limits', { name: 'two agent calls', type: 'tool_calls', unit: 'rpm', value: 2, conditions: [{ key: 'provider', value: slug }] });
    expect(policy.status).toBe(201);
    const a2a = client(id);
    await a2a.sendMessage(send('echo one'));
    await a2a.sendMessage(send('echo two'));
    const before = s.upstream.calls.length;
    await expect(a2a.sendMessage(send('echo three'))).rejects.toThrow();
    expect(s.upstream.calls.length).toBe(before);
    // The raw answer: 429, Retry-After, a JSON-RPC error with the gateway's error in data.
    const raw = await s.fetchWith(s.keys.service)(a2aPath(id), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'r', method: 'message/send', params: { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'echo four' }] } } }),
    });
    expect(raw.status).toBe(429);
    expect(raw.headers.get('retry-after')).toBeTruthy();
    expect(await raw.json()).toMatchObject({ jsonrpc: '2.0', id: 'r', error: { code: -32000, data: { type: 'rate_limit_exceeded' } } });
    expect((await s.admin('DELETE', `/policies/rate-limits/${policy.body.id}`)).status).toBe(204);

    const rows = await logRows(id);
    expect(rows.map((r): unknown[] => [r.status, r.outcome, r.by])).toEqual([
      [200, 'ok', undefined],
      [200, 'ok', undefined],
      [429, 'refused', 'rate_limit_exceeded'],
      [429, 'refused', 'rate_limit_exceeded'],
    ]);
    expect(rows[2]?.code).toBe('a2a_refused');
    expect(rows[2]?.message).toContain('allows 2 tool calls per minute');
  });

  test('input guardrails block a message matching a regex; output guardrails withhold an answer, whole or streamed', async () => {
    const s = get();
    const { id } = await agent();
    const config = {
      input_guardrails: [{ id: 'no-rm', deny: true, 'default.regexMatch': { rule: 'rm\\s+-rf', not: true } }],
      output_guardrails: [{ id: 'no-classified', deny: true, 'default.regexMatch': { rule: '(?i)classified', not: true } }],
    };
    const a2a = client(id, { 'x-gateway-config': JSON.stringify(config) });
    const ok = await a2a.sendMessage(send('echo fine words'));
    expect('id' in ok).toBe(true);

    const before = s.upstream.calls.length;
    await expect(a2a.sendMessage(send('echo rm -rf /'))).rejects.toThrow(/denied by guardrail "no-rm"/);
    expect(s.upstream.calls.length).toBe(before);

    await expect(a2a.sendMessage(send('echo the CLASSIFIED plan'))).rejects.toThrow(/The tool result was denied by guardrail "no-classified"/);
    expect(s.upstream.calls.length).toBe(before + 1);

    // Streamed: the events before the refused one arrive; the refused one is replaced by the error, ending the stream.
    const words: unknown[] = [];
    const stream = async () => {
      for await (const event of a2a.sendMessageStream(send('echo fine CLASSIFIED later'))) {
        if (event.payload?.$case === 'artifactUpdate') words.push(event.payload.value.artifact?.parts[0]?.content?.value);
      }
    };
    await expect(stream()).rejects.toThrow(/The tool result was denied by guardrail "no-classified"/);
    expect(words).toEqual(['fine']);

    const rows = await logRows(id);
    expect(rows.map((r): unknown[] => [r.endpoint, r.status, r.outcome, r.by])).toEqual([
      ['a2a.message/send', 200, 'ok', undefined],
      ['a2a.message/send', 400, 'refused', 'guardrail_denied'],
      ['a2a.message/send', 400, 'refused', 'guardrail_denied'],
      ['a2a.message/stream', 400, 'refused', 'guardrail_denied'],
    ]);
    expect(rows[1]?.message).toBe('The tool call was denied by guardrail "no-rm"');
    expect(rows[2]?.message).toBe('The tool result was denied by guardrail "no-classified"');
  });
});
